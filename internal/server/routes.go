package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/chatpage"
)

// routes builds the handler of every route.
func (s *Server) routes(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/chat/completions", s.only(http.MethodPost, s.authed(func(w http.ResponseWriter, r *http.Request, key [32]byte) {
		s.handleCompletion(w, r, key, true)
	})))
	mux.Handle("/v1/completions", s.only(http.MethodPost, s.authed(func(w http.ResponseWriter, r *http.Request, key [32]byte) {
		s.handleCompletion(w, r, key, false)
	})))
	mux.Handle("/v1/models", s.only(http.MethodGet, s.authed(s.handleModels)))
	mux.Handle("/v1/abort", s.only(http.MethodPost, s.authed(s.handleAbort)))
	mux.Handle("/health", s.only(http.MethodGet, http.HandlerFunc(s.handleHealth)))
	mux.Handle("/metrics", s.only(http.MethodGet, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	s.mountPprof(mux)
	page := chatpage.Handler()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if chatpage.Serves(r.URL.Path) && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			page.ServeHTTP(w, r)
			return
		}
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "not_found", "no route for "+r.URL.Path)
	})
	return s.track(s.guard(mux))
}

// track counts request goroutines so that Serve can wait for them.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.add(1)
		defer s.inflight.add(-1)
		h.ServeHTTP(w, r)
	})
}

// only answers 405 with an OpenAI-shaped error to any other method.
func (s *Server) only(method string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "method_not_allowed", r.Method+" is not allowed here; use "+method)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authed checks the API key and passes the hash of the key presented.
func (s *Server) authed(h func(http.ResponseWriter, *http.Request, [32]byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := s.authorize(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "", "invalid_api_key", "missing or invalid API key")
			return
		}
		h(w, r, key)
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	h := s.warm.Load()
	if reason := s.broken.Load(); reason != nil {
		b := *h
		b.Status, b.Reason = "broken", *reason
		writeJSON(w, http.StatusServiceUnavailable, &b)
		return
	}
	status := http.StatusOK
	if h.Status != "ready" || s.closing.Load() {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, h)
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request, _ [32]byte) {
	list := api.ModelList{Object: "list", Data: []api.Model{}}
	for _, m := range s.b.Models() {
		list.Data = append(list.Data, api.Model{ID: m, Object: "model", OwnedBy: "tokenpulse"})
	}
	writeJSON(w, http.StatusOK, list)
}

// handleAbort stops a running or queued request and waits (at most
// AbortWait) until its generation has stopped, then says how many tokens
// were produced after the abort arrived.
func (s *Server) handleAbort(w http.ResponseWriter, r *http.Request, key [32]byte) {
	id := r.URL.Query().Get("request_id")
	if !ValidRequestID(id) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "request_id", "invalid_request_id", "request_id must be 1 to 128 printable ASCII bytes")
		return
	}
	// Ids are per key: a request made with another key is unknown here.
	e := s.reg.get(key, id)
	if e == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "request_id", "request_not_found", "no running or queued request with this id")
		return
	}
	e.abort(errAborted)
	t := time.NewTimer(s.o.AbortWait)
	defer t.Stop()
	select {
	case <-e.done:
	case <-t.C:
		s.log.Warn("abort: generation did not stop in time", "request_id", id, "wait", s.o.AbortWait)
	case <-r.Context().Done():
		return
	}
	e.mu.Lock()
	abortAt, stopAt := e.abortAt, e.stopAt
	e.mu.Unlock()
	stop := time.Since(abortAt)
	if !stopAt.IsZero() {
		stop = max(stopAt.Sub(abortAt), 0)
	}
	writeJSON(w, http.StatusOK, api.AbortResponse{
		RequestID:        id,
		Aborted:          true,
		TokensAfterAbort: int(e.afterAbort.Load()),
		OutputTokens:     int(e.produced.Load()),
		StopNS:           int64(stop),
	})
}

// bufPool holds buffers for JSON encoding.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// marshal encodes v as JSON without HTML escaping and without the trailing
// newline. The caller must return buf to bufPool.
func marshal(v any) (*bytes.Buffer, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		bufPool.Put(buf)
		return nil, err
	}
	buf.Truncate(buf.Len() - 1)
	return buf, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	buf, err := marshal(v)
	if err != nil {
		http.Error(w, `{"error":{"message":"encoding failed","type":"server_error","param":null,"code":null}}`, http.StatusInternalServerError)
		return
	}
	defer bufPool.Put(buf)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	buf.WriteByte('\n')
	w.Write(buf.Bytes())
}

// writeError writes an OpenAI-shaped error body.
func writeError(w http.ResponseWriter, status int, typ, param, code, msg string) {
	writeRequestError(w, &RequestError{Status: status, Type: typ, Param: param, Code: code, Message: msg})
}

// writeRequestError writes a rejection or failure as the HTTP answer.
func writeRequestError(w http.ResponseWriter, e *RequestError) {
	status, d := e.answer()
	writeJSON(w, status, api.ErrorBody{Error: d})
}

// answer is how e is answered: its HTTP status and OpenAI-shaped error
// body. It is the one mapping for both ways a request fails: the HTTP
// answer before a stream begins (writeRequestError) and the stream's
// error event after (output.fail), so a client reads the same type and
// code whenever the failure came. A status outside 4xx/5xx is 400; a
// missing type is invalid_request_error below 500, server_error from it.
func (e *RequestError) answer() (int, api.ErrorDetail) {
	status, typ := e.Status, e.Type
	if status < 400 || status > 599 {
		status = http.StatusBadRequest
	}
	if typ == "" {
		typ = "invalid_request_error"
		if status >= 500 {
			typ = "server_error"
		}
	}
	d := api.ErrorDetail{Message: e.Message, Type: typ}
	if e.Param != "" {
		d.Param = &e.Param
	}
	if e.Code != "" {
		d.Code = &e.Code
	}
	return status, d
}

// statusWriter remembers the status written, for the requests counter.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader implements http.ResponseWriter.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
