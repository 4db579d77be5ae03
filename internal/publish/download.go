package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/tokenpulse/tokenpulse/internal/retry"
)

// Limits bound what Download writes to the local disk.
type Limits struct {
	// FileBytes is the largest object downloaded; a larger one is refused.
	FileBytes int64
	// Files is the most objects downloaded; more is refused.
	Files int
}

// Download copies the objects under src's prefix whose slash-separated
// names below it keep accepts into dir, each to dir/NAME, and returns
// them in listing (key) order. The whole prefix is listed first, and an
// object beyond lim (or with a name that would leave dir) is refused
// before anything is written; a body longer than the listing said is
// refused too. A download that fails is retried as Options say (the
// credentials, endpoint and retry policy are Upload's). Objects already
// written stay in dir on error.
func Download(ctx context.Context, src Dest, dir string, keep func(name string) bool, lim Limits, opts Options) ([]Object, error) {
	if err := checkBucket(src.Bucket); err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	cfg, err := resolve(opts)
	if err != nil {
		return nil, fmt.Errorf("download from %s: %w", src, err)
	}
	client, err := cfg.client(opts)
	if err != nil {
		return nil, fmt.Errorf("download from %s: %w", src, err)
	}
	prefix := ""
	if src.Prefix != "" {
		prefix = src.Prefix + "/"
	}
	var objs []Object
	for o := range client.ListObjects(ctx, src.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("list %s: %w", src, o.Err)
		}
		name := strings.TrimPrefix(o.Key, prefix)
		if !keep(name) {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return nil, fmt.Errorf("download from %s: object %q would leave the directory", src, o.Key)
		}
		if o.Size > lim.FileBytes {
			return nil, fmt.Errorf("download from %s: %s is %d bytes, more than the %d allowed", src, o.Key, o.Size, lim.FileBytes)
		}
		if len(objs) == lim.Files {
			return nil, fmt.Errorf("download from %s: more than %d objects to download", src, lim.Files)
		}
		objs = append(objs, Object{Name: name, Key: o.Key, Size: o.Size, URL: cfg.objectURL(src.Bucket, o.Key)})
	}
	policy := opts.Retry.Resolved()
	sleep := opts.sleep
	if sleep == nil {
		sleep = retry.Sleep
	}
	for _, o := range objs {
		file := filepath.Join(dir, filepath.FromSlash(o.Name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return nil, err
		}
		for try := 1; ; try++ {
			err = getOnce(ctx, client, src.Bucket, o.Key, file, o.Size)
			if err == nil {
				break
			}
			if !policy.Again(try) || errors.Is(err, errTooLong) || !retryable(ctx, err) {
				return nil, fmt.Errorf("download %s (after %d attempts): %w", o.Key, try, err)
			}
			if serr := sleep(ctx, policy.Wait(try)); serr != nil {
				return nil, fmt.Errorf("download %s: %w (then: %w)", o.Key, err, serr)
			}
		}
	}
	return objs, nil
}

// errTooLong is a body longer than its listed size.
var errTooLong = errors.New("the object is longer than listed")

// getOnce writes the object to file, refusing more than size bytes.
func getOnce(ctx context.Context, client *minio.Client, bucket, key, file string, size int64) error {
	obj, err := client.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(obj, size+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > size {
		err = errTooLong
	}
	if err == nil && n < size {
		err = fmt.Errorf("short body: %d bytes of %d", n, size)
	}
	return err
}
