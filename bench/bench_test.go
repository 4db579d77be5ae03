package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// scripted is a Doer that answers every request with a fixed trace after
// waiting on a gate, and counts how many requests are in flight.
type scripted struct {
	mu       sync.Mutex
	seen     []stream.Request
	inflight atomic.Int32
	peak     atomic.Int32
	// hold, when set, blocks each request until it is closed or ctx ends.
	hold chan struct{}
}

func (s *scripted) Do(ctx context.Context, req stream.Request) *stream.Trace {
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	s.mu.Lock()
	s.seen = append(s.seen, req)
	s.mu.Unlock()
	tr := &stream.Trace{RequestID: req.ID, Start: time.Now()}
	if s.hold != nil {
		select {
		case <-s.hold:
		case <-ctx.Done():
			tr.Err = &stream.Error{Kind: stream.KindCancelled, Err: ctx.Err()}
			return tr
		}
	}
	for i := range 3 {
		tr.TokenTimes = append(tr.TokenTimes, time.Duration(100+10*i)*time.Millisecond)
		tr.TokenCounts = append(tr.TokenCounts, 1)
		tr.ServerTimes = append(tr.ServerTimes, 0)
		if req.OnToken != nil {
			req.OnToken(i, tr.TokenTimes[i])
		}
	}
	tr.LastEvent = 130 * time.Millisecond
	tr.Done = true
	return tr
}

func prompts(cat string, n int) []suite.Prompt {
	var ps []suite.Prompt
	for i := range n {
		ps = append(ps, suite.Prompt{ID: fmt.Sprintf("%s-%d", cat, i), Text: "q", Category: cat, MaxTokens: 7})
	}
	return ps
}

func TestRunOrderAndFlags(t *testing.T) {
	c := &scripted{}
	cold := prompts("short", 1)[0]
	reqs, err := Run(context.Background(), Config{
		Client:        c,
		ColdPrompt:    &cold,
		WarmupPrompts: prompts("warm", 2),
		Prompts:       prompts("long", 5),
		Concurrency:   2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(reqs), 8; got != want {
		t.Fatalf("got %d requests, want %d", got, want)
	}
	if !reqs[0].Cold || reqs[0].Warmup || reqs[0].PromptID != "short-0" {
		t.Errorf("first request = %+v, want the cold one", reqs[0])
	}
	for i := 1; i <= 2; i++ {
		if !reqs[i].Warmup || reqs[i].Cold {
			t.Errorf("request %d: warmup=%v cold=%v, want warm-up", i, reqs[i].Warmup, reqs[i].Cold)
		}
	}
	for i, r := range reqs {
		if r.Index != i {
			t.Errorf("request %d has index %d", i, r.Index)
		}
		if i >= 3 && (r.Warmup || r.Cold || r.Category != "long") {
			t.Errorf("measured request %d = %+v", i, r)
		}
		if r.TTFTNS != int64(100*time.Millisecond) || len(r.TokenTimesNS) != 3 {
			t.Errorf("request %d lost its trace: %+v", i, r)
		}
	}
	// Prompts' own max_tokens are sent unless overridden.
	if c.seen[0].MaxTokens != 7 {
		t.Errorf("max tokens sent = %d, want 7", c.seen[0].MaxTokens)
	}
}

func TestRunConcurrencyIsBounded(t *testing.T) {
	c := &scripted{hold: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := Run(context.Background(), Config{Client: c, Prompts: prompts("p", 12), Concurrency: 3, MaxTokens: 9}); err != nil {
			t.Error(err)
		}
	}()
	// Wait until the loop is saturated, then let everything finish.
	for c.inflight.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	close(c.hold)
	<-done
	if got := c.peak.Load(); got != 3 {
		t.Errorf("peak in flight = %d, want 3", got)
	}
	for _, r := range c.seen {
		if r.MaxTokens != 9 {
			t.Errorf("max tokens sent = %d, want the override 9", r.MaxTokens)
		}
	}
}

func TestRunCancelKeepsWhatWasMeasured(t *testing.T) {
	c := &scripted{hold: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	var progressed atomic.Int32
	cfg := Config{
		Client:      c,
		Prompts:     prompts("p", 10),
		Concurrency: 2,
		Progress: func(p Progress) {
			if progressed.Add(1) == 2 {
				cancel() // the user presses Ctrl-C after two answers
			}
		},
	}
	// Let exactly two requests finish; the next ones block until cancel.
	release := make(chan struct{})
	go func() {
		<-release
		c.hold <- struct{}{}
		c.hold <- struct{}{}
	}()
	close(release)
	reqs, err := Run(ctx, cfg)
	if err == nil {
		t.Fatal("Run returned no error after cancel")
	}
	if len(reqs) != 2 {
		t.Fatalf("got %d recorded requests, want the 2 finished before the cancel", len(reqs))
	}
	for _, r := range reqs {
		if !r.OK() {
			t.Errorf("a finished request was recorded as failed: %+v", r)
		}
	}
}

type fakeAborter struct {
	mu  sync.Mutex
	ids []string
}

func (f *fakeAborter) Abort(_ context.Context, id string) (*api.AbortResponse, error) {
	f.mu.Lock()
	f.ids = append(f.ids, id)
	f.mu.Unlock()
	return &api.AbortResponse{RequestID: id, Aborted: true, TokensAfterAbort: 0}, nil
}

func TestRapidFire(t *testing.T) {
	c := &scripted{}
	ab := &fakeAborter{}
	reqs, fus, err := RapidFire(context.Background(), RapidFireConfig{
		Client:      c,
		Aborter:     ab,
		Prompts:     append(prompts("a", 2), prompts("b", 3)...), // 5 prompts: 2 pairs
		AfterTokens: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(fus) != 2 || len(reqs) != 6 {
		t.Fatalf("got %d follow-ups and %d requests, want 2 and 6", len(fus), len(reqs))
	}
	for i, fu := range fus {
		a, b := reqs[fu.Interrupted], reqs[fu.FollowUp]
		if !a.Aborted || b.Aborted {
			t.Errorf("pair %d: interrupted aborted=%v follow-up aborted=%v", i, a.Aborted, b.Aborted)
		}
		if fu.TokensAfterAbort != 0 || fu.ForeignEvents != 0 {
			t.Errorf("pair %d: %+v", i, fu)
		}
		if fu.AloneTTFTNS != int64(100*time.Millisecond) || fu.TTFTNS != int64(100*time.Millisecond) {
			t.Errorf("pair %d: TTFTs %d/%d", i, fu.TTFTNS, fu.AloneTTFTNS)
		}
	}
	if len(ab.ids) != 2 || ab.ids[0] != reqs[fus[0].Interrupted].RequestID {
		t.Errorf("aborted ids = %v, want the interrupted requests' ids", ab.ids)
	}
}
