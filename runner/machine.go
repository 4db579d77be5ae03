package runner

import (
	"slices"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// WakePeriod is how often the machine watch of a run ([watchMachine])
// sleeps and measures how late it woke.
const WakePeriod = 5 * time.Millisecond

// watchMachine measures, while a run lasts, how late a goroutine that
// sleeps WakePeriod wakes on this machine: the scheduling delay any
// goroutine of the run (the client's readers, an embedded server's
// workers) meets, as cyclictest measures a kernel's. A run on a machine
// busy with other work shows it here whatever its target did, which is
// what lets a comparison tell a noisy runner from a slower target
// (package compare). It costs one wake-up per period and allocates only
// to grow its list of samples. stop ends the watch and returns what it
// saw (nil when it saw nothing).
func watchMachine(sleep func(time.Duration) time.Duration) (stop func() *runfile.MachineNoise) {
	done := make(chan struct{})
	out := make(chan []time.Duration, 1)
	go func() {
		late := make([]time.Duration, 0, 4096)
		for {
			select {
			case <-done:
				out <- late
				return
			default:
			}
			late = append(late, max(sleep(WakePeriod)-WakePeriod, 0))
		}
	}()
	return func() *runfile.MachineNoise {
		close(done)
		return machineNoise(<-out)
	}
}

// sleepFor sleeps d and returns how long it slept, on the monotonic clock.
func sleepFor(d time.Duration) time.Duration {
	t := time.Now()
	time.Sleep(d)
	return time.Since(t)
}

// machineNoise summarises the lateness of the watch's wake-ups.
func machineNoise(late []time.Duration) *runfile.MachineNoise {
	if len(late) == 0 {
		return nil
	}
	slices.Sort(late)
	ms := make([]float64, len(late))
	for i, d := range late {
		ms[i] = stats.Millis(int64(d))
	}
	return &runfile.MachineNoise{
		PeriodMs:      stats.Millis(int64(WakePeriod)),
		Samples:       len(ms),
		WakeLateP50Ms: stats.Percentile(ms, 50),
		WakeLateP99Ms: stats.Percentile(ms, 99),
		WakeLateMaxMs: ms[len(ms)-1],
	}
}
