package stream

import (
	"fmt"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/tokenpulse/tokenpulse/api"
)

// ownedHeaders are the request headers the client (or Go's transport
// under it) sets itself, each with why a user's value cannot stand: sent
// through [Client.Header] it would be dropped, overridden, or would
// break the request or its measurement.
var ownedHeaders = map[string]string{
	"Host":              "the host comes from --url (Go sends the URL's host and drops this header)",
	api.HeaderRequestID: "the client sends a fresh id with every request: the server's event ids and /v1/abort name the request by it, so one fixed id for all would make every stream look like one",
	"Content-Length":    "the client frames the body it writes",
	"Transfer-Encoding": "the client frames the body it writes",
	"Trailer":           "the client frames the body it writes",
	"TE":                "the transport negotiates the transfer coding",
	"Connection":        "the transport manages the connection (keep-alive, the retry of a request on a fresh connection)",
	"Keep-Alive":        "the transport manages the connection (keep-alive, the retry of a request on a fresh connection)",
	"Proxy-Connection":  "the transport manages the connection (keep-alive, the retry of a request on a fresh connection)",
	"Upgrade":           "the request is a plain HTTP request whose answer is an event stream",
	"Expect":            "a 100-continue handshake would add a round trip to every measured TTFT",
	"Content-Type":      "the body is JSON (application/json), as the API requires",
	"Accept":            "the client asks for text/event-stream, the stream it measures",
	"Accept-Encoding":   "the transport asks for gzip and decompresses; set by hand, the stream would arrive compressed and unread",
}

// CheckHeader reports whether a header may be added to every request
// through [Client.Header]: its name an RFC 9110 token, its value free of
// CR, LF, NUL and other control characters (a tab is allowed), and not
// one of the headers the client owns (Host, X-Request-ID, the body's
// framing, the connection's management, Content-Type, Accept,
// Accept-Encoding), each refused with the reason. Authorization and
// User-Agent may be replaced.
func CheckHeader(name, value string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("header name %q is not an HTTP token (letters, digits and !#$%%&'*+-.^_`|~, no spaces)", name)
	}
	if !httpguts.ValidHeaderFieldValue(value) {
		return fmt.Errorf("header %s: its value holds a control character (CR, LF, NUL, ...), which would end the header or inject another", name)
	}
	for owned, why := range ownedHeaders {
		if strings.EqualFold(owned, name) {
			return fmt.Errorf("header %s is tokenpulse's own: %s", owned, why)
		}
	}
	return nil
}
