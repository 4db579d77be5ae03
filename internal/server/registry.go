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
	// admitted is set once the request has a generation slot.
	admitted atomic.Bool

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

// regKey names a request: ids are per API key, so that one caller can
// neither see nor collide with another's ids.
type regKey struct {
	key [32]byte
	id  string
}

// registry maps the ids of running and queued requests to their entries.
type registry struct {
	mu sync.Mutex
	m  map[regKey]*entry
}

func newRegistry() *registry { return &registry{m: make(map[regKey]*entry)} }

// add registers e; it reports false when its key already has a request
// with this id.
func (r *registry) add(e *entry) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := regKey{e.keyHash, e.id}
	if _, dup := r.m[k]; dup {
		return false
	}
	r.m[k] = e
	return true
}

func (r *registry) remove(e *entry) {
	r.mu.Lock()
	k := regKey{e.keyHash, e.id}
	if r.m[k] == e {
		delete(r.m, k)
	}
	r.mu.Unlock()
}

// get returns the request with this id made with this key, or nil.
func (r *registry) get(key [32]byte, id string) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[regKey{key, id}]
}

// cancelAll aborts every registered request with cause and returns how
// many there were.
func (r *registry) cancelAll(cause error) int {
	return r.cancelIf(cause, func(*entry) bool { return true })
}

// cancelQueued aborts, with cause, the requests still waiting for a slot.
func (r *registry) cancelQueued(cause error) int {
	return r.cancelIf(cause, func(e *entry) bool { return !e.admitted.Load() })
}

func (r *registry) cancelIf(cause error, pick func(*entry) bool) int {
	r.mu.Lock()
	es := make([]*entry, 0, len(r.m))
	for _, e := range r.m {
		if pick(e) {
			es = append(es, e)
		}
	}
	r.mu.Unlock()
	for _, e := range es {
		e.abort(cause)
	}
	return len(es)
}
