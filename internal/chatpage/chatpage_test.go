package chatpage

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	ts := httptest.NewServer(Handler())
	defer ts.Close()
	for _, tc := range []struct {
		method, path string
		status       int
		contains     string
	}{
		{"GET", "/", 200, `id="send"`},
		{"HEAD", "/", 200, ""},
		{"GET", "/app.js", 200, "AbortController"},
		{"GET", "/secret.go", 404, ""},
		{"POST", "/", 405, ""},
	} {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s %s: %d, want %d with %q", tc.method, tc.path, resp.StatusCode, tc.status, tc.contains)
		}
		if tc.status == 200 && resp.Header.Get("Cross-Origin-Embedder-Policy") != "require-corp" {
			t.Errorf("%s %s: not cross-origin isolated (the page's clock would be coarsened)", tc.method, tc.path)
		}
		if Serves(tc.path) != (tc.status != 404) {
			t.Errorf("Serves(%q) = %v", tc.path, Serves(tc.path))
		}
	}
	for _, r := range Renders {
		if !ValidRender(r) || !strings.Contains(string(mustRead(t, "app.js")), `"`+r+`"`) {
			t.Errorf("render %s: not known to the page", r)
		}
	}
	if ValidRender("sometimes") {
		t.Error("ValidRender(sometimes) = true")
	}
}

func mustRead(t *testing.T, name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
