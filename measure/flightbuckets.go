package measure

// FlightBucket is the requests in flight over one slice of a run's time,
// [FromS, ToS) in seconds from the first request's start.
type FlightBucket struct {
	FromS, ToS float64
	// Mean is the time-weighted mean in flight over the slice; Max the
	// most in flight at any instant of it.
	Mean float64
	Max  int
}

// InFlightBuckets splits the time of steps ([InFlight]'s: from 0 to the
// last step) into n equal slices and gives each the mean and the most in
// flight. A chart drawn from them reads at its own resolution: a
// client that sends the next request the moment the last one ended is
// one request in flight throughout (mean just under 1, max 1), not a
// comb of instants at 0 that no pixel can show. nil when steps span no
// time or n < 1.
func InFlightBuckets(steps []Step, n int) []FlightBucket {
	if len(steps) < 2 || n < 1 {
		return nil
	}
	span := steps[len(steps)-1].AtS
	if span <= 0 {
		return nil
	}
	out := make([]FlightBucket, n)
	width := span / float64(n)
	for i := range out {
		out[i].FromS, out[i].ToS = float64(i)*width, float64(i+1)*width
	}
	out[n-1].ToS = span
	// Each step holds its count from its time to the next step's.
	for k := 0; k+1 < len(steps); k++ {
		from, to, c := steps[k].AtS, steps[k+1].AtS, steps[k].N
		first := min(int(from/width), n-1)
		for i := first; i < n && out[i].FromS < to; i++ {
			b := &out[i]
			lo, hi := max(from, b.FromS), min(to, b.ToS)
			if hi > lo {
				b.Mean += float64(c) * (hi - lo)
				b.Max = max(b.Max, c)
			} else if from >= b.FromS && from < b.ToS {
				b.Max = max(b.Max, c) // an instant's count
			}
		}
	}
	for i := range out {
		if w := out[i].ToS - out[i].FromS; w > 0 {
			out[i].Mean /= w
		}
	}
	return out
}
