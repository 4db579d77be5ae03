package retry

import (
	"context"
	"testing"
	"time"
)

func TestZeroPolicyIsTheDefault(t *testing.T) {
	p := Policy{}.Resolved()
	if p.Attempts != 5 || p.Backoff != time.Second || p.MaxBackoff != 30*time.Second {
		t.Fatalf("zero policy = %+v, want 5 attempts, 1 s backoff, 30 s cap", p)
	}
	var zero Policy
	var waits []time.Duration
	try := 1
	for ; zero.Again(try); try++ {
		waits = append(waits, zero.Wait(try))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	if try != 5 || len(waits) != len(want) {
		t.Fatalf("tried %d times with waits %v, want 5 with %v", try, waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Errorf("wait %d = %v, want %v", i+1, waits[i], want[i])
		}
	}
}

func TestWaitIsCapped(t *testing.T) {
	p := Policy{Attempts: 10, Backoff: 10 * time.Second}
	got := []time.Duration{p.Wait(1), p.Wait(2), p.Wait(3), p.Wait(9)}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("waits = %v, want %v", got, want)
			break
		}
	}
	if w := (Policy{Backoff: time.Minute}).Wait(1); w != time.Minute {
		t.Errorf("a backoff above the default cap waits %v, want it as given (1m)", w)
	}
}

func TestSleepStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on a cancelled context = %v, want context.Canceled", err)
	}
}
