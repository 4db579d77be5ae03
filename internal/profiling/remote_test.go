package profiling

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
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
