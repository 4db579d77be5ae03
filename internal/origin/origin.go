// Package origin is tokenpulse's one rule for where credentials go: a
// request that carries an API key, headers, a prompt, a profile request
// or an alert goes to the origin it was addressed to (scheme, host and
// port) and nowhere else. No HTTP client of tokenpulse follows a redirect
// to another origin; a redirect within the origin is followed only where
// the caller's own policy says so, and by default not at all. A redirect
// not followed is handed back to the caller as the response (its body
// unread), so that the caller fails with its status and says where it led
// ([NotFollowed]) instead of passing on whatever the other origin answered.
//
// Every client that sends credentials takes its CheckRedirect from here:
// the streaming client (package stream: the request fails as KindHTTP
// naming the Location), the browser run's relay (the page records the
// request as failed http), the remote profile fetch (bench --profile
// warns, naming the redirect), webhooks (the post fails, naming the other
// origin's scheme and host only) and the gateway (the upstream's redirect
// is a 502). Publishing goes through minio-go, whose client never follows
// a redirect (it hands every 3xx back, as this package does); package
// publish checks that in its tests.
//
//	hc := *caller
//	hc.CheckRedirect = origin.CheckRedirect(caller.CheckRedirect)
package origin

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Same reports whether a and b have the same origin: scheme, host and
// port, the scheme's default port standing for none written, compared
// without regard to case.
func Same(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b)
}

// port returns u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// CheckRedirect returns an http.Client CheckRedirect that never follows a
// redirect to another origin than the first request's, and leaves one
// within that origin to same (the caller's own policy; nil follows none).
// A redirect not followed ends the client's Do with the redirect itself as
// the response (http.ErrUseLastResponse), body unread.
func CheckRedirect(same func(req *http.Request, via []*http.Request) error) func(req *http.Request, via []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if same == nil || len(via) == 0 || !Same(req.URL, via[0].URL) {
			return http.ErrUseLastResponse
		}
		return same(req, via)
	}
}

// Client returns a copy of c (nil: a zero http.Client, Go's default
// transport) whose CheckRedirect is [CheckRedirect] of c's own: c itself
// is left as it is.
func Client(c *http.Client) *http.Client {
	var cc http.Client
	if c != nil {
		cc = *c
	}
	cc.CheckRedirect = CheckRedirect(cc.CheckRedirect)
	return &cc
}

// Location returns where resp redirects (its Location resolved against
// the request's URL), or nil when resp is not a 3xx with a Location.
func Location(resp *http.Response) *url.URL {
	if resp == nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return nil
	}
	u, err := resp.Location()
	if err != nil {
		return nil
	}
	return u
}

// NotFollowed says where a redirect that was not followed led, or
// returns "" when resp is not a redirect with a Location. The Location
// is cut at 300 bytes.
func NotFollowed(resp *http.Response) string {
	if resp == nil || resp.StatusCode < 300 || resp.StatusCode > 399 {
		return ""
	}
	loc := resp.Header.Get("Location") // as sent, when it does not parse
	if u := Location(resp); u != nil {
		loc = u.String()
	}
	if loc == "" {
		return ""
	}
	if len(loc) > 300 {
		loc = loc[:300] + "…"
	}
	return fmt.Sprintf("redirected to %s, not followed (the API key, headers and prompt are never sent to another address; use the address redirected to)", loc)
}
