package mock

import (
	"context"
	"net"

	"github.com/tokenpulse/tokenpulse/internal/server"
)

// Serve serves a backend of profile p through the real server on a
// loopback port, warmed up, and returns its base URL and the function that
// stops it. The runnable examples of the public packages measure against
// it.
//
//	url, stop, err := mock.Serve(mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 6})
//	defer stop()
func Serve(p Profile) (url string, stop func(), err error) {
	srv, err := server.New(New(p, nil), server.Options{Parallel: 8})
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	stop = func() { cancel(); <-done }
	if err := srv.WarmUp(ctx); err != nil {
		stop()
		return "", nil, err
	}
	return "http://" + ln.Addr().String(), stop, nil
}
