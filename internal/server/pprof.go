package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
)

// PprofPrefix is where Options.Pprof mounts Go's profiling handlers.
const PprofPrefix = "/debug/pprof/"

// ErrPprofExposed is returned when Options.Pprof is asked on a
// non-loopback address without an API key: profiles and goroutine dumps
// show the process's insides, and a CPU profile costs it time, so they are
// served to loopback or to holders of the key only (Insecure does not
// lift this).
var ErrPprofExposed = errors.New("server: refusing to serve /debug/pprof beyond loopback without an API key (set one, or listen on 127.0.0.1)")

// checkPprof refuses /debug/pprof on a non-loopback address without a key.
func (s *Server) checkPprof(addr string) error {
	if !s.o.Pprof || len(s.keys) > 0 || IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrPprofExposed, addr)
}

// mountPprof serves net/http/pprof's handlers under PprofPrefix, behind
// the API key when one is set.
func (s *Server) mountPprof(mux *http.ServeMux) {
	if !s.o.Pprof {
		return
	}
	plain := func(h http.HandlerFunc) http.Handler {
		return s.authed(func(w http.ResponseWriter, r *http.Request, _ [32]byte) { h(w, r) })
	}
	mux.Handle(PprofPrefix, plain(pprof.Index))
	mux.Handle(PprofPrefix+"cmdline", plain(pprof.Cmdline))
	mux.Handle(PprofPrefix+"profile", plain(pprof.Profile))
	mux.Handle(PprofPrefix+"symbol", plain(pprof.Symbol))
	mux.Handle(PprofPrefix+"trace", plain(pprof.Trace))
}
