package profiling

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		key     string
		wantErr error
		ok      bool
	}{
		{"exposed", http.StatusOK, "", nil, true},
		{"not exposed", http.StatusNotFound, "", ErrNotExposed, false},
		{"wants its key", http.StatusUnauthorized, "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var auth string
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/debug/pprof/" {
					t.Errorf("probed %s", r.URL.Path)
				}
				auth = r.Header.Get("Authorization")
				w.WriteHeader(tc.status)
			}))
			defer hs.Close()
			err := Target{BaseURL: hs.URL + "/", APIKey: "k"}.Probe(t.Context())
			if tc.ok != (err == nil) {
				t.Fatalf("Probe: %v, want ok=%v", err, tc.ok)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("Probe: %v, want %v", err, tc.wantErr)
			}
			if auth != "Bearer k" {
				t.Errorf("Authorization %q, want the API key as bearer", auth)
			}
		})
	}
}

func TestRemoteWritesNothingWhenNoWindowCame(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/debug/pprof/profile" {
			http.Error(w, "profiling busy", http.StatusInternalServerError)
		}
	}))
	defer hs.Close()
	dir := t.TempDir()
	s, err := Remote(t.Context(), dir, Target{BaseURL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Stop()
	if p != nil || err == nil {
		t.Fatalf("Stop: %+v, %v; want no profile and the target's error", p, err)
	}
}

// TestRemoteFollowsNoRedirect: a target whose /debug/pprof/ (or its
// profile) redirects to another origin gets neither the key nor the
// headers sent there; the probe and the fetch fail naming the redirect.
func TestRemoteFollowsNoRedirect(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
		http.Error(w, "other origin", http.StatusInternalServerError)
	}))
	defer other.Close()
	for _, moved := range []string{"/debug/pprof/", "/debug/pprof/profile"} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == moved {
				http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
			}
		}))
		defer hs.Close()
		follow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
		tg := Target{BaseURL: hs.URL, APIKey: "k", Header: http.Header{"X-Team": {"secret"}}, Client: follow, Window: time.Second}
		var err error
		if s, rerr := Remote(t.Context(), t.TempDir(), tg); rerr != nil {
			err = rerr
		} else {
			_, err = s.Stop()
		}
		want := "redirected to " + other.URL + moved + ", not followed"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "302") {
			t.Errorf("%s moved: %v; want an error naming the 302 and %q", moved, err, want)
		}
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
}
