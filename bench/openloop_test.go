package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// fakeClock is a Clock whose time moves only when the test moves it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan struct{}
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if !c.now.Before(t) {
		c.mu.Unlock()
		return ctx.Err()
	}
	w := fakeWaiter{at: t, ch: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	c.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// advance sets the time to t and wakes every sleeper due by then.
func (c *fakeClock) advance(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(t) {
			kept = append(kept, w)
		} else {
			close(w.ch)
		}
	}
	c.waiters = kept
}

// clocked is a Doer that stamps each request's start with the fake
// clock, reports it on started, and holds it until release[i] is closed
// (when set); it counts the requests in flight.
type clocked struct {
	clk      *fakeClock
	started  chan string
	release  map[string]chan struct{}
	inflight atomic.Int32
	peak     atomic.Int32
}

func (d *clocked) Do(ctx context.Context, req stream.Request) *stream.Trace {
	n := d.inflight.Add(1)
	defer d.inflight.Add(-1)
	for p := d.peak.Load(); n > p && !d.peak.CompareAndSwap(p, n); p = d.peak.Load() {
	}
	tr := &stream.Trace{RequestID: req.Prompt, Start: d.clk.Now()}
	d.started <- req.Prompt
	if ch := d.release[req.Prompt]; ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			tr.Err = &stream.Error{Kind: stream.KindCancelled, Err: ctx.Err()}
			return tr
		}
	}
	tr.TokenTimes = []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}
	tr.LastEvent = 20 * time.Millisecond
	tr.Done = true
	return tr
}

func namedPrompts(names ...string) []suite.Prompt {
	var out []suite.Prompt
	for _, n := range names {
		out = append(out, suite.Prompt{ID: n, Category: "c", Text: n})
	}
	return out
}

func TestOpenLoopSendsOnSchedule(t *testing.T) {
	clk := newFakeClock()
	origin := clk.Now()
	sched, err := Arrival{Process: ArrivalPoisson, Rate: 10, Max: 6}.Schedule(9)
	if err != nil {
		t.Fatal(err)
	}
	d := &clocked{clk: clk, started: make(chan string)}
	names := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	done := make(chan struct{})
	var got []string
	go func() {
		defer close(done)
		for i, at := range sched {
			clk.advance(origin.Add(at))
			got = append(got, <-d.started)
			// Nothing else starts before the next arrival is due.
			select {
			case p := <-d.started:
				t.Errorf("%s started at the arrival of %s", p, names[i])
			default:
			}
		}
	}()
	reqs, err := Run(context.Background(), Config{Client: d, Prompts: namedPrompts(names...), Schedule: sched, Clock: clk, Concurrency: 6})
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6", len(reqs))
	}
	for i, r := range reqs {
		if got[i] != names[i] || r.PromptID != names[i] {
			t.Errorf("request %d: sent %s, recorded %s, want %s", i, got[i], r.PromptID, names[i])
		}
		if r.ScheduledNS == nil || *r.ScheduledNS != int64(sched[i]) {
			t.Errorf("request %d: scheduled_ns %v, want %d", i, r.ScheduledNS, sched[i])
		}
		if r.ScheduleLagNS != 0 || r.SlotWaitNS != 0 {
			t.Errorf("request %d: lag %d, slot wait %d, want 0 (started when due)", i, r.ScheduleLagNS, r.SlotWaitNS)
		}
		if r.TTFTNS != int64(10*time.Millisecond) {
			t.Errorf("request %d: TTFT %d: it stays from t_start", i, r.TTFTNS)
		}
	}
}

