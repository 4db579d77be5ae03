package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/tokenpulse/tokenpulse/internal/retry"
	"github.com/tokenpulse/tokenpulse/internal/s3test"
)

// s3Server is a real S3-compatible server for the integration tests.
type s3Server struct{ s3test.Server }

// realS3 is package s3test's server (it skips, or fails under CI=true,
// without one).
func realS3(t *testing.T) s3Server { return s3Server{s3test.Real(t)} }

func randHex(t *testing.T, n int) string { return s3test.RandHex(t, n) }

func (s s3Server) opts() Options {
	return Options{
		Endpoint:        s.Endpoint,
		AccessKeyID:     s.Access,
		SecretAccessKey: s.Secret,
		Getenv:          func(string) string { return "" },
		Retry:           retry.Policy{Backoff: time.Millisecond},
	}
}

func (s s3Server) makeBucket(t *testing.T) string { return s.MakeBucket(t) }

func TestUploadToRealS3(t *testing.T) {
	s := realS3(t)
	bucket := s.makeBucket(t)
	dir := runDir(t)
	before := snapshot(t, dir)
	dest := Dest{Bucket: bucket, Prefix: "nightly/2026-11-29"}
	opts := s.opts()
	opts.PresignExpiry = 10 * time.Minute
	res, err := Upload(context.Background(), dest, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	names, err := listFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != len(names) {
		t.Fatalf("uploaded %d objects, want %d (%v)", len(res.Objects), len(names), names)
	}
	c := newTestClient(t, s.Endpoint, s.Access, s.Secret)
	checkUploaded(t, c, res, dir)

	// The server lists exactly what was uploaded.
	var listed []string
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: dest.Prefix + "/", Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		listed = append(listed, strings.TrimPrefix(o.Key, dest.Prefix+"/"))
	}
	if fmt.Sprint(sorted(listed)) != fmt.Sprint(sorted(names)) {
		t.Errorf("server lists %v, want %v", listed, names)
	}

	// The presigned link opens the report in a plain HTTP client, and the
	// real server checks its signature.
	resp, err := http.Get(res.ReportURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	local, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, local) {
		t.Errorf("GET presigned report: status %d, %d bytes; want 200 and the local %d bytes", resp.StatusCode, len(body), len(local))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("report Content-Type = %q, want text/html; charset=utf-8", ct)
	}
	// A tampered link is refused: the signature is really checked.
	resp, err = http.Get(strings.Replace(res.ReportURL, "report.html", "run.json", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET with the link's signature on another key: status %d, want 403", resp.StatusCode)
	}
	if after := snapshot(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("local files changed by publishing")
	}
}

func TestUploadToRealS3Refused(t *testing.T) {
	s := realS3(t)
	bucket := s.makeBucket(t)
	dir := runDir(t)
	names, _ := listFiles(dir)
	tests := []struct {
		name     string
		change   func(o *Options, d *Dest)
		wantCode string
	}{
		{"wrong secret", func(o *Options, d *Dest) { o.SecretAccessKey += "x" }, "SignatureDoesNotMatch"},
		{"missing bucket", func(o *Options, d *Dest) { d.Bucket = "tp-missing-" + randHex(t, 4) }, "NoSuchBucket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, dest := s.opts(), Dest{Bucket: bucket, Prefix: "x"}
			opts.Retry.Attempts = 3
			tt.change(&opts, &dest)
			res, err := Upload(context.Background(), dest, dir, opts)
			var uerr *UploadError
			if !errors.As(err, &uerr) {
				t.Fatalf("error = %v, want *UploadError", err)
			}
			if len(uerr.Failed) != len(names) || len(res.Objects) != 0 {
				t.Errorf("failed %d, uploaded %d; want all %d failed", len(uerr.Failed), len(res.Objects), len(names))
			}
			for _, f := range uerr.Failed {
				if got := minio.ToErrorResponse(f.Err).Code; got != tt.wantCode || f.Attempts != 1 {
					t.Errorf("%s: code %q after %d attempts, want %q after 1 (not retried)", f.Name, got, f.Attempts, tt.wantCode)
				}
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestDownloadFromRealS3(t *testing.T) {
	s := realS3(t)
	bucket := s.makeBucket(t)
	dir := runDir(t)
	opts := s.opts()
	for _, p := range []string{"run-1/shard-0", "run-1/shard-1", "run-10/shard-0"} {
		if _, err := Upload(context.Background(), Dest{Bucket: bucket, Prefix: p}, dir, opts); err != nil {
			t.Fatal(err)
		}
	}
	local, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	runJSON := func(name string) bool { return strings.HasSuffix(name, "/run.json") }
	lim := Limits{FileBytes: int64(len(local)), Files: 10}
	into := t.TempDir()
	objs, err := Download(context.Background(), Dest{Bucket: bucket, Prefix: "run-1"}, into, runJSON, lim, opts)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
		got, err := os.ReadFile(filepath.Join(into, filepath.FromSlash(o.Name)))
		if err != nil || !bytes.Equal(got, local) {
			t.Errorf("%s: %d bytes (%v), want the uploaded %d", o.Name, len(got), err, len(local))
		}
	}
	// run-10 shares run-1's first characters but is not under run-1/.
	if fmt.Sprint(names) != "[shard-0/run.json shard-1/run.json]" {
		t.Errorf("downloaded %v, want shard-0/run.json and shard-1/run.json only", names)
	}

	for _, tt := range []struct {
		name string
		lim  Limits
		want string
	}{
		{"a byte too large", Limits{FileBytes: int64(len(local)) - 1, Files: 10}, "more than the"},
		{"one file too many", Limits{FileBytes: int64(len(local)), Files: 1}, "more than 1 objects"},
	} {
		into := t.TempDir()
		_, err := Download(context.Background(), Dest{Bucket: bucket, Prefix: "run-1"}, into, runJSON, tt.lim, opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
		if left, _ := os.ReadDir(into); len(left) != 0 {
			t.Errorf("%s: %d entries written before the refusal", tt.name, len(left))
		}
	}
}
