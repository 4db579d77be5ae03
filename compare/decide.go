package compare

import "math"

// evidence is what the regression rule ([decide]) weighs for one figure:
// how far it moved from its reference and what the statistics say of
// that move. Each evidence fills it its own way: the per-request test
// (Runs: the base run's figure, Mann-Whitney or Fisher), the noise band
// (Against: the band's centre, and whether the figure left the band) and
// the repeats (Repeats: the base set's mean, Welch). DESIGN ("Regression
// verdicts") says why each evidence has its test.
type evidence struct {
	// tooFew: a side has too few values to test.
	tooFew bool
	// delta is the new figure less the reference; reference is the base's
	// figure or the band's centre.
	delta, reference float64
	// tolerance and floor are the practical threshold: a move of at most
	// max(tolerance·|reference|, floor) is not worth an alarm.
	tolerance, floor float64
	// inNoise: the figure is inside its run-to-run noise band.
	inNoise bool
	// significant: the test tells the two samples apart (p < Alpha).
	significant bool
	// higherIsBetter: the figure is worse when lower (a throughput).
	higherIsBetter bool
}

// decide is the one regression rule: a change is a regression when it is
// not inside its noise band, beyond its practical threshold, significant,
// and in the worse direction; an improvement the same way in the better
// one. What stops it first names the status.
func decide(e evidence) Status {
	practical := math.Abs(e.delta) > math.Max(e.tolerance*math.Abs(e.reference), e.floor)
	worse := e.delta > 0
	if e.higherIsBetter {
		worse = e.delta < 0
	}
	switch {
	case e.tooFew:
		return StatusTooFew
	case e.inNoise:
		return StatusWithinNoise
	case !practical:
		return StatusWithin
	case !e.significant:
		return StatusNotSignificant
	case worse:
		return StatusRegressed
	}
	return StatusImproved
}

// evidence starts the evidence of a change of the figure metric, in
// unit, by delta from reference: its practical threshold is the one every
// evidence holds a figure to, the tolerance of its kind
// ([Options.ToleranceFor]) and the floor of its unit.
func (o Options) evidence(metric, unit string, delta, reference float64) evidence {
	return evidence{delta: delta, reference: reference, tolerance: o.ToleranceFor(metric), floor: o.floorFor(unit)}
}

// floorFor returns the floor of a figure in unit: FloorMS for times,
// FloorRatePP for rates in percent, none for the others.
func (o Options) floorFor(unit string) float64 {
	switch unit {
	case "ms":
		return o.FloorMS
	case "%":
		return o.FloorRatePP
	}
	return 0
}
