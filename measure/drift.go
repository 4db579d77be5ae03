package measure

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// Drift compares run's stored summary with the one its requests
// give ([Summarize]): the tables of a report show the stored
// summary, while per-request figures (the server's account, charts,
// comparisons) come from the requests, so a file whose summary does not
// match its requests (edited, or written by another tool) would show two
// answers without saying so. It returns "" when they agree, else a
// sentence naming the first figures that differ.
func Drift(run *runfile.Run) string {
	re := *run
	Summarize(&re)
	scopes := []Scope{Overall}
	if run.Summary.Cold != nil || re.Summary.Cold != nil {
		scopes = append(scopes, Cold)
	}
	names := slices.Sorted(maps.Keys(re.Summary.Categories))
	for n := range maps.Keys(run.Summary.Categories) {
		if _, ok := re.Summary.Categories[n]; !ok {
			names = append(names, n)
		}
	}
	for _, n := range names {
		scopes = append(scopes, Category(n))
	}
	var diffs []string
	for _, sc := range scopes {
		a, _ := SummaryGroup(&run.Summary, sc)
		b, _ := SummaryGroup(&re.Summary, sc)
		figs := []struct {
			name          string
			stored, fresh float64
		}{
			{"requests", float64(a.Requests), float64(b.Requests)},
			{"errors", float64(a.Errors), float64(b.Errors)},
			{"ttft.p50", a.TTFTMs.P50, b.TTFTMs.P50}, {"ttft.p95", a.TTFTMs.P95, b.TTFTMs.P95},
			{"ttft.max", a.TTFTMs.Max, b.TTFTMs.Max}, {"ttft.mean", a.TTFTMs.Mean, b.TTFTMs.Mean},
			{"gap.p50", a.GapMs.P50, b.GapMs.P50}, {"gap.p95", a.GapMs.P95, b.GapMs.P95},
			{"gap.max", a.GapMs.Max, b.GapMs.Max}, {"tpot.mean", a.TPOTMs.Mean, b.TPOTMs.Mean},
			{"e2e.p50", a.E2EMs.P50, b.E2EMs.P50}, {"e2e.p95", a.E2EMs.P95, b.E2EMs.P95},
		}
		for _, f := range figs {
			if math.Abs(f.stored-f.fresh) > 1e-6*max(1, math.Abs(f.stored), math.Abs(f.fresh)) {
				diffs = append(diffs, fmt.Sprintf("%s %s %.6g stored, %.6g from the requests", sc, f.name, f.stored, f.fresh))
			}
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	more := ""
	if len(diffs) > 3 {
		more = fmt.Sprintf(" (and %d more)", len(diffs)-3)
		diffs = diffs[:3]
	}
	return fmt.Sprintf("the stored summary does not match the run's requests: %s%s. The summary tables and verdicts show the stored figures; per-request figures (the server's account, charts, timelines, compare) are computed from the requests", strings.Join(diffs, "; "), more)
}
