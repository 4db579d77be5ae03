package main

import (
	"context"
	"io"
)

// ctxWriter fails its writes once ctx is done, so that a long write that
// takes no context (model synth's) stops at its next write, and the
// caller removes what it had written.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
