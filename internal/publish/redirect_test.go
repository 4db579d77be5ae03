package publish

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/retry"
)

// TestUploadFollowsNoRedirect: an S3 endpoint that redirects every
// request to another origin gets no upload sent on there, neither the
// signed request (credentials) nor a file. minio-go's client hands every
// 3xx back (package origin's rule), so each file fails at the endpoint.
func TestUploadFollowsNoRedirect(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked.Add(1) }))
	defer other.Close()
	var asked atomic.Int32
	from := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer from.Close()
	_, err := Upload(context.Background(), Dest{Bucket: "perf-runs", Prefix: "p"}, runDir(t), Options{
		Endpoint: from.URL, AccessKeyID: "test-key", SecretAccessKey: "test-secret",
		Getenv: func(string) string { return "" }, Retry: retry.Policy{Attempts: 1},
		sleep: func(context.Context, time.Duration) error { return nil },
	})
	if err == nil {
		t.Error("Upload succeeded against an endpoint that only redirects")
	}
	if asked.Load() == 0 {
		t.Error("the endpoint was never asked")
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
}
