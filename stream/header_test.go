package stream

import (
	"strings"
	"testing"
)

func TestCheckHeader(t *testing.T) {
	for _, ok := range [][2]string{
		{"X-A", "b"}, {"api-key", "secret"}, {"Authorization", "Bearer k"}, {"User-Agent", "mine"},
		{"X-Tab", "a\tb"}, {"x!#$%&'*+-.^_`|~", "v"}, {"X-Empty", ""},
	} {
		if err := CheckHeader(ok[0], ok[1]); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, tc := range []struct{ name, value, want string }{
		{"X-A", "b\r\nX-Injected: yes", "control character"},
		{"X-A", "b\nX-Injected: yes", "control character"},
		{"X-A", "b\x00", "control character"},
		{"Bad Name", "v", "not an HTTP token"},
		{"X:A", "v", "not an HTTP token"},
		{"", "v", "not an HTTP token"},
		{"Host", "evil.example", "comes from --url"},
		{"host", "evil.example", "comes from --url"},
		{"X-Request-ID", "fixed", "fresh id with every request"},
		{"x-request-id", "fixed", "fresh id with every request"},
		{"Content-Length", "3", "frames the body"},
		{"Transfer-Encoding", "chunked", "frames the body"},
		{"Connection", "close", "manages the connection"},
		{"Accept", "application/json", "text/event-stream"},
		{"Accept-Encoding", "gzip", "decompresses"},
		{"Content-Type", "text/plain", "application/json"},
	} {
		err := CheckHeader(tc.name, tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %q: err %v, want %q", tc.name, tc.value, err, tc.want)
		}
	}
}
