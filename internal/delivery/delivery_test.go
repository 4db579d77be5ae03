package delivery

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/tokenpulse/tokenpulse/internal/publish"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestPublishThenAlert: the run directory is published before the alert
// is sent, and the alert links the report it published.
func TestPublishThenAlert(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	backend := s3mem.New()
	if err := backend.CreateBucket("runs"); err != nil {
		t.Fatal(err)
	}
	s3 := gofakes3.New(backend).Server()
	bucket := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			note("put " + r.URL.Path)
		}
		s3.ServeHTTP(w, r)
	}))
	defer bucket.Close()
	var alert string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		note("alert")
		mu.Lock()
		alert = string(b)
		mu.Unlock()
	}))
	defer hook.Close()
	for k, v := range map[string]string{"AWS_ENDPOINT_URL_S3": bucket.URL, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-east-1"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	for _, f := range []string{"run.json", "report.html"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := &runfile.Run{Verdicts: []runfile.Verdict{{Scope: "overall", Rule: "ttft.p95 < 1ms", Passed: false}}}
	out, err := Deliver(context.Background(), Config{Dest: &publish.Dest{Bucket: "runs", Prefix: "nightly"}, Webhook: hook.URL}, run, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Alerted || !strings.HasSuffix(out.ReportURL, "/runs/nightly/report.html") {
		t.Fatalf("outcome %+v", out)
	}
	if len(order) < 3 || order[len(order)-1] != "alert" {
		t.Errorf("order %q: want every upload, then the alert", order)
	}
	if !strings.Contains(alert, out.ReportURL) {
		t.Errorf("the alert does not link %s:\n%s", out.ReportURL, alert)
	}
}
