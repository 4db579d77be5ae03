package stream

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/origin"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/sse"
)

// Client sends streaming completion requests to one OpenAI-compatible
// endpoint and turns each into a [Trace]. Set its fields before the first
// call and do not change them after; a Client is then safe for concurrent
// use and must not be copied.
//
// Foreign events. tokenpulse serve and mock put the request id in every
// event's "id:" field and echo the X-Request-ID header. Other servers send
// no id, or a chunk id that has nothing to do with ours, so an id that
// differs from ours proves nothing there. The client therefore compares
// event ids only when the response echoed our X-Request-ID exactly: then an
// event whose id is set and differs is another request's (a stream mixed
// up by a gateway or a reused connection), and it is dropped, counted in
// [Trace.ForeignEvents] and never timed. Events without an id are kept.
type Client struct {
	// HTTP is the client to send with; nil means one on [NewTransport].
	// A retry goes through a clone of its *http.Transport with keep-alive
	// off, so it always gets a fresh connection; with any other
	// RoundTripper the retry uses HTTP as it is.
	//
	// Redirects. The Client sends through a copy of HTTP whose
	// CheckRedirect never follows a redirect to another origin (scheme,
	// host and port): the API key, the Header (api-key and the like) and
	// the prompt stay with the server they were meant for. A redirect to
	// the same origin is followed only when HTTP's own CheckRedirect is
	// set (and says so); by default no redirect is followed. A redirect
	// not followed fails the request as [KindHTTP] with the redirect's
	// status, its message naming the Location; Models, Health and Abort
	// fail the same way.
	HTTP *http.Client
	// BaseURL is the server's address, with or without a trailing "/v1"
	// ("http://127.0.0.1:8080" or "http://127.0.0.1:8080/v1").
	BaseURL string
	// API is "chat" (POST /v1/chat/completions, the default when empty)
	// or "completions" (POST /v1/completions).
	API string
	// Model is the model name sent in each request.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer KEY".
	APIKey string
	// Header holds extra headers sent with every request; they replace the
	// client's own headers of the same name, except X-Request-ID, which
	// is always [Request.ID]. [CheckHeader] says which a caller may set
	// (bench's -H refuses the others before measuring).
	Header http.Header
	// NoUsage stops the client asking for usage
	// (stream_options.include_usage), for servers that reject the field.
	NoUsage bool
	// Options are sent with every request (sampling, stop sequences,
	// ignore_eos, an extra body merged in); what is not set there is not
	// sent. A request's own Temperature and Seed replace the Options'.
	// An ExtraBody that is not a JSON object, or holds "stream" or
	// "stream_options", fails every request before it is sent.
	Options api.RequestOptions

	// Limits on what one request may receive, so that the client's memory
	// and the run file do not follow a server that never stops. A request
	// that crosses one fails with [KindOverflow], naming the limit; its
	// trace keeps what was measured up to the limit (and no more), and its
	// connection is closed. Zero means the default; a negative value, no
	// limit.
	//
	// MaxContentEvents bounds the content events: by default
	// max(4·MaxTokens, 4096) when the request sets MaxTokens, else
	// [DefaultMaxContentEvents].
	MaxContentEvents int
	// MaxEvents bounds the events of every kind ("[DONE]" and foreign
	// events included): by default 2·(the content events' limit) + 1024.
	MaxEvents int
	// MaxBytes bounds the bytes of the response body (after the transfer
	// coding): by default 4 KiB per content event of the limit, at least
	// 16 MiB and at most [DefaultMaxBytes] (16 MiB for up to 1024 tokens
	// asked for, 64 MiB from 4096 and without MaxTokens).
	MaxBytes int64
	// MaxEventBytes bounds one event (the bytes of its lines, line ends
	// not counted): by default [DefaultMaxEventBytes].
	MaxEventBytes int

	// readStamps, set by tests, stamps arrivals when reads return even
	// where the kernel's receive timestamps are available.
	readStamps bool

	once  sync.Once
	hc    *http.Client
	fresh *http.Client // for retries: never reuses a connection
}