func TestOpenLoopCeiling(t *testing.T) {
	// Due every 100 ms; -c 2; each request holds its slot until the test
	// lets it go: p0 at 350 ms, p1 at 400 ms, so p2 and p3 wait.
	clk := newFakeClock()
	origin := clk.Now()
	sched, _ := Arrival{Process: ArrivalConstant, Rate: 10, Max: 4}.Schedule(1)
	rel := map[string]chan struct{}{}
	for _, p := range []string{"p0", "p1", "p2", "p3"} {
		rel[p] = make(chan struct{})
	}
	d := &clocked{clk: clk, started: make(chan string), release: rel}
	type out struct {
		reqs []runfile.Request
		err  error
	}
	res := make(chan out, 1)
	ceiling := make(chan int)
	go func() {
		reqs, err := Run(context.Background(), Config{Client: d, Prompts: namedPrompts("p0", "p1", "p2", "p3"), Schedule: sched, Clock: clk, Concurrency: 2,
			atCeiling: func(i int) { ceiling <- i }})
		res <- out{reqs, err}
	}()
	clk.advance(origin)
	if p := <-d.started; p != "p0" {
		t.Fatalf("first started %s", p)
	}
	clk.advance(origin.Add(100 * time.Millisecond))
	if p := <-d.started; p != "p1" {
		t.Fatalf("second started %s", p)
	}
	clk.advance(origin.Add(200 * time.Millisecond)) // p2 is due
	if i := <-ceiling; i != 2 {
		t.Fatalf("request %d found the ceiling, want 2", i)
	}
	clk.advance(origin.Add(350 * time.Millisecond)) // p3 is due too
	close(rel["p0"])
	if p := <-d.started; p != "p2" {
		t.Fatalf("after p0 ended, %s started, want p2", p)
	}
	if i := <-ceiling; i != 3 {
		t.Fatalf("request %d found the ceiling, want 3", i)
	}
	clk.advance(origin.Add(400 * time.Millisecond))
	close(rel["p1"])
	if p := <-d.started; p != "p3" {
		t.Fatalf("after p1 ended, %s started, want p3", p)
	}
	close(rel["p2"])
	close(rel["p3"])
	o := <-res
	if o.err != nil {
		t.Fatal(o.err)
	}
	if pk := d.peak.Load(); pk != 2 {
		t.Errorf("peak in flight %d, want the ceiling 2", pk)
	}
	wantLag := []time.Duration{0, 0, 150 * time.Millisecond, 100 * time.Millisecond}
	for i, r := range o.reqs {
		if got := time.Duration(r.ScheduleLagNS); got != wantLag[i] {
			t.Errorf("request %d: lag %v, want %v", i, got, wantLag[i])
		}
		if *r.ScheduledNS != int64(sched[i]) {
			t.Errorf("request %d: scheduled %d, want %d", i, *r.ScheduledNS, sched[i])
		}
	}
	// Both found the ceiling reached: the whole of their lag is the wait
	// for a slot, from their due instant.
	for i, want := range []time.Duration{0, 0, 150 * time.Millisecond, 100 * time.Millisecond} {
		if w := time.Duration(o.reqs[i].SlotWaitNS); w != want {
			t.Errorf("request %d waited %v for a slot, want %v", i, w, want)
		}
	}
}

func TestOpenLoopCancelStopsDispatch(t *testing.T) {
	clk := newFakeClock()
	sched, _ := Arrival{Process: ArrivalConstant, Rate: 1, Max: 3}.Schedule(1)
	d := &clocked{clk: clk, started: make(chan string, 3)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-d.started // p0 at the origin; p1 is due in 1 s, which never comes
		cancel()
	}()
	reqs, err := Run(ctx, Config{Client: d, Prompts: namedPrompts("p0", "p1", "p2"), Schedule: sched, Clock: clk, Concurrency: 3})
	if err == nil {
		t.Error("no error from a cancelled run")
	}
	if len(reqs) > 1 {
		t.Errorf("%d requests recorded, want at most p0", len(reqs))
	}
}

func TestOpenLoopWorkload(t *testing.T) {
	s := &suite.Suite{Name: "s", Categories: []suite.Category{{Name: "a", Weight: 1, Prompts: []suite.Prompt{{ID: "a1", Text: "x"}, {ID: "a2", Text: "y"}}}}}
	w := Workload{Suite: s, Requests: 5, Concurrency: 2, Seed: 4,
		Arrival: Arrival{Process: ArrivalConstant, Rate: 10, Duration: 1050 * time.Millisecond}}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg := w.Config(Config{})
	if len(cfg.Schedule) != 11 || len(cfg.Prompts) != 11 {
		t.Errorf("a 1.05 s schedule at 10/s: %d arrivals, %d prompts, want 11", len(cfg.Schedule), len(cfg.Prompts))
	}
	w.Arrival.Duration = 0
	if cfg = w.Config(Config{}); len(cfg.Schedule) != 5 || len(cfg.Prompts) != 5 {
		t.Errorf("-n 5 without a duration: %d arrivals, %d prompts", len(cfg.Schedule), len(cfg.Prompts))
	}
	w.Scenario = ScenarioRapidFire
	if w.Validate() == nil {
		t.Error("rapid-fire with a rate validated")
	}
}
