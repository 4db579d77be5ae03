package bench

import (
	"context"
	"sync"
	"time"

	"github.com/tokenpulse/tokenpulse/clock"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// openLoop sends cfg.Prompts[i] at cfg.Schedule[i] after the loop's
// origin, whatever became of the requests before it (an open loop: the
// target's slowness does not slow the arrivals, so no latency is
// omitted). At most cfg.Concurrency requests are in flight: a request
// due while the ceiling is reached waits for a slot, and the wait is part
// of its schedule lag. Each record carries its scheduled offset and its
// lag (t_start less the scheduled instant); TTFT and E2E stay from
// t_start.
func openLoop(ctx context.Context, cfg Config, prog *progress) []runfile.Request {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	c := max(cfg.Concurrency, 1)
	n := min(len(cfg.Schedule), len(cfg.Prompts))
	results := make([]slot, n)
	slots := make(chan struct{}, c)
	var wg sync.WaitGroup
	origin := clk.Now()
dispatch:
	for i := range n {
		at := cfg.Schedule[i]
		if clk.SleepUntil(ctx, origin.Add(at)) != nil {
			break
		}
		// A request that finds the ceiling reached waits for a slot; its
		// slot wait runs from its due instant (the dispatcher may have
		// been held past it by the requests before, also at the ceiling).
		var waited time.Duration
		select {
		case slots <- struct{}{}:
		default:
			if cfg.atCeiling != nil {
				cfg.atCeiling(i)
			}
			select {
			case slots <- struct{}{}:
				waited = max(clk.Now().Sub(origin)-at, 0)
			case <-ctx.Done():
				break dispatch
			}
		}
		wg.Add(1)
		dispatched := clk.Now()
		go func() {
			defer wg.Done()
			r := one(ctx, cfg, cfg.Prompts[i])
			<-slots
			if ctx.Err() != nil && r.ErrorKind == "cancelled" {
				return // cut short by the run's end, not measured
			}
			start := r.StartedAt
			if start.IsZero() {
				start = dispatched
			}
			sched := int64(at)
			r.ScheduledNS = &sched
			r.ScheduleLagNS = int64(start.Sub(origin) - at)
			r.SlotWaitNS = int64(waited)
			results[i] = slot{r: r, done: true}
			prog.add("measure", i, &results[i].r)
		}()
	}
	wg.Wait()
	return finished(results)
}