// The defaults of the Client's limits on one response.
const (
	// DefaultMaxContentEvents is the content events' limit of a request
	// without MaxTokens: 262144, far beyond any answer a model writes
	// in one request, and 8 MiB of timestamps at most.
	DefaultMaxContentEvents = 1 << 18
	// DefaultMaxBytes is the largest default limit of the response body:
	// 64 MiB, about 200k events of a typical 300-byte chunk.
	DefaultMaxBytes = 64 << 20
	// DefaultMaxEventBytes is one event's limit: 4 MiB. A chunk is a few
	// hundred bytes; a server that sends its whole answer in one event
	// stays well below it.
	DefaultMaxEventBytes = 4 << 20
)

// Limits are the bounds of one response (see [Client.MaxEvents]): past
// one the request fails as [KindOverflow], keeping what came before it.
// bench --browser's relay applies the same bounds to what it relays.
type Limits struct {
	// ContentEvents bounds the content events (see [Content]).
	ContentEvents int
	// Events bounds the events of every kind.
	Events int
	// EventBytes bounds one event: the bytes of its lines, line ends not
	// counted.
	EventBytes int
	// Bytes bounds the response body, after the transfer coding.
	Bytes int64
}

// Limits returns the bounds of the response to a request with maxTokens
// (0 when not set): the Client's own (MaxContentEvents and the rest),
// their defaults where zero, none (the type's largest value) where
// negative. A zero Client gives the defaults.
func (c *Client) Limits(maxTokens int) Limits {
	l := Limits{ContentEvents: c.MaxContentEvents, Events: c.MaxEvents, Bytes: c.MaxBytes, EventBytes: c.MaxEventBytes}
	switch {
	case l.ContentEvents < 0:
		l.ContentEvents = math.MaxInt
	case l.ContentEvents == 0 && maxTokens > 0:
		l.ContentEvents = max(4096, min(maxTokens, math.MaxInt/8)*4)
	case l.ContentEvents == 0:
		l.ContentEvents = DefaultMaxContentEvents
	}
	switch {
	case l.Events < 0:
		l.Events = math.MaxInt
	case l.Events == 0:
		l.Events = min(l.ContentEvents, math.MaxInt/4)*2 + 1024
	}
	switch {
	case l.Bytes < 0:
		l.Bytes = math.MaxInt64
	case l.Bytes == 0:
		l.Bytes = int64(min(max(16<<20, min(l.ContentEvents, DefaultMaxBytes)*4<<10), DefaultMaxBytes))
	}
	switch {
	case l.EventBytes < 0:
		l.EventBytes = math.MaxInt / 2
	case l.EventBytes == 0:
		l.EventBytes = DefaultMaxEventBytes
	}
	return l
}

// Request is one request to send.
type Request struct {
	// ID is sent as X-Request-ID; "" gets a fresh unique id.
	ID string
	// Messages is the chat; when empty, Prompt is sent as one user message.
	Messages []api.Message
	// Prompt is the completions API's prompt; when empty there, the text
	// of the last message is sent.
	Prompt string
	// MaxTokens, when > 0, is sent as max_tokens.
	MaxTokens int
	// Temperature and Seed, when set, replace the Client's Options'.
	Temperature *float64
	Seed        *int64
	// OnToken, when set, is called after each content event is recorded,
	// with the event's index and arrival; it runs on the reading
	// goroutine, so it must be quick.
	OnToken func(i int, at time.Duration)
}

// NewTransport returns the transport a Client uses when HTTP is nil: HTTP/1.1
// with keep-alive, room for 1024 idle connections per host (enough for
// hundreds of concurrent streams to reuse theirs), and no compression, so
// that every event is handed over as soon as it is read. Its connections
// note when the bytes of each of their reads arrived (on Linux the
// kernel's receive timestamp, elsewhere the read's return), which the
// client takes as the arrival of the headers and events that read
// completed; a Client whose HTTP has another transport times events when
// its reads of the response body return.
func NewTransport() *http.Transport { return newTransport(true) }

// newTransport is NewTransport; kernel false stamps reads when they
// return even where the kernel's receive timestamps are available (for
// the benchmark's comparison).
func newTransport(kernel bool) *http.Transport {
	d := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
	}
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return newStampConn(c, kernel), nil
		},
		MaxIdleConns:          0, // no limit
		MaxIdleConnsPerHost:   1024,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	}
}

// NewRequestID returns a fresh unique request id: "tp-" and 128 random
// bits in base32 (crypto/rand).
func NewRequestID() string { return "tp-" + rand.Text() }

