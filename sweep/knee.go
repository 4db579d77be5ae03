package sweep

import (
	"fmt"
	"math"
)

// KneeRule says when TTFT has started to queue: at the first step, in
// order of load, whose TTFT p95 exceeds both Factor times the baseline
// and the baseline plus FloorMS, the baseline being the TTFT p95 of the
// lowest load. Below capacity a request finds a free slot and its TTFT is
// the target's own; once arrivals outpace service, requests wait in the
// queue and TTFT grows with the queue, so the p95 leaves its low-load
// level by far more than noise. The floor keeps a target whose TTFT is a
// few milliseconds from calling jitter a knee.
type KneeRule struct {
	Factor  float64 `json:"factor"`
	FloorMS float64 `json:"floor_ms"`
}

// DefaultKneeRule is a factor of 2 and a floor of 10 ms.
func DefaultKneeRule() KneeRule { return KneeRule{Factor: 2, FloorMS: 10} }

// Knee is where a sweep's TTFT started to queue.
type Knee struct {
	// Load is the first load that departed; Below the highest load
	// under it that did not (the knee lies between them).
	Load  float64 `json:"load"`
	Below float64 `json:"below"`
	// BaselineMS is the lowest load's TTFT p95; TTFTP95Ms the knee
	// step's; LimitMS the level it crossed.
	BaselineMS float64  `json:"baseline_ms"`
	TTFTP95Ms  float64  `json:"ttft_p95_ms"`
	LimitMS    float64  `json:"limit_ms"`
	Rule       KneeRule `json:"rule"`
}

// String says where the knee is and why.
func (k Knee) String() string {
	return fmt.Sprintf("between %g and %g: TTFT p95 %.1f ms above %.1f ms (max(%g × %.1f ms at the lowest load, + %g ms))",
		k.Below, k.Load, k.TTFTP95Ms, k.LimitMS, k.Rule.Factor, k.BaselineMS, k.Rule.FloorMS)
}

// FindKnee returns the knee of steps under rule, nil when there are
// fewer than two loads with a TTFT or none departs. Steps without a TTFT
// (every request failed) are skipped; a load measured twice is judged
// on each step.
func FindKnee(steps []Step, rule KneeRule) *Knee {
	sw := Sweep{Steps: steps}
	var with []Step
	for _, s := range sw.ByLoad() {
		if s.Requests > s.Errors && s.TTFTP95Ms > 0 {
			with = append(with, s)
		}
	}
	if len(with) < 2 {
		return nil
	}
	base := with[0].TTFTP95Ms
	limit := math.Max(rule.Factor*base, base+rule.FloorMS)
	below := with[0].Load
	for _, s := range with[1:] {
		if s.TTFTP95Ms > limit {
			return &Knee{Load: s.Load, Below: below, BaselineMS: base, TTFTP95Ms: s.TTFTP95Ms, LimitMS: limit, Rule: rule}
		}
		below = s.Load
	}
	return nil
}
