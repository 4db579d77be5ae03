package bench

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// reversing is a Doer whose earlier requests take longer, so that with
// several in flight they finish in the reverse order of issue.
type reversing struct {
	mu sync.Mutex
	n  int
	scripted
}

func (d *reversing) Do(ctx context.Context, req stream.Request) *stream.Trace {
	d.mu.Lock()
	k := d.n
	d.n++
	d.mu.Unlock()
	time.Sleep(time.Duration(max(12-k, 0)) * 3 * time.Millisecond)
	return d.scripted.Do(ctx, req)
}

// order records journal appends and progress reports in one sequence.
type order struct {
	mu        sync.Mutex
	w         *runfile.JournalWriter
	journaled map[*runfile.Request]bool
	late      int // reports of a request not yet journaled
}

func (o *order) Append(phase string, slot int, r *runfile.Request) error {
	o.mu.Lock()
	o.journaled[r] = true
	o.mu.Unlock()
	return o.w.Append(phase, slot, r)
}

func (o *order) progress(p Progress) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.journaled[p.Last] {
		o.late++
	}
}

// TestJournalKeepsEveryRequestInOrder: every request a workload records
// is journaled before it is reported, and the journal read back gives
// the requests in the run's own order, though they finished in another.
func TestJournalKeepsEveryRequestInOrder(t *testing.T) {
	for _, scenario := range []string{"", ScenarioRapidFire} {
		path := filepath.Join(t.TempDir(), runfile.JournalFile)
		w, err := runfile.CreateJournal(path, runfile.JournalHeader{})
		if err != nil {
			t.Fatal(err)
		}
		o := &order{w: w, journaled: map[*runfile.Request]bool{}}
		c := &rapidAborter{}
		var cl Doer = c
		if scenario == "" {
			cl = &reversing{}
		}
		res, err := RunWorkload(context.Background(), Config{Client: cl, Aborter: c, Journal: o, Progress: o.progress}, Workload{
			Suite: workloadSuite(), Requests: 6, Warmup: 2, Cold: true, Seed: 1, Concurrency: 4, Scenario: scenario,
		})
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		if o.late > 0 {
			t.Errorf("scenario %q: %d requests reported before they were journaled", scenario, o.late)
		}
		j, err := runfile.ReadJournal(path)
		if err != nil {
			t.Fatal(err)
		}
		got := j.Run().Requests
		if len(got) != len(res.Requests) {
			t.Fatalf("scenario %q: %d requests journaled, %d recorded", scenario, len(got), len(res.Requests))
		}
		for i, r := range res.Requests {
			g := got[i]
			if g.Index != r.Index || g.PromptID != r.PromptID || g.Cold != r.Cold || g.Warmup != r.Warmup || g.Aborted != r.Aborted {
				t.Errorf("scenario %q: request %d journaled as %d %s cold=%v warmup=%v aborted=%v, recorded as %d %s cold=%v warmup=%v aborted=%v",
					scenario, i, g.Index, g.PromptID, g.Cold, g.Warmup, g.Aborted, r.Index, r.PromptID, r.Cold, r.Warmup, r.Aborted)
			}
		}
	}
}
