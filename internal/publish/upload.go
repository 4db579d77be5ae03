package publish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/tokenpulse/tokenpulse/internal/retry"
)

// Options tune Upload. The zero value reads everything from the
// environment and is ready to use.
type Options struct {
	// Endpoint is the S3 server's URL, "http://127.0.0.1:9000" or
	// "https://s3.example.com". Empty means AWS_ENDPOINT_URL_S3, then
	// AWS_ENDPOINT_URL, then AWS itself. A URL with http:// is spoken to
	// in plain HTTP; a bare HOST:PORT means HTTPS.
	Endpoint string
	// Region is the bucket's region. Empty means AWS_REGION, then
	// AWS_DEFAULT_REGION; for a custom endpoint then "us-east-1", and for
	// AWS the region is looked up from the bucket.
	Region string
	// AccessKeyID, SecretAccessKey and SessionToken are the credentials.
	// When AccessKeyID is empty they come from AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, then from the shared
	// credentials file (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE).
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// PresignExpiry, when positive, makes ReportURL a presigned GET URL
	// valid that long (at most 7 days), for private buckets. Otherwise
	// ReportURL is the plain object URL.
	PresignExpiry time.Duration
	// Retry is how many times a file is tried and how long to wait between
	// attempts; the zero Policy is retry's default (5 attempts, 1 s
	// doubling up to 30 s).
	Retry retry.Policy
	// Progress, when set, is called after each file, uploaded or given up:
	// done files of total so far, and the file's slash-separated name.
	Progress func(done, total int, name string)
	// Getenv reads the environment (default os.Getenv); tests replace it.
	Getenv func(string) string
	// Transport is the HTTP transport (default: minio-go's).
	Transport http.RoundTripper

	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// Object is one uploaded file.
type Object struct {
	// Name is the file's slash-separated path under the directory.
	Name string
	// Key is the object key.
	Key string
	// URL is the plain object URL (readable only where the bucket allows).
	URL string
	// Size is the number of bytes uploaded.
	Size int64
	// ContentType is the Content-Type stored with the object.
	ContentType string
}

// Result is what Upload did.
type Result struct {
	// Dest is where the files went.
	Dest Dest
	// Objects are the files that uploaded, in upload order.
	Objects []Object
	// ReportURL is the address of report.html (presigned when
	// Options.PresignExpiry is set), or "" when there was none or it did
	// not upload.
	ReportURL string
}

// Failure is one file that did not upload.
type Failure struct {
	// Name is the file's slash-separated path under the directory.
	Name string
	// Attempts is how many times it was tried.
	Attempts int
	// Err is the last error.
	Err error
}

// UploadError is returned by Upload when some files did not upload. The
// files that did are in the Result returned beside it.
type UploadError struct {
	Dest   Dest
	Total  int
	Failed []Failure
}

// Error lists every file that did not upload, with its last error.
func (e *UploadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "publish to %s: %d of %d files did not upload:", e.Dest, len(e.Failed), e.Total)
	for i, f := range e.Failed {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s (after %d attempts: %v)", f.Name, f.Attempts, f.Err)
	}
	return b.String()
}

// Unwrap returns the errors of the failed files.
func (e *UploadError) Unwrap() []error {
	out := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		out[i] = f.Err
	}
	return out
}

// ReportName is the file whose URL Result.ReportURL gives.
const ReportName = "report.html"

