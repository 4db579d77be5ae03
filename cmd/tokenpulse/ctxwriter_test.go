package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestCtxWriter: writes pass through until the context is done, then
// fail with its error and write nothing.
func TestCtxWriter(t *testing.T) {
	var buf bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	w := ctxWriter{ctx, &buf}
	if n, err := w.Write([]byte("ab")); n != 2 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	cancel()
	if n, err := w.Write([]byte("cd")); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: Write = %d, %v; want 0, context.Canceled", n, err)
	}
	if buf.String() != "ab" {
		t.Errorf("wrote %q, want %q", buf.String(), "ab")
	}
}
