package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// shutdownOnSignals is how a serving command (serve, mock) stops: the
// first SIGINT or SIGTERM ends the returned context, a graceful shutdown
// in which running streams get their grace; a second one exits the
// process at once. name is the command, for the messages on w. stop ends
// the watch and the signals' delivery.
func shutdownOnSignals(parent context.Context, name string, w io.Writer) (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, stopWatch := watchSignals(parent, name, sigs, w, os.Exit)
	return ctx, func() {
		signal.Stop(sigs)
		stopWatch()
	}
}

// watchSignals ends the returned context at the first signal on sigs (a
// graceful shutdown), and at a second one says so on w and calls exit at
// once (with 128 + the signal's number), for when the grace is too long
// to wait. stop ends the watch.
func watchSignals(parent context.Context, name string, sigs <-chan os.Signal, w io.Writer, exit func(int)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintf(w, "tokenpulse %s: shutting down; a second Ctrl-C exits at once\n", name)
		cancel()
		select {
		case sig := <-sigs:
			code := 1
			if n, ok := sig.(syscall.Signal); ok {
				code = 128 + int(n)
			}
			fmt.Fprintf(w, "tokenpulse %s: second %v: exiting at once, without waiting for running streams\n", name, sig)
			exit(code)
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() { once.Do(func() { close(done); cancel() }) }
}
