package bench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/suite"
)

// listReplay is a Replay over a list, counting the arrivals it has
// handed out, and failing after failAfter of them when > 0.
type listReplay struct {
	at        []time.Duration
	yielded   atomic.Int32
	failAfter int
}

func (r *listReplay) Len() int { return len(r.at) }

func (r *listReplay) Arrivals(yield func(time.Duration, suite.Prompt) bool) error {
	for i, at := range r.at {
		if r.failAfter > 0 && i == r.failAfter {
			return errors.New("trace.jsonl: read error")
		}
		r.yielded.Add(1)
		p := suite.Prompt{ID: fmt.Sprintf("line %d", i+1), Category: "trace", Text: fmt.Sprintf("r%d", i), MaxTokens: 10 + i}
		if !yield(at, p) {
			return nil
		}
	}
	return nil
}

func TestReplaySendsAtRecordedTimes(t *testing.T) {
	clk := newFakeClock()
	origin := clk.Now()
	rp := &listReplay{at: []time.Duration{0, 50 * time.Millisecond, 50 * time.Millisecond, 300 * time.Millisecond}}
	d := &clocked{clk: clk, started: make(chan string)}
	done := make(chan struct{})
	got := map[string]bool{}
	go func() {
		defer close(done)
		// Due at 0, 50, 50 and 300 ms; the clock reaches 50 ms late, at
		// 70 ms, so the two due then start 20 ms late.
		for _, step := range []struct {
			at     time.Duration
			starts int
		}{{0, 1}, {70 * time.Millisecond, 2}, {300 * time.Millisecond, 1}} {
			clk.advance(origin.Add(step.at))
			for range step.starts {
				got[<-d.started] = true
			}
			// The replay is read as it comes due: at most one arrival
			// beyond those started has been read.
			if n := int(rp.yielded.Load()); n > len(got)+1 {
				t.Errorf("at %v, %d requests started and the replay had handed out %d arrivals", step.at, len(got), n)
			}
		}
	}()
	reqs, err := Run(context.Background(), Config{Client: d, Replay: rp, Clock: clk, Concurrency: 8})
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	lags := []time.Duration{0, 20 * time.Millisecond, 20 * time.Millisecond, 0}
	for i, r := range reqs {
		if !got[fmt.Sprintf("r%d", i)] {
			t.Errorf("r%d was never sent", i)
		}
		if r.ScheduledNS == nil || *r.ScheduledNS != int64(rp.at[i]) {
			t.Errorf("request %d: scheduled_ns %v, want %d", i, r.ScheduledNS, rp.at[i])
		}
		if r.ScheduleLagNS != int64(lags[i]) {
			t.Errorf("request %d: lag %v, want %v", i, time.Duration(r.ScheduleLagNS), lags[i])
		}
		if r.MaxTokens != 10+i {
			t.Errorf("request %d: max_tokens recorded %d, want %d", i, r.MaxTokens, 10+i)
		}
	}
}

func TestReplayErrorEndsTheRun(t *testing.T) {
	clk := newFakeClock()
	rp := &listReplay{at: []time.Duration{0, 0, 0, 0}, failAfter: 2}
	d := &clocked{clk: clk, started: make(chan string, 4)}
	reqs, err := Run(context.Background(), Config{Client: d, Replay: rp, Clock: clk, Concurrency: 8})
	if err == nil || err.Error() != "trace.jsonl: read error" {
		t.Fatalf("error %v, want the replay's", err)
	}
	if len(reqs) != 2 {
		t.Errorf("%d requests recorded, want the 2 sent before the error", len(reqs))
	}
}

func TestShardReplayDealsInTurn(t *testing.T) {
	rp := &listReplay{at: make([]time.Duration, 7)}
	for i := range rp.at {
		rp.at[i] = time.Duration(i) * time.Second
	}
	seen := map[string]int{}
	for k := range 3 {
		s := shardReplay{all: rp, s: Shard{Index: k, Count: 3}}
		n := 0
		_ = s.Arrivals(func(at time.Duration, p suite.Prompt) bool {
			if want := time.Duration(3*n+k) * time.Second; at != want {
				t.Errorf("shard %d's arrival %d at %v, want %v (its recorded time)", k, n, at, want)
			}
			seen[p.ID]++
			n++
			return true
		})
		if n != s.Len() {
			t.Errorf("shard %d sent %d, Len says %d", k, n, s.Len())
		}
	}
	if len(seen) != 7 {
		t.Errorf("%d distinct arrivals over the shards, want 7: %v", len(seen), seen)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("%s sent by %d shards", id, c)
		}
	}
}

func TestWorkloadReplayRefusals(t *testing.T) {
	s := &suite.Suite{Name: "t", Categories: []suite.Category{{Name: "c", Weight: 1, Prompts: namedPrompts("a")}}}
	rp := &listReplay{at: []time.Duration{0, time.Second}}
	for _, w := range []Workload{
		{Suite: s, Requests: 1, Concurrency: 4, Replay: rp, Arrival: Arrival{Process: ArrivalPoisson, Rate: 1, Max: 1}},
		{Suite: s, Requests: 1, Concurrency: 4, Replay: rp, Shard: Shard{Index: 0, Count: 3}},
	} {
		if err := w.Validate(); err == nil {
			t.Errorf("%+v accepted", w)
		}
	}
	w := Workload{Suite: s, Requests: 1, Concurrency: 4, Replay: rp, Shard: Shard{Index: 1, Count: 2}}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg := w.Config(Config{})
	if cfg.Replay.Len() != 1 || cfg.Concurrency != 2 || cfg.Prompts != nil || cfg.Schedule != nil {
		t.Errorf("shard 1/2's config: %d arrivals, -c %d, prompts %v, schedule %v", cfg.Replay.Len(), cfg.Concurrency, cfg.Prompts, cfg.Schedule)
	}
}