func (c *Client) init() {
	c.once.Do(func() {
		hc := http.Client{Transport: newTransport(!c.readStamps)}
		if c.HTTP != nil {
			hc = *c.HTTP // a copy: the caller's client is left as it is
		}
		hc.CheckRedirect = origin.CheckRedirect(hc.CheckRedirect) // see [Client.HTTP]
		c.hc = &hc
		var base *http.Transport
		switch t := c.hc.Transport.(type) {
		case nil:
			if dt, ok := http.DefaultTransport.(*http.Transport); ok {
				base = dt
			}
		case *http.Transport:
			base = t
		}
		if base == nil {
			c.fresh = c.hc // an unknown RoundTripper: retry through it as it is
			return
		}
		ft := base.Clone()
		ft.DisableKeepAlives = true
		fresh := *c.hc
		fresh.Transport = ft
		c.fresh = &fresh
	})
}

// endpoint returns the URL of an API path such as "/chat/completions".
func (c *Client) endpoint(p string) string {
	base := strings.TrimRight(c.BaseURL, "/")
	if strings.HasSuffix(base, "/v1") {
		return base + p
	}
	return base + "/v1" + p
}

// Root returns the server's root URL (BaseURL without "/v1"), where
// its /health, /metrics and /debug/pprof are.
func (c *Client) Root() string {
	return strings.TrimSuffix(strings.TrimRight(c.BaseURL, "/"), "/v1")
}

// Do sends req and reads its stream to the end. It never panics on what
// the server sends and never returns nil: every failure is recorded in the
// trace's Err with its kind. A request that fails on a reused keep-alive
// connection before any response byte is sent once more on a fresh
// connection, timed from the retry's start, and marked Retried.
func (c *Client) Do(ctx context.Context, req Request) *Trace {
	c.init()
	id := req.ID
	if id == "" {
		id = NewRequestID()
	}
	tr := &Trace{RequestID: id}
	if c.attempt(ctx, c.hc, req, tr) {
		tr = &Trace{RequestID: id, Retried: true}
		c.attempt(ctx, c.fresh, req, tr)
	}
	return tr
}

// body returns the request's path and JSON body: the request, the
// Client's Options, and the Options' ExtraBody merged over both.
func (c *Client) body(req Request) (string, []byte, error) {
	var usage *api.StreamOptions
	if !c.NoUsage {
		usage = &api.StreamOptions{IncludeUsage: true}
	}
	var maxTokens *int
	if req.MaxTokens > 0 {
		maxTokens = &req.MaxTokens
	}
	o := c.Options
	temperature, seed := o.Temperature, o.Seed
	if req.Temperature != nil {
		temperature = req.Temperature
	}
	if req.Seed != nil {
		seed = req.Seed
	}
	var (
		path string
		v    any
	)
	switch c.API {
	case "", "chat":
		msgs := req.Messages
		if len(msgs) == 0 {
			msgs = []api.Message{{Role: "user", Content: api.Content(req.Prompt)}}
		}
		path, v = "/chat/completions", api.ChatRequest{
			Model: c.Model, Messages: msgs, Stream: true, StreamOptions: usage,
			MaxTokens: maxTokens, Temperature: temperature, Seed: seed,
			TopP: o.TopP, TopK: o.TopK, Stop: api.Stop(o.Stop), IgnoreEOS: o.IgnoreEOS,
		}
	case "completions":
		prompt := req.Prompt
		if prompt == "" && len(req.Messages) > 0 {
			prompt = string(req.Messages[len(req.Messages)-1].Content)
		}
		path, v = "/completions", api.CompletionRequest{
			Model: c.Model, Prompt: api.Prompt(prompt), Stream: true, StreamOptions: usage,
			MaxTokens: maxTokens, Temperature: temperature, Seed: seed,
			TopP: o.TopP, TopK: o.TopK, Stop: api.Stop(o.Stop), IgnoreEOS: o.IgnoreEOS,
		}
	default:
		return "", nil, fmt.Errorf("unknown API %q (want chat or completions)", c.API)
	}
	b, err := json.Marshal(v)
	if err != nil || len(o.ExtraBody) == 0 {
		return path, b, err
	}
	extra, err := api.ExtraObject(o.ExtraBody)
	if err != nil {
		return "", nil, fmt.Errorf("extra body: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return "", nil, err
	}
	for k, x := range extra {
		m[k] = x
	}
	b, err = json.Marshal(m)
	return path, b, err
}

// phases collects the httptrace callbacks, which may run on the
// transport's goroutines.
type phases struct {
	start     time.Time
	stamp     atomic.Pointer[stampConn]
	reused    atomic.Bool
	conn      atomic.Int64
	sent      atomic.Int64
	firstByte atomic.Int64
}

func (p *phases) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			p.stamp.Store(connStamp(i.Conn))
			p.reused.Store(i.Reused)
			p.conn.Store(int64(time.Since(p.start)))
		},
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				p.sent.Store(int64(time.Since(p.start)))
			}
		},
		GotFirstResponseByte: func() {
			p.firstByte.Store(int64(p.arrival()))
		},
	}
}

