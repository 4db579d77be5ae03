package stream

import (
	"fmt"
	"net/url"
	"strings"
)

// SplitEndpoint reads a target address as a user may write it, the base
// URL ("http://h:8080", ".../v1") or the full URL of an endpoint
// (".../v1/chat/completions", ".../v1/completions"), and returns the base URL a [Client] takes (without a trailing
// slash) and the API the path names ("chat", "completions"; "" when the
// path names none). A query or fragment, or another path under /v1, is
// refused: it would be dropped or mangled silently.
func SplitEndpoint(raw string) (base, api string, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("%q is not an http:// or https:// URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", "", fmt.Errorf("%q: give the endpoint without a query, fragment or user; the API key goes in the environment", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	for _, e := range []struct{ suffix, api string }{
		{"/v1/chat/completions", "chat"},
		{"/v1/completions", "completions"},
	} {
		if strings.HasSuffix(p, e.suffix) {
			p, api = strings.TrimSuffix(p, e.suffix)+"/v1", e.api
			break
		}
	}
	if api == "" && (strings.HasSuffix(p, "/chat/completions") || strings.HasSuffix(p, "/completions")) {
		return "", "", fmt.Errorf("%q: tokenpulse calls /v1/chat/completions or /v1/completions under a base URL; give the base (the part before /v1)", raw)
	}
	if i := strings.Index(p+"/", "/v1/"); i >= 0 && p != p[:i]+"/v1" {
		return "", "", fmt.Errorf("%q: the path %q under /v1 is not an endpoint tokenpulse calls (/v1/chat/completions or /v1/completions); give the base URL", raw, u.Path)
	}
	u.Path, u.RawPath = p, ""
	return strings.TrimRight(u.String(), "/"), api, nil
}
