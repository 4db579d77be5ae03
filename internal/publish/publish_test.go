package publish

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/tokenpulse/tokenpulse/internal/retry"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		want     Dest
		wantErr  string
	}{
		{"bucket and prefix", "s3://perf-runs/nightly/2026-11-29", Dest{"perf-runs", "nightly/2026-11-29"}, ""},
		{"bucket only", "s3://perf-runs", Dest{"perf-runs", ""}, ""},
		{"slashes trimmed", "s3://perf-runs//a///b/", Dest{"perf-runs", "a/b"}, ""},
		{"dotted bucket", "s3://runs.example.com/x", Dest{"runs.example.com", "x"}, ""},
		{"wrong scheme", "https://perf-runs/x", Dest{}, "want s3://"},
		{"no scheme", "perf-runs/x", Dest{}, "want s3://"},
		{"upper-case bucket", "s3://Perf/x", Dest{}, "lower-case"},
		{"short bucket", "s3://ab/x", Dest{}, "3 to 63"},
		{"hyphen at end", "s3://runs-/x", Dest{}, "not at either end"},
		{"credentials in URL", "s3://key:secret@runs/x", Dest{}, "no credentials"},
		{"query", "s3://runs/x?region=eu", Dest{}, "no credentials, port, query"},
		{"dot dot", "s3://runs/../x", Dest{"runs", "x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if back, err := Parse(got.String()); err != nil || back != got {
				t.Errorf("Parse(%q.String()) = %+v, %v; want a round trip", got, back, err)
			}
		})
	}
}