// arrival returns, as an offset from the start, when the newest bytes the
// transport has read off the connection arrived: the connection's last
// read when it notes them (see [stampConn]), else now.
func (p *phases) arrival() time.Duration {
	if sc := p.stamp.Load(); sc != nil {
		if at := sc.lastRead().Sub(p.start); at > 0 {
			return at
		}
	}
	return time.Since(p.start)
}

// attempt sends req once through hc and fills tr. It returns true when the
// request failed on a reused connection before any response byte, and so
// should be retried on a fresh one.
func (c *Client) attempt(ctx context.Context, hc *http.Client, req Request, tr *Trace) (retry bool) {
	ph := &phases{}
	start := time.Now()
	ph.start = start
	tr.Start = start
	defer func() {
		tr.Conn = time.Duration(ph.conn.Load())
		tr.Sent = time.Duration(ph.sent.Load())
		tr.GotFirstByte = time.Duration(ph.firstByte.Load())
	}()

	path, body, err := c.body(req)
	if err != nil {
		tr.Err = &Error{Kind: KindConnect, Message: err.Error(), Err: err}
		return false
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, ph.trace()), http.MethodPost, c.endpoint(path), bytes.NewReader(body))
	if err != nil {
		tr.Err = &Error{Kind: KindConnect, Message: err.Error(), Err: err}
		return false
	}
	c.setHeaders(hreq.Header)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	c.userHeaders(hreq.Header)
	hreq.Header.Set(api.HeaderRequestID, tr.RequestID) // Request.ID, never Header, names the request

	resp, err := hc.Do(hreq)
	headers := ph.arrival()
	if err != nil {
		if ph.reused.Load() && ph.firstByte.Load() == 0 && ctx.Err() == nil {
			return true
		}
		tr.Err = classify(ctx, err, KindConnect, 0)
		return false
	}
	defer resp.Body.Close()
	tr.Headers = headers
	tr.Status = resp.StatusCode
	tr.EchoedID = resp.Header.Get(api.HeaderRequestID)

	if resp.StatusCode != http.StatusOK {
		msg := errorMessage(resp)
		tr.Err = &Error{Kind: KindHTTP, Status: resp.StatusCode, Message: msg}
		return false
	}
	if msg := notEventStream(resp.Header.Get("Content-Type")); msg != "" {
		tr.Err = &Error{Kind: KindMalformed, Status: resp.StatusCode, Message: msg}
		return false
	}
	c.read(ctx, resp.Body, ph.stamp.Load(), tr, req.MaxTokens, req.OnToken)
	return false
}

// notEventStream says why a 200 response with Content-Type ct cannot be
// read as a stream, or returns "" when it can: text/event-stream, or no
// Content-Type at all. Servers that omit the header but stream SSE exist
// (small proxies, hand-written test servers), and a body that is not SSE
// after all shows itself as a cut or malformed stream; a declared type
// other than text/event-stream (an HTML error page from a proxy, JSON
// from a server that ignored stream: true) says the server is not
// streaming, and is reported as such before any byte is read.
func notEventStream(ct string) string {
	if strings.TrimSpace(ct) == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	switch mt {
	case "text/event-stream":
		return ""
	case "application/json":
		return fmt.Sprintf("the response is %q, JSON, not an event stream (does the server stream?)", ct)
	}
	return fmt.Sprintf("the response is %q, not an event stream", ct)
}

// setHeaders sets the headers every request of the client carries.
func (c *Client) setHeaders(h http.Header) {
	h.Set("User-Agent", "tokenpulse")
	if c.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.APIKey)
	}
}

