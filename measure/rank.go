package measure

import (
	"cmp"
	"slices"

	"github.com/tokenpulse/tokenpulse/stats"
)

// AtRanks returns, for each percentile of ps (0 to 100), the view whose
// value of the per-request metric m stands at that nearest rank
// ([stats.NearestIndex]) among views ordered by it, ties in their order:
// the request a scope's pNN of m stands for (a summary's percentile
// interpolates between two; this is the nearer). Views with no value of
// m (a failed request, one without a token) are in no rank, as they are
// in no sample. It returns nil when no view has a value.
func AtRanks(views []View, m Metric, ps ...float64) []*View {
	type ranked struct {
		v *View
		x float64
	}
	var rs []ranked
	for i := range views {
		if xs := views[i].Values(m); len(xs) == 1 {
			rs = append(rs, ranked{&views[i], xs[0]})
		}
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return cmp.Compare(a.x, b.x) })
	out := make([]*View, len(ps))
	for i, p := range ps {
		out[i] = rs[stats.NearestIndex(len(rs), p)].v
	}
	return out
}
