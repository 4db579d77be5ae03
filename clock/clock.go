// Package clock is the time source of tokenpulse's scheduled work (the
// mock's token pacing, the open loop's arrivals): an interface, so that
// tests move time themselves instead of waiting on the wall clock, and
// Real, the monotonic clock of package time.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and sleeps until a given instant.
type Clock interface {
	// Now returns the current time (with a monotonic reading).
	Now() time.Time
	// SleepUntil returns once Now() is at or after t (at once when t has
	// passed), or with ctx's error when ctx is done first.
	SleepUntil(ctx context.Context, t time.Time) error
}

// Real is the monotonic clock of package time.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// SleepUntil waits on a timer until t or until ctx is done.
func (Real) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
