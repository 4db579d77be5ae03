package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// notJudgedLine is how every report shows a verdict whose scope had no
// data: "not judged: no data (all 3 requests of overall failed)", never a
// value of 0.
func notJudgedLine(v runfile.Verdict) string {
	reason := strings.TrimSpace(v.NoData)
	if rest, ok := strings.CutPrefix(reason, "no data:"); ok {
		reason = strings.TrimSpace(rest)
	} else if rest, ok := strings.CutPrefix(reason, "no data"); ok {
		reason = strings.TrimSpace(rest)
	}
	if reason == "" {
		return "not judged: no data"
	}
	return "not judged: no data (" + reason + ")"
}

// verdictHeadline is "all 4 thresholds held", "2 of 4 thresholds
// crossed", with ", 1 not judged (no data)" when some were not.
func verdictHeadline(r *runfile.Run) string {
	n, skipped := len(gate.Failed(r.Verdicts)), len(gate.NotJudged(r.Verdicts))
	judged := len(r.Verdicts) - skipped
	var s string
	switch {
	case n > 0:
		s = fmt.Sprintf("%d of %s crossed", n, plural(len(r.Verdicts), "threshold"))
	case judged == 0 && len(r.Verdicts) == 1:
		return "the threshold was not judged (no data)"
	case judged == 0:
		return fmt.Sprintf("none of %d thresholds judged (no data)", len(r.Verdicts))
	case skipped == 0 && len(r.Verdicts) == 1:
		s = "the threshold held"
	case skipped == 0:
		s = fmt.Sprintf("all %d thresholds held", len(r.Verdicts))
	default:
		s = fmt.Sprintf("%d of %s held", judged, plural(len(r.Verdicts), "threshold"))
	}
	if skipped > 0 {
		s += fmt.Sprintf(", %d not judged (no data)", skipped)
	}
	return s
}

// perEventOnlyNote is the note a report shows once when some scopes
// rest on no token count: "no token counts: TPOT and per-token figures
// are per event (overall, short)"; "" when every scope had counts.
func perEventOnlyNote(r *runfile.Run) string {
	var names []string
	for _, g := range groups(r) {
		if measure.PerEventOnly(g.G) {
			names = append(names, g.Name)
		}
	}
	if c := r.Summary.Cold; c != nil && measure.PerEventOnly(*c) {
		names = append(names, "cold")
	}
	if len(names) == 0 {
		return ""
	}
	return "no token counts: TPOT and per-token figures are per event (" + strings.Join(names, ", ") + ")"
}

// tableLegend says what the per-scope table's TPOT and gap figures are
// per.
const tableLegend = "TPOT is per output token; gaps are per event (between content events), pooled over every request of the scope"

// comparisonTitle names the comparison: "comparison with history run 2
// (2026-11-29T10:00:00Z), --against last".
func comparisonTitle(c *runfile.Comparison) string {
	s := "comparison"
	if c.Base != "" {
		s += " with " + c.Base
	}
	if c.Against != "" {
		s += " (--against " + c.Against + ")"
	}
	return s
}

// comparisonResult is one line: "1 regression of 24 figures compared",
// "no regression in 24 figures compared", or "not made: WHY".
func comparisonResult(c *runfile.Comparison) string {
	if c.Skipped != "" {
		return "not made: " + c.Skipped
	}
	tested := 0
	for _, x := range c.Changes {
		if x.Status != runfile.ChangeTooFew {
			tested++
		}
	}
	if c.Regressions == 0 {
		return fmt.Sprintf("no regression in %d figures compared (%d tested)", len(c.Changes), tested)
	}
	return fmt.Sprintf("%s in %d figures compared (%d tested)", plural(c.Regressions, "regression"), len(c.Changes), tested)
}

// comparisonMethod says how a change was judged: the rule the comparison
// recorded, or for a run file written before rules were recorded, the
// per-request rule of that time.
func comparisonMethod(c *runfile.Comparison) string {
	if c.Rule != "" {
		return c.Rule
	}
	return fmt.Sprintf("a regression is worse by more than %s%% (at least %s ms; 1 percentage point for errors) with p < %s: Mann-Whitney U on the raw per-request TTFTs, gaps and per-request figures, Fisher's exact test on error counts",
		strconv.FormatFloat(c.Tolerance*100, 'g', -1, 64), strconv.FormatFloat(c.FloorMS, 'g', -1, 64), strconv.FormatFloat(c.Alpha, 'g', -1, 64))
}

// comparisonEvidence says in a few words what the verdict rests on: "noise
// band of 5 earlier runs", "no noise estimate yet (2 of 5 earlier runs)",
// or "" when the run file does not say.
func comparisonEvidence(c *runfile.Comparison) string {
	switch {
	case c.Evidence == "noise band":
		return fmt.Sprintf("verdict on the noise band of %d earlier comparable runs", c.NoiseRuns)
	case c.NoiseWanted > 0:
		return fmt.Sprintf("no noise estimate yet (%d of %d earlier comparable runs): verdict on this run against the last one; bench --repeat gives a between-run estimate in one job", c.NoiseRuns, c.NoiseWanted)
	case c.Evidence != "":
		return "verdict on " + c.Evidence
	}
	return ""
}

// bandCell is a change's noise band as "[lo, hi]", or "-".
func bandCell(x runfile.Change) string {
	if x.Band == nil {
		return "-"
	}
	return "[" + fmtValue(x.Band.Lo, x.Unit) + ", " + fmtValue(x.Band.Hi, x.Unit) + "]"
}

// changeLine is "category:complex gap.max: 25.0 ms → 40.0 ms (+60.0%, p
// <1e-4)", with the noise band in place of p when the verdict rests on
// one.
func changeLine(x runfile.Change) string {
	rel := ""
	if x.Base != 0 {
		rel = fmt.Sprintf("%+.1f%%, ", x.Relative*100)
	}
	ev := "p " + pValue(x)
	if x.Band != nil {
		ev = fmt.Sprintf("noise band %s over %d runs", bandCell(x), x.Band.Runs)
	}
	return fmt.Sprintf("%s %s: %s → %s (%s%s)", x.Scope, x.Metric, fmtValue(x.Base, x.Unit), fmtValue(x.New, x.Unit), rel, ev)
}

func pValue(x runfile.Change) string {
	if x.Status == runfile.ChangeTooFew {
		return "-"
	}
	if x.P < 1e-4 {
		return "<1e-4"
	}
	return strconv.FormatFloat(x.P, 'f', 4, 64)
}

// baseStarted formats the base's start for the methodology.
func baseStarted(c *runfile.Comparison) string {
	if c.BaseStartedAt.IsZero() {
		return ""
	}
	return c.BaseStartedAt.UTC().Format(time.RFC3339)
}
