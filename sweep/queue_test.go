package sweep

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// virtualClock is a clock whose time moves only when the test moves it.
type virtualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters map[chan struct{}]time.Time
}

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *virtualClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if !c.now.Before(t) {
		c.mu.Unlock()
		return ctx.Err()
	}
	ch := make(chan struct{})
	c.waiters[ch] = t
	c.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *virtualClock) advance(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	for ch, at := range c.waiters {
		if !at.After(t) {
			close(ch)
			delete(c.waiters, ch)
		}
	}
}

// slotServer is a Doer that plays a server of len(free) slots on the
// virtual clock: a request that arrives at t takes the slot free
// earliest, waits until then if none is free, and streams tokens ITL
// apart after its own TTFT; the answer holds the slot for
// S = TTFT + (tokens − 1)·ITL. It answers at once, with the times its
// trace would have had; each request it starts is signalled on started.
type slotServer struct {
	clk       *virtualClock
	ttft, itl time.Duration
	tokens    int
	mu        sync.Mutex
	free      []time.Time
	started   chan struct{}
}

func (s *slotServer) Do(ctx context.Context, req stream.Request) *stream.Trace {
	defer func() { s.started <- struct{}{} }()
	s.mu.Lock()
	defer s.mu.Unlock()
	start := s.clk.Now()
	k := 0
	for i := range s.free {
		if s.free[i].Before(s.free[k]) {
			k = i
		}
	}
	begin := start
	if s.free[k].After(begin) {
		begin = s.free[k]
	}
	tr := &stream.Trace{Start: start, Done: true}
	first := begin.Sub(start) + s.ttft
	for i := range s.tokens {
		tr.TokenTimes = append(tr.TokenTimes, first+time.Duration(i)*s.itl)
	}
	tr.LastEvent = tr.TokenTimes[len(tr.TokenTimes)-1]
	s.free[k] = start.Add(tr.LastEvent)
	return tr
}

// TestKneeAtTheQueueingPrediction sweeps constant arrivals through the
// open loop against a two-slot server on a virtual clock, so that the
// only timing is the queueing arithmetic's: each answer holds its slot
// S = 20 ms + 18 · 10 ms = 200 ms, capacity c/S = 10 requests/s. Below
// it no request waits (TTFT p95 is the server's 20 ms exactly); from the
// first rate above it the queue grows with every arrival. The knee must
// be between the two rates that bracket 10/s, here 5 % on either side.
func TestKneeAtTheQueueingPrediction(t *testing.T) {
	const ttft, itl, tokens, slots, n = 20 * time.Millisecond, 10 * time.Millisecond, 19, 2, 40
	capacity := slots / (ttft + (tokens-1)*itl).Seconds()
	var prompts []suite.Prompt
	for i := range n {
		prompts = append(prompts, suite.Prompt{ID: fmt.Sprint(i), Category: "c", Text: "q"})
	}
	var steps []Step
	for _, rate := range []float64{5, 8, 9.5, 10.5, 12, 15} {
		clk := &virtualClock{now: time.Unix(1e6, 0), waiters: map[chan struct{}]time.Time{}}
		srv := &slotServer{clk: clk, ttft: ttft, itl: itl, tokens: tokens, free: make([]time.Time, slots), started: make(chan struct{})}
		sched, err := bench.Arrival{Process: bench.ArrivalConstant, Rate: rate, Max: n}.Schedule(1)
		if err != nil {
			t.Fatal(err)
		}
		origin := clk.Now()
		go func() {
			for _, at := range sched {
				clk.advance(origin.Add(at))
				<-srv.started
			}
		}()
		reqs, err := bench.Run(context.Background(), bench.Config{Client: srv, Prompts: prompts, Schedule: sched, Clock: clk, Concurrency: 256})
		if err != nil {
			t.Fatal(err)
		}
		run := &runfile.Run{Requests: reqs}
		measure.Summarize(run)
		st := StepOf(rate, fmt.Sprint(rate), run)
		if rate < capacity && st.TTFTP95Ms != 20 {
			t.Errorf("at %g/s, under the capacity, TTFT p95 %v ms, want the server's 20 ms", rate, st.TTFTP95Ms)
		}
		if st.Requests != n || st.LagP99Ms != 0 {
			t.Errorf("at %g/s: %d requests, lag p99 %v ms", rate, st.Requests, st.LagP99Ms)
		}
		steps = append(steps, st)
	}
	k := FindKnee(steps, DefaultKneeRule())
	if k == nil || k.Below != 9.5 || k.Load != 10.5 {
		t.Fatalf("knee %+v, want between 9.5 and 10.5 around %g requests/s", k, capacity)
	}
	// At 10.5/s (D/D/2) the requests of pair j (2j, 2j+1) begin 200·j ms
	// after the first, and arrive 2j/λ = 190.48·j ms after it: each waits
	// 9.524·j ms. Over 40 requests (j = 0..19, two TTFTs of 20 + 9.524·j
	// each) the p95 (rank 0.95·39 = 37.05) is 20 + 171.43 + 0.05·9.52 =
	// 191.90 ms.
	if p95 := steps[3].TTFTP95Ms; p95 < 191.89 || p95 > 191.91 {
		t.Errorf("TTFT p95 at 10.5/s = %.3f ms, want 191.90 ms", p95)
	}
}
