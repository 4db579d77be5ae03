package svg

import (
	"math"
	"strconv"
)

// Linear maps the domain [D0, D1] linearly onto the range [R0, R1].
type Linear struct{ D0, D1, R0, R1 float64 }

// Map returns the range value of v. A zero-width domain maps to R0.
func (s Linear) Map(v float64) float64 {
	if s.D1 == s.D0 {
		return s.R0
	}
	return s.R0 + (v-s.D0)/(s.D1-s.D0)*(s.R1-s.R0)
}

// Ticks returns about n round values inside the domain (steps of 1, 2 or 5
// times a power of ten).
func (s Linear) Ticks(n int) []float64 {
	lo, hi := math.Min(s.D0, s.D1), math.Max(s.D0, s.D1)
	if n < 1 || hi <= lo {
		return []float64{lo}
	}
	step := NiceStep((hi - lo) / float64(n))
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// NiceStep returns the smallest of 1, 2, 5 × 10^k that is at least raw.
func NiceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// NiceMax returns a round value at least v (1, 2, 2.5, 5 × 10^k), for the top
// of an axis.
func NiceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// Log maps the domain [D0, D1] (both > 0) logarithmically onto [R0, R1].
type Log struct{ D0, D1, R0, R1 float64 }

// Map returns the range value of v; values ≤ 0 map to R0.
func (s Log) Map(v float64) float64 {
	if v <= 0 || s.D0 <= 0 || s.D1 <= 0 || s.D1 == s.D0 {
		return s.R0
	}
	l0, l1 := math.Log10(s.D0), math.Log10(s.D1)
	return s.R0 + (math.Log10(v)-l0)/(l1-l0)*(s.R1-s.R0)
}

// Ticks returns the values 1, 2, 5 × 10^k inside the domain; when the
// domain spans more than two decades only the powers of ten.
func (s Log) Ticks() []float64 {
	lo, hi := math.Min(s.D0, s.D1), math.Max(s.D0, s.D1)
	if lo <= 0 || hi <= lo {
		return nil
	}
	mults := []float64{1, 2, 5}
	if math.Log10(hi/lo) > 2 {
		mults = []float64{1}
	}
	var out []float64
	for k := math.Floor(math.Log10(lo)); k <= math.Ceil(math.Log10(hi)); k++ {
		for _, m := range mults {
			v := m * math.Pow(10, k)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				out = append(out, v)
			}
		}
	}
	return out
}

// LogBins returns the edges of n log-spaced bins per decade that cover
// [lo, hi] (lo > 0): edges[0] ≤ lo and edges[len-1] ≥ hi, each edge a
// power of ten times 10^(i/n), so that bins line up across runs.
func LogBins(lo, hi float64, perDecade int) []float64 {
	if lo <= 0 || perDecade < 1 {
		return nil
	}
	if hi < lo {
		hi = lo
	}
	n := float64(perDecade)
	i0 := math.Floor(math.Log10(lo)*n + 1e-9)
	i1 := math.Ceil(math.Log10(hi)*n - 1e-9)
	if i1 <= i0 {
		i1 = i0 + 1
	}
	edges := make([]float64, 0, int(i1-i0)+1)
	for i := i0; i <= i1; i++ {
		edges = append(edges, math.Pow(10, i/n))
	}
	return edges
}

// Label formats a tick value briefly: 0.5, 20, 1.2k.
func Label(v float64) string {
	switch a := math.Abs(v); {
	case a >= 10000:
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	default:
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	}
}

// Fit returns the top of an axis from 0 that holds v with a margin of
// pad (a fraction of v) to spare, and the step of its ticks: the
// smallest of 1, 2, 5 × 10^k that divides [0, v×(1+pad)] into at most n
// intervals, the top its first multiple at or above v×(1+pad). So a top
// value of 64 gets an axis to 70 in steps of 10, not one to 100 (NiceMax)
// whose last third is empty.
func Fit(v, pad float64, n int) (top, step float64) {
	want := v * (1 + pad)
	if want <= 0 || n < 1 {
		return 1, 1
	}
	step = NiceStep(want / float64(n))
	top = math.Ceil(want/step-1e-9) * step
	return top, step
}

// Every returns the multiples of step inside the domain of s.
func (s Linear) Every(step float64) []float64 {
	lo, hi := math.Min(s.D0, s.D1), math.Max(s.D0, s.D1)
	if step <= 0 || hi < lo {
		return nil
	}
	var out []float64
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		out = append(out, k*step+0) // +0: no -0
	}
	return out
}
