package stats

import "sort"

// CDFPoint is one step of an empirical distribution function: a share P
// (0–1) of the values are at most X.
type CDFPoint struct{ X, P float64 }

// CDF returns the empirical distribution function of xs: for the value
// of rank i (1-based, ascending) of n, the point (x, i/n). Of equal
// values only the last rank is kept, so that each X appears once. When
// there are more than maxPoints distinct ranks (maxPoints ≥ 2), the
// points are thinned to maxPoints evenly spaced ranks, the minimum and
// the maximum always among them, so a chart of a million requests stays
// small. xs is not modified; nil when empty.
func CDF(xs []float64, maxPoints int) []CDFPoint {
	n := len(xs)
	if n == 0 {
		return nil
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	var all []CDFPoint
	for i, x := range sorted {
		if i+1 < n && sorted[i+1] == x {
			continue
		}
		all = append(all, CDFPoint{X: x, P: float64(i+1) / float64(n)})
	}
	if maxPoints < 2 || len(all) <= maxPoints {
		return all
	}
	out := make([]CDFPoint, 0, maxPoints)
	for k := range maxPoints {
		out = append(out, all[k*(len(all)-1)/(maxPoints-1)])
	}
	return out
}
