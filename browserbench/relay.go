package browserbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/chatpage"
	"github.com/tokenpulse/tokenpulse/internal/origin"
	"github.com/tokenpulse/tokenpulse/sse"
	"github.com/tokenpulse/tokenpulse/stats"
	"github.com/tokenpulse/tokenpulse/stream"
)

// SecretHeader is the header in which the page sends the relay's secret
// with every request it asks the relay to relay.
const SecretHeader = "X-Tokenpulse-Relay"

// The paths the chat page asks the relay to relay, each with POST.
const (
	pathChat  = "/v1/chat/completions"
	pathAbort = "/v1/abort"
)

// maxAskBytes bounds the body of a request the page sends (its prompt).
const maxAskBytes = 32 << 20

// maxErrorBytes bounds the body of an answer other than a stream that the
// relay passes on (an error: the page shows 300 bytes of it).
const maxErrorBytes = 1 << 20

// Relay is the local origin the page is served from: it serves the chat
// page at / and relays the page's requests (POST /v1/chat/completions and
// /v1/abort) to the target, so that no target needs CORS. It writes each
// event of an answer on as soon as it has read it, and records for every
// relayed request how long it held it: from receiving the request to
// sending it on, and from reading each event of the answer to flushing
// it to the page.
//
// The relay holds the target's credentials (the API key, -H), so it
// relays for the page and no one else: it answers only requests whose
// Host is its own (127.0.0.1:PORT or localhost:PORT: no DNS rebinding)
// and whose Origin, when sent, is its own; it relays only the page's two
// paths, with POST, and only requests that carry the per-run secret in
// [SecretHeader] (403 otherwise). The secret is in the fragment of
// [Relay.PageURL], which only the browser sees: the relay never serves
// it. It follows no redirect (package origin): the page gets the
// redirect's status without its Location, and a message naming where it
// led. It bounds each answer as plain bench does ([stream.Limits]: the
// events, content events, bytes and bytes per event), and at a limit
// stops the answer there, keeping what came before it, with a last event
// that tells the page it overflowed.
//
// A Relay is safe for concurrent use.
type Relay struct {
	target *url.URL
	header http.Header
	client *http.Client
	srv    *http.Server
	ln     net.Listener
	page   http.Handler
	secret string
	port   string

	mu    sync.Mutex
	holds []time.Duration // every hold, pooled: request forwarding and event flushes
}

// NewRelay starts a relay on a free loopback port in front of target (a
// base URL such as http://127.0.0.1:8080, with or without /v1); header is
// added to every relayed request (the API key, -H). Close stops it.
func NewRelay(target string, header http.Header) (*Relay, error) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimRight(target, "/"), "/v1"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("relay: target must be an http(s) base URL, not " + target)
	}
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	r := &Relay{target: u, header: header, ln: ln, page: chatpage.Handler(), secret: hex.EncodeToString(key[:]), port: port,
		client: origin.Client(&http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 16}})}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

// URL is the relay's origin, http://127.0.0.1:PORT.
func (r *Relay) URL() string { return "http://" + r.ln.Addr().String() }

// PageURL is the address of the chat page on the relay, with query q
// (nil: none) and the relay's secret in its fragment, where the page
// finds it and the relay never sees it.
func (r *Relay) PageURL(q url.Values) string {
	u := r.URL() + "/"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u + "#" + url.Values{"relay": {r.secret}}.Encode()
}

// Close stops the relay.
func (r *Relay) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return r.srv.Shutdown(ctx)
}

// Holds returns every hold recorded so far, in ms: each request's time
// from arriving to being sent on, and each event's time from being read
// from the target to being flushed to the page.
func (r *Relay) Holds() []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]float64, len(r.holds))
	for i, h := range r.holds {
		out[i] = stats.Millis(int64(h))
	}
	return out
}

func (r *Relay) hold(d time.Duration) {
	r.mu.Lock()
	r.holds = append(r.holds, d)
	r.mu.Unlock()
}

// serve answers the page: its files, and its two requests relayed. What
// is not the page's is refused before anything reaches the target.
func (r *Relay) serve(w http.ResponseWriter, req *http.Request) {
	switch {
	case !r.own(req.Host):
		http.Error(w, fmt.Sprintf("relay: Host %q is not this relay's (127.0.0.1:%s or localhost:%s)", req.Host, r.port, r.port), http.StatusForbidden)
	case req.Header.Get("Origin") != "" && !r.ownOrigin(req.Header.Get("Origin")):
		http.Error(w, fmt.Sprintf("relay: Origin %q is not this relay's", req.Header.Get("Origin")), http.StatusForbidden)
	case chatpage.Serves(req.URL.Path):
		r.page.ServeHTTP(w, req)
	case req.URL.Path != pathChat && req.URL.Path != pathAbort:
		http.Error(w, "relay: the page asks "+pathChat+" and "+pathAbort+" only", http.StatusNotFound)
	case req.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "relay: "+req.URL.Path+" takes POST only", http.StatusMethodNotAllowed)
	case subtle.ConstantTimeCompare([]byte(req.Header.Get(SecretHeader)), []byte(r.secret)) != 1:
		http.Error(w, "relay: the page's secret is missing or wrong", http.StatusForbidden)
	default:
		r.relay(w, req)
	}
}

