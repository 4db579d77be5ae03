package stats

import "sort"

// RanksDesc returns the 1-based rank of each value when the values are
// sorted largest first; a value that is missing (ok[i] false) ranks after
// every present one. Ties keep their input order, so the ranks are a
// permutation of 1..len(xs).
func RanksDesc(xs []float64, ok []bool) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if ok[i] != ok[j] {
			return ok[i]
		}
		return ok[i] && xs[i] > xs[j]
	})
	out := make([]int, len(xs))
	for r, i := range idx {
		out[i] = r + 1
	}
	return out
}
