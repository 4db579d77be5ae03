package compare

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// thinking makes synth's run one of a reasoning model: each measured
// request's first think events are thinking, so that its answer starts
// think events later.
func thinking(run *runfile.Run, think int) *runfile.Run {
	for i := range run.Requests {
		q := &run.Requests[i]
		q.ReasoningEvents, q.ReasoningRuns = think, [][2]int{{0, think}}
	}
	return run
}

// TestAnswerTTFTIsCompared: between two runs of a reasoning model, the
// time to the first answer token is compared (a longer thinking phase is
// a regression of what a person waits for when the app hides the
// thinking, though the first token comes as soon as before); runs that
// did not think get no answer_ttft rows, and one that thought against one
// that did not is said in a note.
func TestAnswerTTFTIsCompared(t *testing.T) {
	find := func(rep Report, metric string) *Change {
		for i := range rep.Changes {
			if c := &rep.Changes[i]; c.Scope == "overall" && c.Metric == metric {
				return c
			}
		}
		return nil
	}
	base, cur := thinking(synth(1, 40, 150, 20), 5), thinking(synth(2, 40, 150, 20), 25)
	rep := Runs(base, cur, DefaultOptions())
	c := find(rep, "answer_ttft.p95")
	if c == nil || c.Status != StatusRegressed {
		t.Fatalf("answer_ttft.p95: %+v, want a regression (thinking 5 → 25 events of 20 ms)", c)
	}
	if c := find(rep, "ttft.p50"); c == nil || c.Status == StatusRegressed {
		t.Errorf("ttft.p50 %+v: the first token did not move", c)
	}

	plain := Runs(synth(1, 40, 150, 20), synth(2, 40, 150, 20), DefaultOptions())
	if c := find(plain, "answer_ttft.p50"); c != nil {
		t.Errorf("runs without thinking got %+v", c)
	}
	mixed := Runs(synth(1, 40, 150, 20), thinking(synth(2, 40, 150, 20), 5), DefaultOptions())
	if c := find(mixed, "answer_ttft.p50"); c != nil {
		t.Errorf("a thinking run against one without got %+v", c)
	}
	noted := false
	for _, n := range mixed.Notes {
		noted = noted || n == "only the new run's requests thought: answer_ttft is not compared, and its ttft is the first thinking token"
	}
	if !noted {
		t.Errorf("notes %q lack the one about thinking", mixed.Notes)
	}
}
