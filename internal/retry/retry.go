// Package retry is tokenpulse's one retry policy for what it sends to
// other services: the alert webhook (package notify) and the files it
// publishes (package publish). Both try DefaultAttempts times, waiting
// DefaultBackoff before the second attempt and twice as long before each
// next, up to DefaultMaxBackoff. What counts as worth another attempt
// (a 5xx, a 429, throttling, a network error) stays with each caller,
// since only it can read its service's answers.
//
//	p := retry.Policy{}.Resolved() // 5 attempts; waits 1 s, 2 s, 4 s, 8 s
//	for try := 1; ; try++ {
//		err := send()
//		if err == nil || !p.Again(try) {
//			return err
//		}
//		retry.Sleep(ctx, p.Wait(try))
//	}
package retry

import (
	"context"
	"time"

	"github.com/tokenpulse/tokenpulse/clock"
)

// The defaults a zero Policy stands for.
const (
	// DefaultAttempts is how many times one thing is tried at most: four
	// retries, 15 s of waiting at the default backoff.
	DefaultAttempts = 5
	// DefaultBackoff is the wait before the second attempt.
	DefaultBackoff = time.Second
	// DefaultMaxBackoff caps each doubled wait.
	DefaultMaxBackoff = 30 * time.Second
)

// Policy says how often to try and how long to wait between attempts.
// A zero field means its default.
type Policy struct {
	// Attempts is how many times one thing is tried at most (default
	// DefaultAttempts).
	Attempts int
	// Backoff is the wait before the second attempt; it doubles after each
	// failed attempt (default DefaultBackoff).
	Backoff time.Duration
	// MaxBackoff caps each wait (default DefaultMaxBackoff).
	MaxBackoff time.Duration
}

// Resolved returns p with each zero or negative field set to its default.
func (p Policy) Resolved() Policy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultAttempts
	}
	if p.Backoff <= 0 {
		p.Backoff = DefaultBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = DefaultMaxBackoff
	}
	if p.MaxBackoff < p.Backoff {
		p.MaxBackoff = p.Backoff
	}
	return p
}

// Again reports whether another attempt follows the failed attempt number
// try (counted from 1).
func (p Policy) Again(try int) bool {
	return try < p.Resolved().Attempts
}

// Wait is how long to wait after the failed attempt number try (counted
// from 1) before the next: Backoff doubled try−1 times, at most MaxBackoff.
func (p Policy) Wait(try int) time.Duration {
	p = p.Resolved()
	d := p.Backoff
	for i := 1; i < try && d < p.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.MaxBackoff)
}

// Sleep waits d, or until ctx is done and then returns its error (the
// real clock's wait, package clock).
func Sleep(ctx context.Context, d time.Duration) error {
	return clock.Real{}.SleepUntil(ctx, time.Now().Add(d))
}
