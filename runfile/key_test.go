package runfile

import "testing"

func TestNormalizeURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://h:8080/v1", "http://h:8080"},
		{"http://h:8080", "http://h:8080"},
		{"http://h:8080/", "http://h:8080"},
		{"http://h:8080/v1/", "http://h:8080"},
		{"HTTP://H.Example:8080/v1", "http://h.example:8080"},
		{"http://h:80/v1", "http://h"},
		{"https://api.example.com:443/v1", "https://api.example.com"},
		{"https://api.example.com:8443/openai/v1", "https://api.example.com:8443/openai"},
		{"http://[::1]:8080/v1", "http://[::1]:8080"},
		{" http://h:8080/v1 ", "http://h:8080"},
		{"embedded:stories260K@047bf46455a5", "embedded:stories260K@047bf46455a5"},
		{"", ""},
	} {
		if got := NormalizeURL(tc.in); got != tc.want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
