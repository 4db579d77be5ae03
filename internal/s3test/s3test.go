// Package s3test gives tests a real S3-compatible server on loopback: the
// one named by TOKENPULSE_S3_ENDPOINT, TOKENPULSE_S3_ACCESS_KEY and
// TOKENPULSE_S3_SECRET_KEY (.ci/s3-server start), or else versitygw
// started for the test when its binary is installed (.ci/s3-server
// install), or else the test is skipped — and failed under CI=true, where
// the server must be there.
//
//	s := s3test.Real(t)
//	bucket := s.MakeBucket(t)
//	cmd.Env = append(cmd.Env, s.Env()...) // AWS_* for --publish, merge s3://
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Server is a running S3-compatible server.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:PORT.
	Endpoint string
	// Access and Secret are its keys.
	Access, Secret string
}

// Real returns the server for the test (see the package doc).
func Real(t testing.TB) Server {
	t.Helper()
	if ep := os.Getenv("TOKENPULSE_S3_ENDPOINT"); ep != "" {
		s := Server{ep, os.Getenv("TOKENPULSE_S3_ACCESS_KEY"), os.Getenv("TOKENPULSE_S3_SECRET_KEY")}
		if s.Access == "" || s.Secret == "" {
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

// Env returns the AWS_* environment that points tokenpulse's publisher
// (--publish, merge s3://) at s.
func (s Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_ACCESS_KEY_ID=" + s.Access,
		"AWS_SECRET_ACCESS_KEY=" + s.Secret,
		"AWS_REGION=us-east-1",
	}
}

// Client returns a minio-go client of s, path-style.
func (s Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(s.Access, s.Secret, ""),
		Secure:       u.Scheme == "https",
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// MakeBucket makes a bucket with a fresh name on s and returns its name.
func (s Server) MakeBucket(t testing.TB) string {
	t.Helper()
	bucket := "tp-" + RandHex(t, 6)
	if err := s.Client(t).MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v", err)
	}
	return bucket
}

// RandHex returns n random bytes in hexadecimal.
func RandHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
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
func startVersitygw(t testing.TB, bin string) Server {
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
	s := Server{Endpoint: "http://" + addr, Access: "tp" + RandHex(t, 8), Secret: RandHex(t, 20)}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--port", addr, "--quiet", "posix", "--sidecar", filepath.Join(dir, "meta"), filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.Access, "ROOT_SECRET_ACCESS_KEY="+s.Secret)
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