// own reports whether host names the relay.
func (r *Relay) own(host string) bool {
	return strings.EqualFold(host, "127.0.0.1:"+r.port) || strings.EqualFold(host, "localhost:"+r.port)
}

// ownOrigin reports whether o, an Origin header, is the relay's.
func (r *Relay) ownOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && u.Scheme == "http" && u.Path == "" && r.own(u.Host)
}

// relay sends the request on to the target and copies its answer back:
// a stream event by event, within the limits of plain bench.
func (r *Relay) relay(w http.ResponseWriter, req *http.Request) {
	got := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxAskBytes))
	if err != nil {
		http.Error(w, "relay: the request's body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	var ask struct {
		MaxTokens int `json:"max_tokens"`
	}
	json.Unmarshal(body, &ask) // the target judges the body; only its max_tokens is wanted here
	u := *r.target
	u.Path = r.target.Path + req.URL.Path
	u.RawQuery = req.URL.RawQuery
	out, err := http.NewRequestWithContext(req.Context(), http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for _, k := range []string{"Content-Type", "Accept", api.HeaderRequestID} {
		if v := req.Header.Get(k); v != "" {
			out.Header.Set(k, v)
		}
	}
	for k, vs := range r.header {
		out.Header[k] = vs
	}
	r.hold(time.Since(got))
	resp, err := r.client.Do(out)
	if err != nil {
		if req.Context().Err() == nil {
			http.Error(w, "relay: "+err.Error(), http.StatusBadGateway)
		}
		return
	}
	defer resp.Body.Close()
	if msg := origin.NotFollowed(resp); msg != "" {
		// The redirect's status, without its Location: the browser must
		// not follow it either. The page records it as failed http.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(resp.StatusCode)
		io.WriteString(w, msg)
		return
	}
	for k, vs := range resp.Header {
		switch k {
		case "Content-Length", "Connection", "Location":
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	if resp.StatusCode != http.StatusOK || req.URL.Path != pathChat {
		io.Copy(w, io.LimitReader(resp.Body, maxErrorBytes))
		return
	}
	r.stream(w, fl, resp.Body, (&stream.Client{}).Limits(ask.MaxTokens))
}

// OverflowEvent is the member of the last event the relay sends when it
// stops an answer at a limit: {"tokenpulse_relay": {"error": "overflow",
// "message": ...}}. The page records the request as failed with that
// kind and message.
const OverflowEvent = "tokenpulse_relay"

// relayNotice is the value of OverflowEvent.
type relayNotice struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// stream copies an event stream to the page event by event, each flushed
// as soon as it is read, and stops it at the first limit of lim it
// crosses, as plain bench does: what came before is passed on, then one
// event saying the answer overflowed.
func (r *Relay) stream(w io.Writer, fl http.Flusher, body io.Reader, lim stream.Limits) {
	in := &held{r: body, max: lim.Bytes}
	dec := sse.NewDecoder(in)
	dec.SetMaxEventSize(lim.EventBytes)
	events, content := 0, 0
	var sent int64
	forward := func(upto int64) bool {
		n := int(upto - sent)
		_, err := w.Write(in.pending[:n])
		in.pending = in.pending[n:]
		sent = upto
		if fl != nil {
			fl.Flush()
		}
		return err == nil
	}
	stop := func(what string) {
		b, _ := json.Marshal(map[string]relayNotice{OverflowEvent: {Error: "overflow", Message: stream.OverflowMessage(what, events, content)}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	for {
		ev, err := dec.NextRaw()
		switch {
		case errors.Is(err, errOverLimit):
			stop(fmt.Sprintf("more than %d bytes", lim.Bytes))
			return
		case errors.Is(err, sse.ErrEventTooLarge):
			stop(fmt.Sprintf("an event of more than %d bytes", lim.EventBytes))
			return
		case err != nil:
			forward(sent + int64(len(in.pending))) // the stream's end as it came
			return
		}
		if events >= lim.Events {
			stop(fmt.Sprintf("more than %d events", lim.Events))
			return
		}
		isContent := !ev.Unterminated && stream.Content(ev.Data)
		if isContent && content >= lim.ContentEvents {
			stop(fmt.Sprintf("more than %d content events", lim.ContentEvents))
			return
		}
		events++
		if isContent {
			content++
		}
		if !forward(dec.Offset()) {
			return // the page went away
		}
		r.hold(time.Since(ev.At))
	}
}

// errOverLimit is held's error past its limit.
var errOverLimit = errors.New("response body over the limit")

// held reads the target's answer and keeps what it read until the relay
// has passed it on (pending); past max bytes it fails with errOverLimit.
type held struct {
	r       io.Reader
	max     int64
	n       int64
	pending []byte
}

func (h *held) Read(p []byte) (int, error) {
	if rest := h.max - h.n; int64(len(p)) > rest {
		p = p[:rest+1] // one more byte says whether the body goes on
	}
	n, err := h.r.Read(p)
	if int64(n) > h.max-h.n {
		n = int(h.max - h.n)
		err = errOverLimit
	}
	h.n += int64(n)
	h.pending = append(h.pending, p[:n]...)
	return n, err
}
