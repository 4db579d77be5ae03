package compare

import (
	"math"
	"sort"
)

// MannWhitney returns the Mann-Whitney U statistic of x against y and its
// two-sided p-value by the normal approximation with tie correction and a
// continuity correction of ½ (the asymptotic method of R's wilcox.test and
// SciPy's mannwhitneyu):
//
//	U1 = R1 − n1(n1+1)/2, U = max(U1, n1·n2 − U1)
//	σ² = n1·n2/12 · ((n+1) − Σ(t³−t)/(n(n−1)))   (t: sizes of tied groups)
//	z  = (U − n1·n2/2 − ½) / σ,  p = 2·(1 − Φ(z)), at most 1
//
// u is U1, the count of pairs (x_i, y_j) with x_i > y_j (ties count ½), so
// u/(n1·n2) estimates P(X > Y). The p-value is 1 when either sample is
// empty or every value is tied.
func MannWhitney(x, y []float64) (u, p float64) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	type obs struct {
		v     float64
		fromX bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	n := float64(n1 + n2)
	var r1, tieSum float64
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		// Ranks i+1 … j share their average.
		rank := float64(i+1+j) / 2
		t := float64(j - i)
		tieSum += t*t*t - t
		for k := i; k < j; k++ {
			if all[k].fromX {
				r1 += rank
			}
		}
		i = j
	}
	f1, f2 := float64(n1), float64(n2)
	u = r1 - f1*(f1+1)/2
	big := math.Max(u, f1*f2-u)
	mu := f1 * f2 / 2
	variance := f1 * f2 / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		return u, 1
	}
	z := (big - mu - 0.5) / math.Sqrt(variance)
	p = math.Erfc(z / math.Sqrt2)
	return u, math.Min(p, 1)
}

// FisherExact returns the two-sided p-value of Fisher's exact test on the
// 2×2 table [[a, b], [c, d]]: the total probability, under fixed margins,
// of every table no more likely than the one observed. compare uses it for
// error counts (a failed of a+b in the base, c failed of c+d in the new).
func FisherExact(a, b, c, d int) float64 {
	r1, c1, n := a+b, a+c, a+b+c+d
	if n == 0 {
		return 1
	}
	lo := max(0, c1-(n-r1))
	hi := min(r1, c1)
	logP := func(k int) float64 {
		return lchoose(r1, k) + lchoose(n-r1, c1-k) - lchoose(n, c1)
	}
	obs := logP(a)
	var p float64
	for k := lo; k <= hi; k++ {
		if lp := logP(k); lp <= obs+1e-7 {
			p += math.Exp(lp)
		}
	}
	return math.Min(p, 1)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