func TestContentType(t *testing.T) {
	for name, want := range map[string]string{
		"run.json":                         "application/json",
		"report.html":                      "text/html; charset=utf-8",
		"junit.xml":                        "application/xml",
		"methodology.md":                   "text/markdown; charset=utf-8",
		"report.txt":                       "text/plain; charset=utf-8",
		"charts/timeline-7-complex-02.svg": "image/svg+xml",
		"charts/GAPS.SVG":                  "image/svg+xml",
		"blob.unknownext":                  "application/octet-stream",
	} {
		t.Run(name, func(t *testing.T) {
			if got := ContentType(name); got != want {
				t.Errorf("ContentType(%q) = %q, want %q", name, got, want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name       string
		opts       Options
		env        map[string]string
		wantHost   string
		wantSecure bool
		wantRegion string
		wantURL    string // objectURL("runs", "p/report.html")
	}{
		{
			name: "AWS with region", env: map[string]string{"AWS_REGION": "eu-west-1"},
			wantHost: "s3.amazonaws.com", wantSecure: true, wantRegion: "eu-west-1",
			wantURL: "https://runs.s3.eu-west-1.amazonaws.com/p/report.html",
		},
		{
			name: "AWS default region variable", env: map[string]string{"AWS_DEFAULT_REGION": "us-east-1"},
			wantHost: "s3.amazonaws.com", wantSecure: true, wantRegion: "us-east-1",
			wantURL: "https://runs.s3.amazonaws.com/p/report.html",
		},
		{
			name:     "MinIO from AWS_ENDPOINT_URL_S3 over http",
			env:      map[string]string{"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000", "AWS_ENDPOINT_URL": "http://elsewhere:1"},
			wantHost: "127.0.0.1:9000", wantSecure: false, wantRegion: "us-east-1",
			wantURL: "http://127.0.0.1:9000/runs/p/report.html",
		},
		{
			name: "generic AWS_ENDPOINT_URL", env: map[string]string{"AWS_ENDPOINT_URL": "https://s3.example.com", "AWS_REGION": "auto"},
			wantHost: "s3.example.com", wantSecure: true, wantRegion: "auto",
			wantURL: "https://s3.example.com/runs/p/report.html",
		},
		{
			name: "option beats environment", opts: Options{Endpoint: "storage.local:9443", Region: "r1"},
			env:      map[string]string{"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000", "AWS_REGION": "eu-west-1"},
			wantHost: "storage.local:9443", wantSecure: true, wantRegion: "r1",
			wantURL: "https://storage.local:9443/runs/p/report.html",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
			for k, v := range tt.env {
				env[k] = v
			}
			tt.opts.Getenv = func(k string) string { return env[k] }
			c, err := resolve(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.host != tt.wantHost || c.secure != tt.wantSecure || c.region != tt.wantRegion {
				t.Errorf("got host %q secure %v region %q, want %q %v %q", c.host, c.secure, c.region, tt.wantHost, tt.wantSecure, tt.wantRegion)
			}
			if got := c.objectURL("runs", "p/report.html"); got != tt.wantURL {
				t.Errorf("objectURL = %q, want %q", got, tt.wantURL)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "missing"))
	t.Setenv("HOME", t.TempDir())
	none := func(string) string { return "" }
	if _, err := resolve(Options{Getenv: none}); err == nil || !strings.Contains(err.Error(), "no credentials") {
		t.Errorf("without credentials: error = %v, want one saying no credentials", err)
	}
	for _, ep := range []string{"ftp://host", "http://host/path", "http://", "http://u:p@host"} {
		if _, err := resolve(Options{Getenv: none, Endpoint: ep, AccessKeyID: "k"}); err == nil {
			t.Errorf("endpoint %q: no error, want one", ep)
		}
	}
}

func TestObjectURLEscapesKeys(t *testing.T) {
	c := config{host: "127.0.0.1:9000", secure: true, custom: true}
	got := c.objectURL("runs", "a b/charts/timeline-1-x#y.svg")
	want := "https://127.0.0.1:9000/runs/a%20b/charts/timeline-1-x%23y.svg"
	if got != want {
		t.Errorf("objectURL = %q, want %q", got, want)
	}
}

// fakeS3 serves gofakes3 behind a hook that may answer a request itself.
type fakeS3 struct {
	*httptest.Server
	mu   sync.Mutex
	hook func(r *http.Request) (status int, body string, ok bool)
	puts map[string]int // PUTs seen per path
}

func newFakeS3(t *testing.T, buckets ...string) *fakeS3 {
	t.Helper()
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	faker := gofakes3.New(backend)
	f := &fakeS3{puts: map[string]int{}}
	inner := faker.Server()
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		if r.Method == http.MethodPut {
			f.puts[r.URL.Path]++
		}
		hook := f.hook
		f.mu.Unlock()
		if hook != nil {
			if status, body, ok := hook(r); ok {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(status)
				io.WriteString(w, body)
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeS3) putCount(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.puts[path]
}

func (f *fakeS3) opts(sleeps *[]time.Duration) Options {
	return Options{
		Endpoint:        f.URL,
		AccessKeyID:     "test-key",
		SecretAccessKey: "test-secret",
		Getenv:          func(string) string { return "" },
		Retry:           retry.Policy{Backoff: 100 * time.Millisecond},
		sleep: func(_ context.Context, d time.Duration) error {
			*sleeps = append(*sleeps, d)
			return nil
		},
	}
}

func TestUploadToFakeS3(t *testing.T) {
	s3 := newFakeS3(t, "perf-runs")
	dir := runDir(t)
	if err := os.WriteFile(filepath.Join(dir, ".run-tmp.json"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	dest, err := Parse("s3://perf-runs/nightly/2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	var sleeps []time.Duration
	opts := s3.opts(&sleeps)
	var progress []string
	opts.Progress = func(done, total int, name string) {
		progress = append(progress, name)
		if done != len(progress) {
			t.Errorf("progress done = %d after %d calls", done, len(progress))
		}
	}
	res, err := Upload(context.Background(), dest, dir, opts)
	if err != nil {
		t.Fatal(err)
	}

	names, err := listFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var uploaded []string
	for _, o := range res.Objects {
		uploaded = append(uploaded, o.Name)
		if want := "nightly/2026-11-29/" + o.Name; o.Key != want {
			t.Errorf("key of %s = %q, want %q", o.Name, o.Key, want)
		}
	}
	if !reflect.DeepEqual(uploaded, names) || !reflect.DeepEqual(progress, names) {
		t.Errorf("uploaded %v, progress %v; want every file once: %v", uploaded, progress, names)
	}
	if uploaded[0] != "run.json" || uploaded[len(uploaded)-1] != "report.html" {
		t.Errorf("upload order %v: want run.json first and report.html last", uploaded)
	}
	for _, want := range []string{"junit.xml", "methodology.md", "charts/timeline-7-complex-02.svg", "charts/gaps.svg"} {
		if !strings.Contains(strings.Join(uploaded, " "), want) {
			t.Errorf("uploaded %v: %s missing", uploaded, want)
		}
	}
	for _, n := range uploaded {
		if strings.Contains(n, ".run-tmp") {
			t.Errorf("hidden file %s was uploaded", n)
		}
	}
	if len(sleeps) != 0 {
		t.Errorf("slept %v with no failure", sleeps)
	}
	checkUploaded(t, newTestClient(t, s3.URL, "test-key", "test-secret"), res, dir)

	wantURL := s3.URL + "/perf-runs/nightly/2026-11-29/report.html"
	if res.ReportURL != wantURL {
		t.Errorf("ReportURL = %q, want %q", res.ReportURL, wantURL)
	}
	resp, err := http.Get(res.ReportURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	local, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if resp.StatusCode != 200 || string(body) != string(local) {
		t.Errorf("GET ReportURL: status %d, %d bytes; want 200 and the local report (%d bytes)", resp.StatusCode, len(body), len(local))
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("local files changed by publishing")
	}
}

func TestUploadPresignedReportURL(t *testing.T) {
	s3 := newFakeS3(t, "perf-runs")
	dir := runDir(t)
	var sleeps []time.Duration
	opts := s3.opts(&sleeps)
	opts.PresignExpiry = time.Hour
	res, err := Upload(context.Background(), Dest{Bucket: "perf-runs", Prefix: "p"}, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.ReportURL, s3.URL+"/perf-runs/p/report.html?") ||
		!strings.Contains(res.ReportURL, "X-Amz-Signature=") || !strings.Contains(res.ReportURL, "X-Amz-Expires=3600") {
		t.Errorf("ReportURL = %q, want a presigned URL of p/report.html valid 3600 s", res.ReportURL)
	}
	resp, err := http.Get(res.ReportURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("GET presigned: %d %q, want 200 text/html", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

const (
	slowDown     = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`
	accessDenied = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`
)

func TestUploadRetriesWithBackoff(t *testing.T) {
	s3 := newFakeS3(t, "perf-runs")
	const flaky = "/perf-runs/p/charts/gaps.svg"
	s3.hook = func(r *http.Request) (int, string, bool) {
		// The first two PUTs of one chart meet a busy server.
		if r.Method == http.MethodPut && r.URL.Path == flaky && s3.putCount(flaky) <= 2 {
			return http.StatusServiceUnavailable, slowDown, true
		}
		return 0, "", false
	}
	dir := runDir(t)
	var sleeps []time.Duration
	res, err := Upload(context.Background(), Dest{Bucket: "perf-runs", Prefix: "p"}, dir, s3.opts(&sleeps))
	if err != nil {
		t.Fatalf("Upload: %v, want success after retries", err)
	}
	if got := s3.putCount(flaky); got != 3 {
		t.Errorf("PUTs of gaps.svg = %d, want 3", got)
	}
	if want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}; !reflect.DeepEqual(sleeps, want) {
		t.Errorf("backoff waits = %v, want %v", sleeps, want)
	}
	checkUploaded(t, newTestClient(t, s3.URL, "test-key", "test-secret"), res, dir)
}

func TestUploadNamesWhatDidNotUpload(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		body         string
		wantAttempts int
	}{
		{"server keeps failing", http.StatusServiceUnavailable, slowDown, 4},
		{"access denied is not retried", http.StatusForbidden, accessDenied, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s3 := newFakeS3(t, "perf-runs")
			const bad = "/perf-runs/p/junit.xml"
			s3.hook = func(r *http.Request) (int, string, bool) {
				if r.Method == http.MethodPut && r.URL.Path == bad {
					return tt.status, tt.body, true
				}
				return 0, "", false
			}
			dir := runDir(t)
			before := snapshot(t, dir)
			var sleeps []time.Duration
			opts := s3.opts(&sleeps)
			opts.Retry.Attempts = 4
			res, err := Upload(context.Background(), Dest{Bucket: "perf-runs", Prefix: "p"}, dir, opts)
			var uerr *UploadError
			if !errors.As(err, &uerr) {
				t.Fatalf("error = %v, want an *UploadError", err)
			}
			if len(uerr.Failed) != 1 || uerr.Failed[0].Name != "junit.xml" || uerr.Failed[0].Attempts != tt.wantAttempts {
				t.Fatalf("failed = %+v, want junit.xml after %d attempts", uerr.Failed, tt.wantAttempts)
			}
			if got := s3.putCount(bad); got != tt.wantAttempts {
				t.Errorf("PUTs of junit.xml = %d, want %d", got, tt.wantAttempts)
			}
			if len(sleeps) != tt.wantAttempts-1 {
				t.Errorf("waits = %v, want %d", sleeps, tt.wantAttempts-1)
			}
			if msg := err.Error(); !strings.Contains(msg, "junit.xml") || !strings.Contains(msg, "s3://perf-runs/p") || !strings.Contains(msg, "1 of ") {
				t.Errorf("error %q should name the file, the destination and the count", msg)
			}
			names, _ := listFiles(dir)
			if len(res.Objects) != len(names)-1 || res.ReportURL == "" {
				t.Errorf("uploaded %d of %d with report URL %q; want every other file and the report", len(res.Objects), len(names), res.ReportURL)
			}
			checkUploaded(t, newTestClient(t, s3.URL, "test-key", "test-secret"), res, dir)
			if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
				t.Errorf("local files changed by a failed publish")
			}
		})
	}
}

func TestUploadMissingBucket(t *testing.T) {
	s3 := newFakeS3(t) // no bucket
	dir := runDir(t)
	var sleeps []time.Duration
	res, err := Upload(context.Background(), Dest{Bucket: "perf-runs"}, dir, s3.opts(&sleeps))
	var uerr *UploadError
	if !errors.As(err, &uerr) {
		t.Fatalf("error = %v, want an *UploadError", err)
	}
	names, _ := listFiles(dir)
	if len(uerr.Failed) != len(names) || len(res.Objects) != 0 || res.ReportURL != "" {
		t.Errorf("failed %d, uploaded %d, report %q; want all %d failed and no link", len(uerr.Failed), len(res.Objects), res.ReportURL, len(names))
	}
	if !strings.Contains(err.Error(), "bucket does not exist") {
		t.Errorf("error %q should say the bucket does not exist", err)
	}
	if len(sleeps) != 0 {
		t.Errorf("retried a missing bucket: waits %v", sleeps)
	}
}

func TestUploadStopsWhenCancelled(t *testing.T) {
	s3 := newFakeS3(t, "perf-runs")
	s3.hook = func(r *http.Request) (int, string, bool) {
		return http.StatusServiceUnavailable, slowDown, r.Method == http.MethodPut
	}
	dir := runDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := Options{
		Endpoint: s3.URL, AccessKeyID: "k", SecretAccessKey: "s", Getenv: func(string) string { return "" },
		sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() },
	}
	_, err := Upload(ctx, Dest{Bucket: "perf-runs"}, dir, opts)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want one wrapping context.Canceled", err)
	}
	if got := s3.putCount("/perf-runs/run.json"); got != 1 {
		t.Errorf("PUTs of run.json = %d, want 1 (no retry after cancel)", got)
	}
}

func TestUploadEmptyDir(t *testing.T) {
	_, err := Upload(context.Background(), Dest{Bucket: "perf-runs"}, t.TempDir(), Options{AccessKeyID: "k"})
	if err == nil || !strings.Contains(err.Error(), "no files") {
		t.Errorf("error = %v, want one saying there are no files", err)
	}
}

// TestUploadDefaultRetryPolicy: zero Options try a file as often and wait
// as long as retry's default, the policy the alert webhook uses too.
func TestUploadDefaultRetryPolicy(t *testing.T) {
	s3 := newFakeS3(t, "perf-runs")
	const bad = "/perf-runs/p/junit.xml"
	s3.hook = func(r *http.Request) (int, string, bool) {
		if r.Method == http.MethodPut && r.URL.Path == bad {
			return http.StatusServiceUnavailable, slowDown, true
		}
		return 0, "", false
	}
	var sleeps []time.Duration
	opts := s3.opts(&sleeps)
	opts.Retry = retry.Policy{}
	_, err := Upload(context.Background(), Dest{Bucket: "perf-runs", Prefix: "p"}, runDir(t), opts)
	if err == nil {
		t.Fatal("Upload succeeded with a file the server keeps refusing")
	}
	if got := s3.putCount(bad); got != retry.DefaultAttempts {
		t.Errorf("PUTs of junit.xml = %d, want retry.DefaultAttempts (%d)", got, retry.DefaultAttempts)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	if !reflect.DeepEqual(sleeps, want) {
		t.Errorf("waits = %v, want %v", sleeps, want)
	}
}
