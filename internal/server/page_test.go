package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
)

// TestChatPageRoute: / serves the chat page and its module; every other
// unknown path, and / with another method, still answers an OpenAI-shaped
// JSON 404.
func TestChatPageRoute(t *testing.T) {
	_, ts, _ := newTestServer(t, newFake("never"), Options{})
	for _, tc := range []struct{ path, contentType, contains string }{
		{"/", "text/html", `<script type="module" src="app.js">`},
		{"/app.js", "javascript", "window.tokenpulse"},
	} {
		resp, err := http.Get(ts.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), tc.contentType) || !strings.Contains(string(body), tc.contains) {
			t.Errorf("GET %s: %d %s, body has %q: %v", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.contains, strings.Contains(string(body), tc.contains))
		}
	}
	for _, tc := range []struct{ method, path string }{{"GET", "/nope"}, {"GET", "/v2/chat"}, {"POST", "/"}} {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e api.ErrorBody
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 404 || err != nil || e.Error.Code == nil || *e.Error.Code != "not_found" {
			t.Errorf("%s %s: %d, %v, %+v: want the JSON 404", tc.method, tc.path, resp.StatusCode, err, e)
		}
	}
}
