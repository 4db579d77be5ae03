package origin

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestSame(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"http://h:80/a", "http://H/b", true},
		{"https://h/a", "https://h:443/b", true},
		{"http://h/a", "https://h/a", false},
		{"http://h:8080/", "http://h:8081/", false},
		{"http://h/", "http://sub.h/", false},
		{"http://[::1]:80/", "http://[::1]/", true},
		{"http://127.0.0.1:8080/", "http://localhost:8080/", false},
	} {
		a, _ := url.Parse(tt.a)
		b, _ := url.Parse(tt.b)
		if got := Same(a, b); got != tt.want {
			t.Errorf("Same(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestClientFollowsNothingElsewhere sends through Client against a
// server that redirects to another origin and to itself: the other
// origin gets nothing, the redirect is handed back with its Location,
// and a same-origin redirect is followed only by the caller's policy.
func TestClientFollowsNothingElsewhere(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked.Add(1) }))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
	})
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/there", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/there", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(c *http.Client, path string) *http.Response {
		t.Helper()
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	follow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	for name, c := range map[string]*http.Client{"nil": nil, "Go's default": {}, "follows all": follow} {
		resp := get(Client(c), "/away")
		if resp.StatusCode != http.StatusFound || !strings.Contains(NotFollowed(resp), other.URL+"/steal") {
			t.Errorf("%s: status %d, %q; want the 302 naming %s", name, resp.StatusCode, NotFollowed(resp), other.URL+"/steal")
		}
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
	if resp := get(Client(nil), "/here"); resp.StatusCode != http.StatusTemporaryRedirect || Location(resp).Path != "/there" {
		t.Errorf("same origin, no policy: status %d, want the 307 handed back", resp.StatusCode)
	}
	if resp := get(Client(follow), "/here"); resp.StatusCode != http.StatusOK {
		t.Errorf("same origin, caller's policy follows: status %d, want 200", resp.StatusCode)
	}
	if follow.CheckRedirect == nil {
		t.Error("the caller's client was changed")
	}
}

func TestNotFollowed(t *testing.T) {
	req, _ := http.NewRequest("GET", "http://a.example/v1/x", nil)
	for _, tt := range []struct {
		status int
		loc    string
		want   string
	}{
		{302, "http://b.example/y", "redirected to http://b.example/y, not followed"},
		{307, "/z", "redirected to http://a.example/z, not followed"},
		{302, "", ""},
		{200, "http://b.example/y", ""},
		{301, "http://b.example/" + strings.Repeat("q", 400), "…, not followed"},
	} {
		resp := &http.Response{StatusCode: tt.status, Header: http.Header{}, Request: req}
		if tt.loc != "" {
			resp.Header.Set("Location", tt.loc)
		}
		got := NotFollowed(resp)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%d %q: %q, want one containing %q", tt.status, tt.loc, got, tt.want)
		}
	}
}
