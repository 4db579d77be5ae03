package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// reserveConns is how many connections beyond MaxConns are still read,
// each for one request and for at most HeaderTimeout: enough to answer
// /health (a load balancer's probe) while silent clients hold every
// ordinary slot. Other routes get 503 on such a connection.
const reserveConns = 16

// rejecting bounds the goroutines that answer connections beyond the
// reserve with a bare 503; beyond it they are closed without a word.
const rejecting = 64

// rejectLinger bounds how long a rejected connection is read (and
// discarded) after its 503, so that closing it does not reset the 503
// away before the client has read it.
const rejectLinger = 50 * time.Millisecond

// busyResponse is written, before the request is read, to a connection
// beyond MaxConns and the reserve.
var busyResponse = func() string {
	body := `{"error":{"message":"too many open connections; retry later","type":"server_error","param":null,"code":"too_many_connections"}}` + "\n"
	return "HTTP/1.1 503 Service Unavailable\r\n" +
		"Content-Type: application/json\r\n" +
		"Retry-After: 1\r\n" +
		"Connection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}()

// limitListener caps the connections open at once: up to max ordinary
// ones, then up to reserve ones for one short request each (see
// reserveConns), then every further connection is answered 503 at once
// and closed. Unlike a listener that stops accepting, it never leaves a
// client (or a health probe) waiting in the kernel's backlog.
type limitListener struct {
	net.Listener
	max, reserve int
	// deadline bounds the whole life of a reserve connection.
	deadline time.Duration
	m        *metrics

	mu           sync.Mutex
	normal, over int
	rejectors    atomic.Int32
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		switch {
		case l.normal < l.max:
			l.normal++
			l.mu.Unlock()
			l.m.conns.Inc()
			return &limitedConn{Conn: c, l: l}, nil
		case l.over < l.reserve:
			l.over++
			l.mu.Unlock()
			l.m.conns.Inc()
			c.SetDeadline(time.Now().Add(l.deadline))
			return &limitedConn{Conn: c, l: l, overflow: true}, nil
		}
		l.mu.Unlock()
		l.m.rejected.Inc()
		l.reject(c)
	}
}

// reject answers c with a bare 503 and closes it, without waiting for
// its request.
func (l *limitListener) reject(c net.Conn) {
	if l.rejectors.Add(1) > rejecting {
		l.rejectors.Add(-1)
		c.Close()
		return
	}
	go func() {
		defer l.rejectors.Add(-1)
		defer c.Close()
		c.SetDeadline(time.Now().Add(rejectLinger))
		if _, err := io.WriteString(c, busyResponse); err != nil {
			return
		}
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

func (l *limitListener) release(overflow bool) {
	l.mu.Lock()
	if overflow {
		l.over--
	} else {
		l.normal--
	}
	l.mu.Unlock()
	l.m.conns.Dec()
}

// limitedConn gives its slot back when closed.
type limitedConn struct {
	net.Conn
	l        *limitListener
	overflow bool
	once     sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.overflow) })
	return err
}

// overflowKey marks, in a request's context, a connection accepted beyond
// MaxConns.
type overflowKey struct{}

// connContext marks the requests of reserve connections.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok && lc.overflow {
		return context.WithValue(ctx, overflowKey{}, true)
	}
	return ctx
}

// guard applies the connection limits to every request: on a reserve
// connection only GET /health is served (and the connection closed
// after it); a request body must arrive within BodyTimeout; and an
// answer given without reading the body (401, 404, 503 ...) is sent at
// once, closing the connection, instead of after the body.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Now().Add(s.o.BodyTimeout))
			wb := &watchedBody{ReadCloser: r.Body, rc: rc}
			r.Body = wb
			w = &bodyGuard{ResponseWriter: w, rc: rc, body: wb}
		}
		if r.Context().Value(overflowKey{}) != nil {
			w.Header().Set("Connection", "close")
			if r.URL.Path != "/health" {
				w.Header().Set("Retry-After", "1")
				writeError(w, http.StatusServiceUnavailable, "server_error", "", "too_many_connections", "too many open connections; retry later")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// watchedBody records that a request body was read to its end, and then
// lifts the body's read deadline: the connection is next read only to
// notice a client that leaves, which must not time out.
type watchedBody struct {
	io.ReadCloser
	rc  *http.ResponseController
	eof atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.eof.Swap(true) {
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// bodyGuard closes the connection after an answer written before the
// request body was read, and stops net/http from reading (and waiting
// for) that body before and after the answer.
type bodyGuard struct {
	http.ResponseWriter
	rc    *http.ResponseController
	body  *watchedBody
	wrote bool
}

func (g *bodyGuard) check() {
	if g.wrote {
		return
	}
	g.wrote = true
	if !g.body.eof.Load() {
		g.Header().Set("Connection", "close")
		g.rc.SetReadDeadline(time.Now())
	}
}

// WriteHeader implements http.ResponseWriter.
func (g *bodyGuard) WriteHeader(code int) {
	g.check()
	g.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (g *bodyGuard) Write(b []byte) (int, error) {
	g.check()
	return g.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (g *bodyGuard) Flush() {
	g.check()
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (g *bodyGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// isTimeout reports whether err is a read that ran past its deadline.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
