package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Causes of a request's cancellation, read with context.Cause.
var (
	errAborted  = errors.New("aborted by request")
	errShutdown = errors.New("server shutting down")
)

// maxRequestID is the longest request id honoured, in bytes.
const maxRequestID = 128

// ValidRequestID reports whether id may be used as a request id: 1 to 128
// bytes of printable ASCII (space through tilde).
func ValidRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// NewRequestID returns a fresh request id: 128 random bits from
// crypto/rand, hex-encoded.
func NewRequestID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// entry is one request the server is running or holding in its queue.
type entry struct {
	id      string
	keyHash [32]byte
	cancel  context.CancelCauseFunc
	// canceled is the request context's Done channel.
	canceled <-chan struct{}

	// produced counts tokens emitted to the client; afterAbort counts
	// tokens the backend produced after the request's context was done.
	produced   atomic.Int64
	afterAbort atomic.Int64

	mu      sync.Mutex
	abortAt time.Time // when the first abort arrived
	stopAt  time.Time // when the backend returned
	done    chan struct{}
}

// abort cancels the request with cause and records when the abort arrived
// (the first one counts).
func (e *entry) abort(cause error) {
	e.mu.Lock()
	if e.abortAt.IsZero() {
		e.abortAt = time.Now()
	}
	e.mu.Unlock()
	e.cancel(cause)
}

// finish records that generation has stopped and wakes abort waiters.
func (e *entry) finish() {
	e.mu.Lock()
	e.stopAt = time.Now()
	e.mu.Unlock()
	close(e.done)
}

// registry maps the ids of running and queued requests to their entries.
type registry struct {
	mu sync.Mutex
	m  map[string]*entry
}

func newRegistry() *registry { return &registry{m: make(map[string]*entry)} }

// add registers e; it reports false when the id is already in use.
func (r *registry) add(e *entry) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[e.id]; dup {
		return false
	}
	r.m[e.id] = e
	return true
}

func (r *registry) remove(e *entry) {
	r.mu.Lock()
	if r.m[e.id] == e {
		delete(r.m, e.id)
	}
	r.mu.Unlock()
}

func (r *registry) get(id string) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[id]
}

// cancelAll aborts every registered request with cause and returns how
// many there were.
func (r *registry) cancelAll(cause error) int {
	r.mu.Lock()
	es := make([]*entry, 0, len(r.m))
	for _, e := range r.m {
		es = append(es, e)
	}
	r.mu.Unlock()
	for _, e := range es {
		e.abort(cause)
	}
	return len(es)
}
