package stream

import "testing"

// TestSplitEndpoint: the full endpoint URL a user copies from an API's
// documentation is taken as its base and API, which the client once
// doubled ("no route for /v1/chat/completions/v1/chat/completions").
func TestSplitEndpoint(t *testing.T) {
	for _, tc := range []struct{ in, base, api string }{
		{"http://127.0.0.1:8081", "http://127.0.0.1:8081", ""},
		{"http://127.0.0.1:8081/", "http://127.0.0.1:8081", ""},
		{"http://127.0.0.1:8081/v1", "http://127.0.0.1:8081/v1", ""},
		{"http://127.0.0.1:8081/v1/", "http://127.0.0.1:8081/v1", ""},
		{"http://127.0.0.1:8081/v1/chat/completions", "http://127.0.0.1:8081/v1", "chat"},
		{"http://127.0.0.1:8081/v1/chat/completions/", "http://127.0.0.1:8081/v1", "chat"},
		{"http://127.0.0.1:8081/v1/completions", "http://127.0.0.1:8081/v1", "completions"},
		{"https://api.example/openai/v1/chat/completions", "https://api.example/openai/v1", "chat"},
	} {
		base, api, err := SplitEndpoint(tc.in)
		if err != nil || base != tc.base || api != tc.api {
			t.Errorf("SplitEndpoint(%q) = %q, %q, %v; want %q, %q", tc.in, base, api, err, tc.base, tc.api)
			continue
		}
		c := Client{BaseURL: base}
		if got, want := c.endpoint("/chat/completions"), tc.base; len(got) < len(want) || got[:len(want)] != want || got[len(got)-len("/v1/chat/completions"):] != "/v1/chat/completions" {
			t.Errorf("%q: endpoint %q", tc.in, got)
		}
	}
	for _, bad := range []string{"127.0.0.1:8081", "ftp://h", "http://h/v1/models", "http://h/v1/embeddings", "http://h/v1/chat/completions?x=1", "http://user:pw@h/v1", "http://h/chat/completions"} {
		if _, _, err := SplitEndpoint(bad); err == nil {
			t.Errorf("SplitEndpoint(%q) accepted", bad)
		}
	}
}
