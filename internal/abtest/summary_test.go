package abtest

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// TestSideFiguresAreTheHeadlines: a side's figures are measure's headline
// figures of its overall scope. Its tpot p95 was the p95 of the
// per-request TPOTs, where the history and gate's tpot.p95 take the p95
// of the per-token intervals (DESIGN).
func TestSideFiguresAreTheHeadlines(t *testing.T) {
	r := &runfile.Run{}
	o := &r.Summary.Overall
	o.Requests = 4
	o.TTFTMs = stats.Distribution{Count: 4, P50: 100, P95: 180}
	o.TPOTMs = stats.Distribution{Count: 4, Mean: 20, P95: 25}
	o.TokenIntervalMs = stats.Distribution{Count: 80, P95: 41}
	o.GapMs = stats.Distribution{Count: 76, P95: 40, Max: 300}
	s := NewSide("A", "/nonexistent.gguf", "a/run.json", r)
	got := []float64{s.TTFTP50MS, s.TTFTP95MS, s.TPOTMeanMS, s.TPOTP95MS, s.GapP95MS, s.LongestStallMS}
	figs := []measure.Figure{measure.TTFTP50, measure.TTFTP95, measure.TPOTMean, measure.TPOTP95, measure.GapP95, measure.LongestStall}
	for i, f := range figs {
		if want := f.Value(o); got[i] != want {
			t.Errorf("%s = %v, want measure's %v", f.Name, got[i], want)
		}
	}
	if s.TPOTP95MS != 41 {
		t.Errorf("tpot p95 = %v, want the per-token intervals' p95, 41", s.TPOTP95MS)
	}
}
