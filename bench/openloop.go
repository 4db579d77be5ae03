package bench

import (
	"context"
	"sync"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/suite"
)

// openLoop sends cfg.Prompts[i] at cfg.Schedule[i] after the loop's
// origin (or each arrival of cfg.Replay at its time, read as it comes
// due), whatever became of the requests before it (an open loop: the
// target's slowness does not slow the arrivals, so no latency is
// omitted). At most cfg.Concurrency requests are in flight: a request
// due while the ceiling is reached waits for a slot, and the wait is part
// of its schedule lag. Each record carries its scheduled offset and its
// lag (t_start less the scheduled instant); TTFT and E2E stay from
// t_start. A conversation arrives on the schedule and holds its slot
// until its last turn ends; each later turn is due when the answer
// before it ended plus its think time, and its lag is counted from then.
// The error is the replay's, should reading it fail.
func openLoop(ctx context.Context, cfg Config, prog *progress) ([]runfile.Request, error) {
	clk := cfg.clock()
	c := max(cfg.Concurrency, 1)
	src := cfg.arrivals()
	results := make([]slot, src.total)
	slots := make(chan struct{}, c)
	var wg sync.WaitGroup
	origin := clk.Now()
	i := -1
	err := src.each(func(at time.Duration, p suite.Prompt) bool {
		i++
		if src.first(i)+p.Requests() > len(results) {
			return false // more arrivals than counted: the source changed
		}
		if clk.SleepUntil(ctx, origin.Add(at)) != nil {
			return false
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
				return false
			}
		}
		wg.Add(1)
		dispatched := clk.Now()
		first := src.first(i)
		go func() {
			defer wg.Done()
			release := sync.OnceFunc(func() { <-slots })
			defer release()
			ask(ctx, cfg, p, func(k int, due time.Time, r runfile.Request) {
				if !p.Conversation() {
					release() // free the slot before the record is kept
				}
				if ctx.Err() != nil && r.ErrorKind == runfile.ErrorCancelled {
					return // cut short by the run's end, not measured
				}
				start := r.StartedAt
				if start.IsZero() {
					start = dispatched
				}
				sched := int64(at)
				if k > 0 {
					// A later turn of a conversation is due when the
					// answer before it ended plus the think time; the
					// conversation keeps its slot throughout.
					sched = int64(due.Sub(origin))
				} else {
					r.SlotWaitNS = int64(waited)
				}
				r.ScheduledNS = &sched
				r.ScheduleLagNS = int64(start.Sub(origin)) - sched
				if cfg.Replay != nil {
					r.MaxTokens = Request(p, cfg.MaxTokens).MaxTokens
				}
				j := first + k
				results[j] = slot{r: r, done: true}
				prog.add("measure", j, &results[j].r)
			})
		}()
		return true
	})
	wg.Wait()
	return finished(results), err
}