// Upload uploads every regular file under dir (hidden files and symbolic
// links are skipped) to dest: run.json first, report.html last, the rest in
// name order. A file that fails is retried as Options say; the others are
// tried regardless. When any file did not upload the error is an
// *UploadError naming each; the Result then lists the files that did.
// Errors that come before any upload (no files, no credentials, a bad
// endpoint) are returned with a nil Result.
func Upload(ctx context.Context, dest Dest, dir string, opts Options) (*Result, error) {
	if err := checkBucket(dest.Bucket); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	names, err := listFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", dir, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("publish %s: no files to upload", dir)
	}
	cfg, err := resolve(opts)
	if err != nil {
		return nil, fmt.Errorf("publish to %s: %w", dest, err)
	}
	client, err := cfg.client(opts)
	if err != nil {
		return nil, fmt.Errorf("publish to %s: %w", dest, err)
	}
	policy := opts.Retry.Resolved()
	sleep := opts.sleep
	if sleep == nil {
		sleep = retry.Sleep
	}

	res := &Result{Dest: dest}
	uerr := &UploadError{Dest: dest, Total: len(names)}
	for i, name := range names {
		if err := ctx.Err(); err != nil {
			uerr.Failed = append(uerr.Failed, Failure{Name: name, Err: err})
			continue
		}
		obj, tries, err := uploadFile(ctx, client, dest, dir, name, policy, sleep)
		if err != nil {
			uerr.Failed = append(uerr.Failed, Failure{Name: name, Attempts: tries, Err: err})
		} else {
			obj.URL = cfg.objectURL(dest.Bucket, obj.Key)
			res.Objects = append(res.Objects, obj)
			if name == ReportName {
				res.ReportURL = obj.URL
			}
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(names), name)
		}
	}
	if res.ReportURL != "" && opts.PresignExpiry > 0 {
		u, err := client.PresignedGetObject(ctx, dest.Bucket, dest.Key(ReportName), opts.PresignExpiry, nil)
		if err != nil {
			uerr.Failed = append(uerr.Failed, Failure{Name: ReportName + " (presigned link)", Attempts: 1, Err: err})
		} else {
			res.ReportURL = u.String()
		}
	}
	if len(uerr.Failed) > 0 {
		return res, uerr
	}
	return res, nil
}

func uploadFile(ctx context.Context, client *minio.Client, dest Dest, dir, name string, policy retry.Policy, sleep func(context.Context, time.Duration) error) (Object, int, error) {
	key := dest.Key(name)
	ctype := ContentType(name)
	var err error
	for try := 1; ; try++ {
		var size int64
		size, err = putOnce(ctx, client, dest.Bucket, key, filepath.Join(dir, filepath.FromSlash(name)), ctype)
		if err == nil {
			return Object{Name: name, Key: key, Size: size, ContentType: ctype}, try, nil
		}
		if !policy.Again(try) || !retryable(ctx, err) {
			return Object{}, try, err
		}
		if serr := sleep(ctx, policy.Wait(try)); serr != nil {
			return Object{}, try, fmt.Errorf("%w (then: %w)", err, serr)
		}
	}
}

// putOnce uploads one file and checks that the server took all its bytes.
func putOnce(ctx context.Context, client *minio.Client, bucket, key, file, ctype string) (int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	info, err := client.PutObject(ctx, bucket, key, f, st.Size(), minio.PutObjectOptions{ContentType: ctype})
	if err != nil {
		return 0, err
	}
	if info.Size != st.Size() {
		return 0, fmt.Errorf("server stored %d bytes of %d", info.Size, st.Size())
	}
	return st.Size(), nil
}

// retryable reports whether another attempt may succeed after err.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return false
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "SlowDown", "RequestTimeout", "RequestTimeTooSkewed", "InternalError", "ServiceUnavailable",
		"Throttling", "ThrottlingException", "RequestLimitExceeded", "ExpiredToken":
		return true
	}
	switch s := resp.StatusCode; {
	case s == 0:
		return true // a transport error or a short write: try again
	case s == http.StatusTooManyRequests, s == http.StatusRequestTimeout, s >= 500:
		return true
	}
	return false
}

