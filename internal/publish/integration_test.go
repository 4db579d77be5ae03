package publish

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/tokenpulse/tokenpulse/internal/retry"
)

// s3Server is a real S3-compatible server for the integration tests.
type s3Server struct {
	endpoint, access, secret string
}

// realS3 returns the server named by TOKENPULSE_S3_ENDPOINT,
// TOKENPULSE_S3_ACCESS_KEY and TOKENPULSE_S3_SECRET_KEY (see .ci/s3-server),
// or else starts versitygw on loopback when its binary is installed
// (.ci/s3-server install), or else skips the test — and fails it under
// CI=true, where the server must be there.
func realS3(t *testing.T) s3Server {
	t.Helper()
	if ep := os.Getenv("TOKENPULSE_S3_ENDPOINT"); ep != "" {
		s := s3Server{ep, os.Getenv("TOKENPULSE_S3_ACCESS_KEY"), os.Getenv("TOKENPULSE_S3_SECRET_KEY")}
		if s.access == "" || s.secret == "" {
			t.Fatal("TOKENPULSE_S3_ENDPOINT is set but TOKENPULSE_S3_ACCESS_KEY or TOKENPULSE_S3_SECRET_KEY is not")
		}
		return s
	}
	bin := versitygwPath()
	if bin == "" {
		msg := "no S3 server: set TOKENPULSE_S3_ENDPOINT (eval \"$(.ci/s3-server start)\") or install versitygw (.ci/s3-server install)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return startVersitygw(t, bin)
}

func versitygwPath() string {
	if p := os.Getenv("TOKENPULSE_VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	dirs := []string{}
	if len(lines) > 0 && lines[0] != "" {
		dirs = append(dirs, lines[0])
	}
	if len(lines) > 1 {
		for _, p := range filepath.SplitList(lines[1]) {
			dirs = append(dirs, filepath.Join(p, "bin"))
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// startVersitygw runs versitygw's posix backend on a free loopback port
// with fresh keys and a temporary directory, for the test's lifetime.
func startVersitygw(t *testing.T, bin string) s3Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	for _, d := range []string{"data", "meta"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := s3Server{endpoint: "http://" + addr, access: "tp" + randHex(t, 8), secret: randHex(t, 20)}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--port", addr, "--quiet", "posix", "--sidecar", filepath.Join(dir, "meta"), filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.access, "ROOT_SECRET_ACCESS_KEY="+s.secret)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	// Wait until it listens; a server that never does fails the test
	// (the bound is generous: it only guards against hanging forever).
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return s
		}
		select {
		case err := <-exited:
			t.Fatalf("versitygw exited (%v): %s", err, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s: %s", addr, logs.String())
		}
	}
}

func randHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func (s s3Server) opts() Options {
	return Options{
		Endpoint:        s.endpoint,
		AccessKeyID:     s.access,
		SecretAccessKey: s.secret,
		Getenv:          func(string) string { return "" },
		Retry:           retry.Policy{Backoff: time.Millisecond},
	}
}

func (s s3Server) makeBucket(t *testing.T) string {
	t.Helper()
	bucket := "tp-" + randHex(t, 6)
	c := newTestClient(t, s.endpoint, s.access, s.secret)
	if err := c.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	return bucket
}

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
	c := newTestClient(t, s.endpoint, s.access, s.secret)
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
