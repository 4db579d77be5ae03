package sweep

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the sweep as a table, one row per step in order of
// load, then the knee and the search's result.
func (s *Sweep) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tachieved/s\tTTFT p50\tTTFT p95\tgap p95\tlongest stall\tgoodput\tgoodput/s\terrors\tlag p99\tthresholds\t\n", s.Kind)
	for _, st := range s.ByLoad() {
		verdict := "held"
		if !st.Passed {
			verdict = "crossed"
		}
		if st.Interrupted {
			verdict += " (interrupted)"
		}
		lag := "-"
		if s.Kind == KindRate || s.Kind == KindTraceSpeed {
			lag = fmt.Sprintf("%.1f ms", st.LagP99Ms)
		}
		fmt.Fprintf(tw, "%g\t%.2f\t%.1f ms\t%.1f ms\t%.1f ms\t%.1f ms\t%.0f%%\t%.2f\t%d/%d\t%s\t%s\t\n",
			st.Load, st.AchievedPerS, st.TTFTP50Ms, st.TTFTP95Ms, st.GapP95Ms, st.LongestStallMs,
			100*st.GoodputShare, st.GoodputPerS, st.Errors, st.Requests, lag, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s.Knee != nil {
		fmt.Fprintf(w, "knee (%s): %s\n", s.Unit(), s.Knee)
	} else if len(s.Steps) > 1 {
		fmt.Fprintf(w, "knee: %s\n", NoKnee(s.Steps))
	}
	if s.Search != nil {
		fmt.Fprintf(w, "capacity under the thresholds: %s\n", s.Search)
	}
	for _, st := range s.ByLoad() {
		if len(st.Crossed) > 0 {
			fmt.Fprintf(w, "  at %g: %s\n", st.Load, strings.Join(st.Crossed, "; "))
		}
	}
	for _, x := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", x)
	}
	return nil
}