// userHeaders copies Client.Header into h, replacing what is there.
func (c *Client) userHeaders(h http.Header) {
	for k, vs := range c.Header {
		h[http.CanonicalHeaderKey(k)] = vs
	}
}

// newRequest builds a bodiless request for path under the server's root,
// with every header the client sends.
func (c *Client) newRequest(ctx context.Context, method, path string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.Root()+path, nil)
	if err != nil {
		return nil, err
	}
	c.setHeaders(req.Header)
	c.userHeaders(req.Header)
	return req, nil
}

// Models returns the model ids the server lists on GET /v1/models, in its
// order.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	c.init()
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/models")
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("models: %d: %s", resp.StatusCode, errorMessage(resp))
	}
	var list api.ModelList
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("models: decoding the answer: %w", err)
	}
	ids := make([]string, len(list.Data))
	for i, m := range list.Data {
		ids[i] = m.ID
	}
	return ids, nil
}

// bodyReader reads the response body: it notes when the first byte of
// the body arrived, read from clock (see [stampConn]) when the first read
// that returns bytes returns, and passes on at most max bytes, failing
// with errBodyLimit once the body holds more.
type bodyReader struct {
	r     io.Reader
	clock func() time.Time
	start time.Time
	at    time.Duration
	n     int64 // bytes passed on
	max   int64
}

// errBodyLimit is the error of a body longer than Client.MaxBytes.
var errBodyLimit = errors.New("response body over the limit")

func (f *bodyReader) Read(p []byte) (int, error) {
	if rest := f.max - f.n; int64(len(p)) > rest {
		p = p[:rest+1] // one more byte says whether the body goes on
	}
	n, err := f.r.Read(p)
	if n > 0 && f.at == 0 {
		f.at = f.clock().Sub(f.start)
	}
	if int64(n) > f.max-f.n {
		n = int(f.max - f.n)
		f.n = f.max
		return n, errBodyLimit
	}
	f.n += int64(n)
	return n, err
}

// errorChunk is an error object sent inside a stream (vLLM, OpenAI).
type errorChunk struct {
	Error json.RawMessage `json:"error"`
}

