package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/suite"
)

func workloadSuite() *suite.Suite {
	return &suite.Suite{Name: "w", Categories: []suite.Category{
		{Name: "a", Weight: 1, Prompts: prompts("a", 3)},
		{Name: "b", Weight: 1, Prompts: prompts("b", 3)},
	}}
}

// rapidAborter is a scripted Doer that is its own Aborter, as
// *stream.Client is.
type rapidAborter struct {
	scripted
	fakeAborter
}

func TestRunWorkloadRapidFireIndexesFollowCold(t *testing.T) {
	c := &rapidAborter{}
	res, err := RunWorkload(context.Background(), Config{Client: c}, Workload{
		Suite: workloadSuite(), Requests: 6, Warmup: 1, Cold: true, Seed: 1, Concurrency: 1, Scenario: ScenarioRapidFire,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Cold, one warm-up, then 6/3 = 2 pairs of three requests each.
	if got, want := len(res.Requests), 1+1+2*3; got != want {
		t.Fatalf("%d requests, want %d", got, want)
	}
	if !res.Requests[0].Cold || !res.Requests[1].Warmup {
		t.Errorf("first requests: cold=%v warmup=%v, want the cold one then the warm-up", res.Requests[0].Cold, res.Requests[1].Warmup)
	}
	for i, r := range res.Requests {
		if r.Index != i {
			t.Errorf("request %d has index %d", i, r.Index)
		}
	}
	if res.Scenario == nil || res.Scenario.Name != ScenarioRapidFire || len(res.Scenario.FollowUps) != 2 {
		t.Fatalf("scenario = %+v, want rapid-fire with 2 follow-ups", res.Scenario)
	}
	for i, fu := range res.Scenario.FollowUps {
		a, b := res.Requests[fu.Interrupted], res.Requests[fu.FollowUp]
		if fu.Interrupted < 2 || !a.Aborted || b.Aborted || b.Cold || b.Warmup {
			t.Errorf("pair %d: interrupted #%d (aborted %v), follow-up #%d (aborted %v): indexes do not point past the cold and warm-up requests",
				i, fu.Interrupted, a.Aborted, fu.FollowUp, b.Aborted)
		}
	}
	if len(c.ids) != 2 {
		t.Errorf("%d aborts through the client, want 2", len(c.ids))
	}
}

func TestRunWorkloadSample(t *testing.T) {
	w := Workload{Suite: workloadSuite(), Requests: 4, Warmup: 2, Seed: 7, Concurrency: 2}
	res, err := RunWorkload(context.Background(), Config{Client: &scripted{}}, w)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scenario != nil || len(res.Requests) != 2+4 {
		t.Fatalf("%d requests, scenario %+v: want 6 and none", len(res.Requests), res.Scenario)
	}
	// The same workload draws the same prompts: the seeds are the CLI's.
	cfg := w.Config(Config{})
	want := append(w.Suite.Sample(2, 8), w.Suite.Sample(4, 7)...)
	for i, r := range res.Requests {
		if r.PromptID != want[i].ID {
			t.Errorf("request %d asked %s, want %s", i, r.PromptID, want[i].ID)
		}
	}
	if cfg.ColdPrompt != nil || cfg.Concurrency != 2 {
		t.Errorf("config: cold prompt %v, concurrency %d", cfg.ColdPrompt, cfg.Concurrency)
	}
}

func TestRunWorkloadRefusesNoRequests(t *testing.T) {
	c := &scripted{}
	_, err := RunWorkload(context.Background(), Config{Client: c}, Workload{Suite: workloadSuite(), Requests: 0, Concurrency: 1, Cold: true})
	if err == nil || !strings.Contains(err.Error(), "requests must be ≥ 1") {
		t.Errorf("err = %v, want requests must be ≥ 1", err)
	}
	if len(c.seen) != 0 {
		t.Errorf("%d requests sent by a workload refused before it ran", len(c.seen))
	}
}

// TestWorkloadRefusesWhatNoRunFileHolds checks that a workload the run
// file could not hold (runfile.MaxRequests, counting the cold and
// warm-up requests) is refused before it runs, rather than run and then
// refused by report; an open loop's schedule is held to the same bound.
func TestWorkloadRefusesWhatNoRunFileHolds(t *testing.T) {
	base := Workload{Suite: workloadSuite(), Concurrency: 1, Seed: 1, Cold: true, Warmup: 2}
	for _, tc := range []struct {
		name string
		w    func(Workload) Workload
		want string // "" = accepted
	}{
		{"at the bound", func(w Workload) Workload { w.Requests = runfile.MaxRequests - 3; return w }, ""},
		{"one past", func(w Workload) Workload { w.Requests = runfile.MaxRequests - 2; return w }, "at most 100000"},
		{"-n 200000", func(w Workload) Workload { w.Requests = 200_000; w.Cold, w.Warmup = false, 0; return w }, "at most 100000"},
		{"rate × duration", func(w Workload) Workload {
			w.Requests = 10
			w.Arrival = Arrival{Process: ArrivalPoisson, Rate: 1000, Duration: 200 * time.Second}
			return w
		}, "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.w(base).Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}