// listFiles returns the slash-separated names of the regular files under
// dir, run.json first and report.html last.
func listFiles(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	rank := func(n string) int {
		switch n {
		case "run.json":
			return 0
		case ReportName:
			return 2
		}
		return 1
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rank(names[i]), rank(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names, nil
}

// ContentType returns the Content-Type stored with the file name: the
// report's own types first, then the system's table, then
// application/octet-stream.
func ContentType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		return "application/json"
	case ".html", ".htm":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".xml":
		return "application/xml"
	case ".md":
		return "text/markdown; charset=utf-8"
	case ".txt":
		return "text/plain; charset=utf-8"
	case ".png":
		return "image/png"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// config is Options resolved against the environment.
type config struct {
	host   string // HOST[:PORT]
	secure bool
	custom bool // an endpoint other than AWS
	region string
	lookup minio.BucketLookupType
	creds  *credentials.Credentials
}

func resolve(o Options) (config, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	first := func(vals ...string) string {
		for _, v := range vals {
			if v != "" {
				return v
			}
		}
		return ""
	}
	var c config
	ep := first(o.Endpoint, getenv("AWS_ENDPOINT_URL_S3"), getenv("AWS_ENDPOINT_URL"))
	c.region = first(o.Region, getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))
	if ep == "" {
		c.host, c.secure, c.lookup = "s3.amazonaws.com", true, minio.BucketLookupAuto
	} else {
		host, secure, err := parseEndpoint(ep)
		if err != nil {
			return config{}, err
		}
		c.host, c.secure, c.custom, c.lookup = host, secure, true, minio.BucketLookupPath
		if c.region == "" {
			c.region = "us-east-1"
		}
	}
	switch {
	case o.AccessKeyID != "":
		c.creds = credentials.NewStaticV4(o.AccessKeyID, o.SecretAccessKey, o.SessionToken)
	case getenv("AWS_ACCESS_KEY_ID") != "":
		c.creds = credentials.NewStaticV4(getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN"))
	default:
		c.creds = credentials.NewFileAWSCredentials("", getenv("AWS_PROFILE"))
		v, err := c.creds.Get()
		if err == nil && v.AccessKeyID == "" {
			err = errors.New("the file names no access key")
		}
		if err != nil {
			return config{}, fmt.Errorf("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a shared credentials file): %w", err)
		}
	}
	return c, nil
}

// client is the minio-go client of c: attempts are counted by the
// caller, with a backoff tests can see.
func (c config) client(o Options) (*minio.Client, error) {
	return minio.New(c.host, &minio.Options{
		Creds:        c.creds,
		Secure:       c.secure,
		Region:       c.region,
		BucketLookup: c.lookup,
		Transport:    o.Transport,
		MaxRetries:   1,
	})
}

// parseEndpoint reads "http://host:port", "https://host" or "host:port"
// (HTTPS).
func parseEndpoint(ep string) (host string, secure bool, err error) {
	if !strings.Contains(ep, "://") {
		ep = "https://" + ep
	}
	u, err := url.Parse(ep)
	if err != nil {
		return "", false, fmt.Errorf("endpoint %q: %w", ep, err)
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return "", false, fmt.Errorf("endpoint %q: want http:// or https://", ep)
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false, fmt.Errorf("endpoint %q: want SCHEME://HOST[:PORT] and nothing more", ep)
	}
	return u.Host, u.Scheme == "https", nil
}

// objectURL is the plain URL of an object: path-style on a custom endpoint,
// virtual-hosted on AWS (path-style for bucket names with dots, which do
// not match AWS's certificate).
func (c config) objectURL(bucket, key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	k := strings.Join(segs, "/")
	scheme := "https"
	if !c.secure {
		scheme = "http"
	}
	if c.custom {
		return fmt.Sprintf("%s://%s/%s/%s", scheme, c.host, bucket, k)
	}
	host := "s3.amazonaws.com"
	if c.region != "" && c.region != "us-east-1" {
		host = "s3." + c.region + ".amazonaws.com"
	}
	if strings.Contains(bucket, ".") {
		return fmt.Sprintf("https://%s/%s/%s", host, bucket, k)
	}
	return fmt.Sprintf("https://%s.%s/%s", bucket, host, k)
}
