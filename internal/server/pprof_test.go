package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestPprofExposureRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{"loopback", Options{Addr: "127.0.0.1:8080", Pprof: true}, true},
		{"localhost", Options{Addr: "localhost:8080", Pprof: true}, true},
		{"exposed with key", Options{Addr: "0.0.0.0:8080", Pprof: true, APIKey: "k"}, true},
		{"exposed, insecure, no key", Options{Addr: "0.0.0.0:8080", Pprof: true, Insecure: true}, false},
		{"all interfaces, insecure, no key", Options{Addr: ":8080", Pprof: true, Insecure: true}, false},
		{"exposed, insecure, no pprof", Options{Addr: "0.0.0.0:8080", Insecure: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(newFake(), tc.o)
			if tc.ok != (err == nil) {
				t.Fatalf("New: %v, want ok=%v", err, tc.ok)
			}
			if !tc.ok && !errors.Is(err, ErrPprofExposed) {
				t.Fatalf("New: %v, want ErrPprofExposed", err)
			}
		})
	}
}

func TestPprofBehindTheKey(t *testing.T) {
	get := func(h http.Handler, path, key string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	keyed, err := New(newFake(), Options{Pprof: true, APIKey: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"/debug/pprof/": 200, "/debug/pprof/cmdline": 200, "/debug/pprof/goroutine?debug=1": 200} {
		if got := get(keyed.Handler(), path, "secret"); got != want {
			t.Errorf("%s with the key: %d, want %d", path, got, want)
		}
		if got := get(keyed.Handler(), path, ""); got != http.StatusUnauthorized {
			t.Errorf("%s without the key: %d, want 401", path, got)
		}
		if got := get(keyed.Handler(), path, "wrong"); got != http.StatusUnauthorized {
			t.Errorf("%s with a wrong key: %d, want 401", path, got)
		}
	}
	open, err := New(newFake(), Options{Pprof: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(open.Handler(), "/debug/pprof/", ""); got != 200 {
		t.Errorf("loopback server without a key: %d, want 200", got)
	}
	off, err := New(newFake(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(off.Handler(), "/debug/pprof/", ""); got != http.StatusNotFound {
		t.Errorf("without Pprof: %d, want 404", got)
	}
}
