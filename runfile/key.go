package runfile

import (
	"net/url"
	"strings"
)

// NormalizeURL returns the form of a target URL that identifies the
// target: scheme and host in lower case, the scheme's default port left
// out, and any trailing "/" and "/v1" suffix removed, so that
// "http://H:8080/v1/" and "http://h:8080" name one target. A string that
// is not an http(s) URL is returned trimmed of spaces.
func NormalizeURL(raw string) string {
	s := strings.TrimSpace(raw)
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return s
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return s
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	path = strings.TrimRight(strings.TrimSuffix(path, "/v1"), "/")
	out := scheme + "://" + host + path
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out
}

// Key is how a target is identified across runs: its normalised
// URL, except for tokenpulse's embedded server, whose URL is a fresh
// loopback port each run: that is identified by its model file's sha256
// instead ("embedded:stories260K@047bf46455a5").
func (t Target) Key() string {
	if t.Backend == "embedded" && t.ModelSHA256 != "" {
		sha := t.ModelSHA256
		if len(sha) > 12 {
			sha = sha[:12]
		}
		return "embedded:" + t.Model + "@" + sha
	}
	return NormalizeURL(t.URL)
}

// Key is how a device is identified across runs: its label when
// set, otherwise its hostname.
func (d Device) Key() string {
	if d.Label != "" {
		return d.Label
	}
	return d.Hostname
}