// read decodes the event stream into tr. An event's arrival is the
// instant of the read that delivered its terminating blank line: the
// connection's read when sc (the response's connection) is known, else
// the read of the body (see [stampConn] and [sse.RawEvent.At]), so
// nothing done after that read (the transport handing the response over,
// parsing, recording, a GC assist, being descheduled) moves it. The loop
// allocates nothing per ordinary event, so that it causes as little
// garbage collection, which pauses every stream's reader, as it can.
func (c *Client) read(ctx context.Context, body io.ReadCloser, sc *stampConn, tr *Trace, maxTokens int, onToken func(int, time.Duration)) {
	start := tr.Start
	clock := time.Now
	if sc != nil {
		clock = sc.lastRead
	}
	lim := c.Limits(maxTokens)
	fb := &bodyReader{r: body, clock: clock, start: start, max: lim.Bytes}
	dec := sse.NewDecoder(fb)
	dec.SetClock(clock)
	dec.SetMaxEventSize(lim.EventBytes)
	checkID := tr.EchoedID != "" && tr.EchoedID == tr.RequestID
	n := min(max(maxTokens, 16), 4096, lim.ContentEvents)
	if cap(tr.TokenTimes) < n {
		// Room for the whole answer up front: no growth mid-stream.
		tr.TokenTimes = make([]time.Duration, 0, n)
		tr.TokenCounts = make([]int, 0, n)
		tr.ServerTimes = make([]int64, 0, n)
		tr.TextEnds = make([]int, 0, n)
	}
	p := &chunkParser{text: make([]byte, 0, 8*n)}
	defer func() {
		tr.FirstByte = fb.at
		tr.Text = string(p.text)
	}()
	for {
		ev, err := dec.NextRaw()
		if err != nil {
			c.end(ctx, tr, err, lim)
			return
		}
		if tr.Events >= lim.Events {
			tr.Err = overflow(tr, fmt.Sprintf("more than %d events (Client.MaxEvents)", lim.Events))
			return
		}
		at := ev.At.Sub(start)
		if ev.Unterminated {
			// The stream ended before the blank line that would have
			// dispatched this event: WHATWG drops it, and so does the
			// client (the next call reports the cut), except a lone
			// "[DONE]", which some servers send without the blank line.
			if string(ev.Data) == "[DONE]" {
				tr.Events++
				tr.LastEvent = at
				tr.Done = true
				return
			}
			continue
		}
		tr.Events++
		if checkID && ev.ID != "" && ev.ID != tr.RequestID {
			tr.ForeignEvents++
			continue
		}
		last := tr.LastEvent
		tr.LastEvent = at
		if string(ev.Data) == "[DONE]" {
			tr.Done = true
			drain(body)
			return
		}
		if ev.Type == "error" {
			tr.Err = &Error{Kind: KindHTTP, Status: tr.Status, Message: "error event in stream: " + string(ev.Data)}
			return
		}
		if err := p.parse(ev.Data); err != nil {
			tr.Err = &Error{Kind: KindMalformed, Status: tr.Status, Message: fmt.Sprintf("event %d is not a JSON chunk: %v", tr.Events, err), Err: err}
			return
		}
		if p.hasError && p.choices == 0 && !p.hasUsage && !p.hasExt {
			var ec errorChunk
			if json.Unmarshal(ev.Data, &ec) == nil && len(ec.Error) > 0 && string(ec.Error) != "null" {
				tr.Err = &Error{Kind: KindHTTP, Status: tr.Status, Message: "error in stream: " + errorText(ec.Error)}
				return
			}
		}
		if p.hasFinish {
			tr.FinishReason = string(p.finish)
		}
		if p.hasUsage {
			u := p.usage
			tr.Usage = &u
		}
		if p.hasLlama {
			lt := p.llama
			tr.LlamaTimings = &lt
		}
		tokens, serverNS := 1, int64(0)
		if p.hasExt {
			if p.ext.Tokens > 1 {
				tokens = p.ext.Tokens
			}
			serverNS = p.ext.ServerNS
			if p.ext.Timings != nil {
				tr.Timings = p.ext.Timings
			}
		}
		if !p.token {
			continue
		}
		if len(tr.TokenTimes) >= lim.ContentEvents {
			// Keep the trace as it was before this event.
			tr.Events--
			tr.LastEvent = last
			p.text = p.text[:textEnd(tr)]
			tr.Err = overflow(tr, fmt.Sprintf("more than %d content events (Client.MaxContentEvents)", lim.ContentEvents))
			return
		}
		tr.CountsSent = p.hasExt && (tr.CountsSent || len(tr.TokenTimes) == 0)
		tr.TokenTimes = append(tr.TokenTimes, at)
		tr.TokenCounts = append(tr.TokenCounts, tokens)
		tr.ServerTimes = append(tr.ServerTimes, serverNS)
		before := textEnd(tr)
		tr.TextEnds = append(tr.TextEnds, len(p.text))
		if p.reasoning {
			tr.ReasoningEvents++
			if len(p.text) == before {
				tr.ReasoningRuns = runfile.ExtendRuns(tr.ReasoningRuns, len(tr.TokenTimes)-1)
			}
		}
		if onToken != nil {
			onToken(len(tr.TokenTimes)-1, at)
		}
	}
}

// textEnd is the length of the text of tr's content events.
func textEnd(tr *Trace) int {
	if n := len(tr.TextEnds); n > 0 {
		return tr.TextEnds[n-1]
	}
	return 0
}

// overflow is the error of a response that crossed one of the client's
// limits, which what says.
func overflow(tr *Trace, what string) *Error {
	return &Error{Kind: KindOverflow, Status: tr.Status, Message: OverflowMessage(what, tr.Events, len(tr.TokenTimes))}
}

// OverflowMessage is the message of a response stopped at a limit: what
// it sent ("more than 4096 content events"), and the events and content
// events kept before it.
func OverflowMessage(what string, events, content int) string {
	return fmt.Sprintf("the response sent %s; the request was stopped there, after %d events (%d content events)", what, events, content)
}

