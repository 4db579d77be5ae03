package browserbench

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/chatpage"
	"github.com/tokenpulse/tokenpulse/stats"
)

// Relay is the local origin the page is served from: it serves the chat
// page at / and relays /v1/* to the target, so that no target needs
// CORS. It writes each chunk of an answer on as soon as it reads it, and
// records for every relayed request how long it held it: from receiving
// the request to sending it on, and from reading each chunk of the answer
// to flushing it to the page.
//
// A Relay is safe for concurrent use.
type Relay struct {
	target *url.URL
	header http.Header
	client *http.Client
	srv    *http.Server
	ln     net.Listener

	mu    sync.Mutex
	holds []time.Duration // every hold, pooled: request forwarding and chunk flushes
}

// NewRelay starts a relay on a free loopback port in front of target (a
// base URL such as http://127.0.0.1:8080); header is added to every
// relayed request (the API key, -H). Close stops it.
func NewRelay(target string, header http.Header) (*Relay, error) {
	u, err := url.Parse(strings.TrimRight(target, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("relay: target must be an http(s) base URL, not " + target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Relay{target: u, header: header, ln: ln,
		client: &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 16}}}
	page := chatpage.Handler()
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.HandlerFunc(r.relay))
	mux.Handle("/", page)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

// URL is the relay's origin, http://127.0.0.1:PORT.
func (r *Relay) URL() string { return "http://" + r.ln.Addr().String() }

// Close stops the relay.
func (r *Relay) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return r.srv.Shutdown(ctx)
}

// Holds returns every hold recorded so far, in ms: each request's time
// from arriving to being sent on, and each chunk's time from being read
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

// relay sends the request on to the target and copies its answer back,
// flushing each chunk as it comes.
func (r *Relay) relay(w http.ResponseWriter, req *http.Request) {
	got := time.Now()
	u := *r.target
	u.Path = r.target.Path + req.URL.Path
	u.RawQuery = req.URL.RawQuery
	out, err := http.NewRequestWithContext(req.Context(), req.Method, u.String(), req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.ContentLength = req.ContentLength
	for _, k := range []string{"Content-Type", "Accept", api.HeaderRequestID, "Authorization"} {
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
	for k, vs := range resp.Header {
		if k == "Content-Length" || k == "Connection" {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			read := time.Now()
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			r.hold(time.Since(read))
		}
		if err != nil {
			return // io.EOF, or the target or the page went away
		}
	}
}
