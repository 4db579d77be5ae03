package report

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// longPromptIDs renames StallRun's prompts after the longest ids of the
// zh-medical suite, which a new user saw clipped in the waterfall.
var longPromptIDs = map[string]string{
	"short-01":   "short-cephalosporin-alcohol",
	"short-02":   "short-ibuprofen-paracetamol",
	"short-03":   "short-metformin-timing",
	"complex-01": "complex-pneumococcal-vaccines",
	"complex-02": "complex-postpartum-contraception",
	"complex-03": "complex-colorectal-screening",
}

// longRun returns StallRun with long prompt and request ids, as a real
// target's run has, and with the steady gaps spread around 20 ms (and a
// few tokens read together) so that the gap histogram fills many
// neighbouring bins. The 300 ms stall and the verdicts stay.
func longRun() *runfile.Run {
	r := reporttest.StallRun()
	rng := rand.New(rand.NewPCG(3, 5))
	rid := func(i int) string { return fmt.Sprintf("tp-7CPDX7V7KQQ7JG5ETBWNLIP%03d", i) }
	for i := range r.Requests {
		q := &r.Requests[i]
		q.PromptID, q.RequestID = longPromptIDs[q.PromptID], rid(q.Index)
		if q.Cold || q.Warmup {
			continue
		}
		t := q.TokenTimesNS[0]
		for k := 1; k < len(q.TokenTimesNS); k++ {
			old := q.TokenTimesNS[k] - q.TokenTimesNS[k-1]
			gap := 20 * math.Exp(0.45*rng.NormFloat64()) // ms
			if rng.IntN(12) == 0 {
				gap = math.Pow(10, -2+2*rng.Float64()) // read together
			}
			g := int64(gap * 1e6)
			if old > 200e6 { // keep the stall
				g = old
			}
			t += g
			q.TokenTimesNS[k] = t
		}
		q.E2ENS = t + 400_000
	}
	verdicts := r.Verdicts
	measure.Summarize(r)
	r.Verdicts = verdicts
	for i := range r.Verdicts {
		for k := range r.Verdicts[i].Offenders {
			o := &r.Verdicts[i].Offenders[k]
			o.PromptID, o.RequestID = longPromptIDs[o.PromptID], rid(o.Index)
		}
	}
	return r
}