// end records how a stream that did not reach "[DONE]" ended.
func (c *Client) end(ctx context.Context, tr *Trace, err error, lim Limits) {
	complete := tr.FinishReason != ""
	switch {
	case errors.Is(err, errBodyLimit):
		tr.Err = overflow(tr, fmt.Sprintf("more than %d bytes (Client.MaxBytes)", lim.Bytes))
		tr.Err.Err = err
	case errors.Is(err, sse.ErrEventTooLarge):
		tr.Err = overflow(tr, fmt.Sprintf("an event of more than %d bytes (Client.MaxEventBytes)", lim.EventBytes))
		tr.Err.Err = err
	case errors.Is(err, io.ErrUnexpectedEOF):
		if !complete {
			tr.Err = &Error{Kind: KindCut, Status: tr.Status, Message: fmt.Sprintf("stream ended mid-event (no blank line after its last line; the event is dropped) without [DONE] or a finish reason, after %d content events", len(tr.TokenTimes))}
		}
	case errors.Is(err, io.EOF):
		if !complete {
			tr.Err = &Error{Kind: KindCut, Status: tr.Status, Message: fmt.Sprintf("stream ended without [DONE] or a finish reason after %d content events", len(tr.TokenTimes))}
		}
	case ctx.Err() != nil:
		tr.Err = classify(ctx, err, KindCut, tr.Status)
	case complete:
		// The answer was complete; the connection broke after it.
	default:
		tr.Err = classify(ctx, err, KindCut, tr.Status)
		if tr.Err.Kind == KindCut {
			tr.Err.Message = fmt.Sprintf("stream broken after %d content events: %v", len(tr.TokenTimes), err)
		}
	}
}

// classify turns a transport error into an Error, using fallback when it is
// neither a timeout nor a cancellation.
func classify(ctx context.Context, err error, fallback Kind, status int) *Error {
	kind := fallback
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		kind = KindTimeout
	case errors.Is(ctx.Err(), context.Canceled), errors.Is(err, context.Canceled):
		kind = KindCancelled
	case errors.As(err, &ne) && ne.Timeout():
		kind = KindTimeout
	}
	return &Error{Kind: kind, Status: status, Message: err.Error(), Err: err}
}

// drain reads what is left of a finished stream (normally only the end of
// the chunked body) so the connection can be reused, without waiting long
// for a server that keeps the stream open after "[DONE]".
func drain(body io.ReadCloser) {
	t := time.AfterFunc(100*time.Millisecond, func() { body.Close() })
	io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	t.Stop()
}

// errorMessage reads an error response's message: the OpenAI error
// object's message, a plain {"error": "..."} string, or the start of the
// body.
func errorMessage(resp *http.Response) string {
	if msg := origin.NotFollowed(resp); msg != "" {
		return msg
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb errorChunk
	if json.Unmarshal(b, &eb) == nil && len(eb.Error) > 0 {
		if msg := errorText(eb.Error); msg != "" {
			return msg
		}
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		s = http.StatusText(resp.StatusCode)
	}
	return s
}

// errorText returns the message of an "error" value: an OpenAI error
// object or a string.
func errorText(raw json.RawMessage) string {
	var d api.ErrorDetail
	if json.Unmarshal(raw, &d) == nil && d.Message != "" {
		return d.Message
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Abort asks the server to stop a request (POST /v1/abort?request_id=ID,
// tokenpulse's extension) and returns its answer.
func (c *Client) Abort(ctx context.Context, requestID string) (*api.AbortResponse, error) {
	c.init()
	req, err := c.newRequest(ctx, http.MethodPost, "/v1/abort?request_id="+url.QueryEscape(requestID))
	if err != nil {
		return nil, fmt.Errorf("abort: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("abort: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("abort: %d: %s", resp.StatusCode, errorMessage(resp))
	}
	var ar api.AbortResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ar); err != nil {
		return nil, fmt.Errorf("abort: decoding the answer: %w", err)
	}
	return &ar, nil
}

// Health reads the server's readiness (GET /health): the HTTP status (200
// ready, 503 warming up on tokenpulse serve) and the body when it is JSON.
func (c *Client) Health(ctx context.Context) (int, *api.Health, error) {
	c.init()
	req, err := c.newRequest(ctx, http.MethodGet, "/health")
	if err != nil {
		return 0, nil, fmt.Errorf("health: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	if msg := origin.NotFollowed(resp); msg != "" {
		return resp.StatusCode, nil, fmt.Errorf("health: %d: %s", resp.StatusCode, msg)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("health: reading the answer: %w", err)
	}
	var h api.Health
	if err := json.Unmarshal(b, &h); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("health: the answer is not JSON: %w", err)
	}
	return resp.StatusCode, &h, nil
}
