package publish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

// runDir writes a real run directory: run.json and every report of the
// seeded stall run, as tokenpulse bench leaves it.
func runDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run := reporttest.StallRun()
	if err := run.Write(filepath.Join(dir, "run.json")); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteAll(dir, run, report.Options{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot maps each file under dir to its hash and modification time, to
// show that publishing leaves the local files alone.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[p] = fmt.Sprintf("%x %s %s", sum, st.ModTime(), st.Mode())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newTestClient(t *testing.T, endpoint, access, secret string) *minio.Client {
	t.Helper()
	host, secure, err := parseEndpoint(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(access, secret, ""),
		Secure:       secure,
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkUploaded downloads every object of res and compares it byte for
// byte, and its content type, with the local file.
func checkUploaded(t *testing.T, c *minio.Client, res *Result, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, o := range res.Objects {
		want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(o.Name)))
		if err != nil {
			t.Fatal(err)
		}
		obj, err := c.GetObject(ctx, res.Dest.Bucket, o.Key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", o.Key, err)
		}
		got, err := io.ReadAll(obj)
		if err != nil {
			t.Fatalf("read %s: %v", o.Key, err)
		}
		st, err := obj.Stat()
		obj.Close()
		if err != nil {
			t.Fatalf("stat %s: %v", o.Key, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: downloaded %d bytes that differ from the local %d bytes", o.Key, len(got), len(want))
		}
		if o.Size != int64(len(want)) {
			t.Errorf("%s: Object.Size = %d, want %d", o.Key, o.Size, len(want))
		}
		if st.ContentType != o.ContentType || st.ContentType != ContentType(o.Name) {
			t.Errorf("%s: stored content type %q, object says %q, want %q", o.Key, st.ContentType, o.ContentType, ContentType(o.Name))
		}
	}
}
