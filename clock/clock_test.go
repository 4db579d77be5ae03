package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRealSleepUntil(t *testing.T) {
	var c Real
	if err := c.SleepUntil(context.Background(), c.Now().Add(-time.Second)); err != nil {
		t.Errorf("past deadline: err = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.SleepUntil(ctx, c.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
	before := c.Now()
	target := before.Add(2 * time.Millisecond)
	if err := c.SleepUntil(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	if now := c.Now(); now.Before(target) {
		t.Errorf("woke at %v, before the deadline %v", now, target)
	}
}
