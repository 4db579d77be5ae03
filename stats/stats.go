// Package stats computes the distributions that tokenpulse reports, exactly
// as DESIGN.md defines them: sample standard deviation (n−1), percentiles by
// linear interpolation between closest ranks (numpy's default "linear"
// method), and the per-request token metrics (TTFT, gaps, TPOT).
//
// Example:
//
//	d := stats.Describe([]float64{20, 21, 19, 80})
//	fmt.Println(d.P95, d.Max) // the tail and the worst stall
//
// All functions are pure and safe for concurrent use.
package stats

import (
	"math"
	"slices"
)

// Distribution summarises a sample. With Count 0 every other field is 0.
type Distribution struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"` // sample standard deviation (n−1); 0 when Count < 2
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Describe returns the distribution of xs. xs is not modified.
func Describe(xs []float64) Distribution {
	if len(xs) == 0 {
		return Distribution{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Distribution{
		Count: len(s),
		Mean:  Mean(s),
		Std:   Std(s),
		Min:   s[0],
		P50:   Percentile(s, 50),
		P90:   Percentile(s, 90),
		P95:   Percentile(s, 95),
		P99:   Percentile(s, 99),
		Max:   s[len(s)-1],
	}
}

// Field returns the named statistic ("count", "mean", "std", "min", "p50",
// "p90", "p95", "p99", "max") and whether the name is known.
func (d Distribution) Field(name string) (float64, bool) {
	switch name {
	case "count":
		return float64(d.Count), true
	case "mean", "avg":
		return d.Mean, true
	case "std", "stddev":
		return d.Std, true
	case "min":
		return d.Min, true
	case "p50", "median":
		return d.P50, true
	case "p90":
		return d.P90, true
	case "p95":
		return d.P95, true
	case "p99":
		return d.P99, true
	case "max":
		return d.Max, true
	}
	return 0, false
}

// Mean returns the arithmetic mean of xs, 0 for an empty slice.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Std returns the sample standard deviation of xs (divisor n−1), 0 when
// len(xs) < 2. It uses two passes for accuracy.
func Std(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		d := x - m
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of sorted, which must
// be sorted ascending, by linear interpolation between closest ranks: the
// value at rank h = (n−1)·p/100, interpolated between floor(h) and ceil(h).
// This is numpy.percentile's default method. It returns 0 for an empty slice.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	h := float64(n-1) * p / 100
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= n {
		return sorted[n-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// NearestIndex returns the index, in a sorted sample of n values, of the
// value nearest in rank to the pth percentile as [Percentile] takes it
// (interpolated at rank (n−1)·p/100, rounded half up): the one
// observation that stands for a percentile, such as the request a chart
// shows "at the p95". It returns −1 for an empty sample.
func NearestIndex(n int, p float64) int {
	if n == 0 {
		return -1
	}
	p = min(max(p, 0), 100)
	return min(int(math.Floor(float64(n-1)*p/100+0.5)), n-1)
}

// Gaps returns the inter-token gaps t[i] − t[i−1] for i ≥ 1, in the unit of
// times. It returns nil for fewer than two times.
func Gaps(times []int64) []int64 {
	if len(times) < 2 {
		return nil
	}
	g := make([]int64, len(times)-1)
	for i := 1; i < len(times); i++ {
		g[i-1] = times[i] - times[i-1]
	}
	return g
}

// TPOT returns the mean time per output token after the first,
// (t[n−1] − t[0]) / (n − 1), and false when it is undefined (n < 2).
func TPOT(times []int64) (float64, bool) {
	n := len(times)
	if n < 2 {
		return 0, false
	}
	return float64(times[n-1]-times[0]) / float64(n-1), true
}

// Millis converts nanoseconds to milliseconds.
func Millis(ns int64) float64 { return float64(ns) / 1e6 }
