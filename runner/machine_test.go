package runner

import (
	"testing"
	"time"
)

// TestWatchMachine: the watch records how far past the period each
// scripted sleep lasted, and summarises those delays (a sleep shorter
// than the period counts as on time).
func TestWatchMachine(t *testing.T) {
	lates := make(chan time.Duration, 200)
	for i := range 100 {
		lates <- time.Duration(i) * time.Millisecond / 10 // 0, 0.1, … 9.9 ms late
	}
	lates <- -time.Millisecond // woke early
	sleep := func(d time.Duration) time.Duration {
		select {
		case l := <-lates:
			return d + l
		default:
			time.Sleep(time.Millisecond) // the script is spent: idle until stopped
			return d
		}
	}
	stop := watchMachine(sleep)
	for len(lates) > 0 {
		time.Sleep(time.Millisecond)
	}
	m := stop()
	if m == nil || m.Samples < 101 {
		t.Fatalf("noise %+v, want at least the 101 scripted samples", m)
	}
	if m.WakeLateMaxMs != 9.9 || m.PeriodMs != 5 {
		t.Errorf("max %v ms, period %v ms; want 9.9 and 5", m.WakeLateMaxMs, m.PeriodMs)
	}
	if m.WakeLateP99Ms <= 0 || m.WakeLateP99Ms > 9.9 || m.WakeLateP50Ms > m.WakeLateP99Ms {
		t.Errorf("p50 %v, p99 %v ms: not ordered within the scripted range", m.WakeLateP50Ms, m.WakeLateP99Ms)
	}
	if machineNoise(nil) != nil {
		t.Error("no sample gave a summary")
	}
}
