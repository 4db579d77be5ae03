package compare

import (
	"fmt"

	"github.com/tokenpulse/tokenpulse/repeats"
)

// MinRepeats is the fewest runs a side of a repeats comparison needs:
// Welch's test needs a variance on each side.
const MinRepeats = 2

// higherIsBetter are the repeats figures that are worse when lower.
var higherIsBetter = map[string]bool{"requests_per_s": true, "output_tokens_per_s": true, "goodput.share": true}

// Repeats compares two sets of K runs each (bench --repeat), figure by
// figure, on the runs' own figures: each run is one replicate of its
// configuration, so the test is Welch's t-test on the K run-level values
// (the per-run TTFT p95s, ...), unequal variances allowed. Where both
// sides have repeats this is the right test for a figure such as a p95 or
// a throughput, which a single run gives once: the run-to-run spread,
// not the spread of requests within a run, is what another run of the
// same configuration would vary by. A change is a regression when it is
// worse by more than the tolerance of its kind ([Options.ToleranceFor],
// as for a single run or a noise band) and the floor (for times and rates
// in percent) and p < Alpha; requests/s, tokens/s and goodput are worse
// when lower, every other figure when higher.
func Repeats(base, cur *repeats.Set, opts Options) Report {
	r := Report{Options: opts, Method: "welch t-test on the runs' figures (bench --repeat)", Evidence: EvidenceRepeats}
	r.Base = Side{StartedAt: base.StartedAt, Target: base.Target.URL, Model: base.Target.Model, Device: base.Device.Key()}
	r.New = Side{StartedAt: cur.StartedAt, Target: cur.Target.URL, Model: cur.Target.Model, Device: cur.Device.Key()}
	for _, name := range repeats.Figures() {
		bf, okb := base.Figure(name)
		nf, okn := cur.Figure(name)
		if !okb || !okn || bf.N == 0 || nf.N == 0 {
			continue
		}
		unit := bf.Unit
		c := Change{Scope: "overall", Metric: name, Unit: unit, Base: bf.Mean, New: nf.Mean, P: 1,
			Test: "welch, run-level " + name, NBase: bf.N, NNew: nf.N}
		c.Delta = c.New - c.Base
		if c.Base != 0 {
			c.Relative = c.Delta / c.Base
		}
		_, _, p, ok := repeats.Welch(bf.Values, nf.Values)
		e := opts.evidence(name, unit, c.Delta, c.Base)
		c.Tolerance = e.tolerance
		e.tooFew = bf.N < MinRepeats || nf.N < MinRepeats || !ok
		e.significant, e.higherIsBetter = p < opts.Alpha, higherIsBetter[name]
		if !e.tooFew {
			c.P = p
		}
		c.Status = decide(e)
		r.Changes = append(r.Changes, c)
	}
	if base.Suite != cur.Suite {
		r.Notes = append(r.Notes, fmt.Sprintf("the sets ran different suites: %s and %s", base.Suite, cur.Suite))
	}
	return r
}
