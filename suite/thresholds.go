package suite

import (
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// MeasuredThresholds returns the thresholds of s's categories that reqs
// measured (a category is measured when one of its requests is in
// measure.Overall), keyed by category, for a run's config; and, in the
// suite's order, the categories with thresholds that reqs did not
// measure (a small sample may leave one out: a gate must not fail, nor
// pass, on a category it never saw).
func (s *Suite) MeasuredThresholds(reqs []runfile.Request) (thresholds map[string][]string, unmeasured []string) {
	seen := map[string]bool{}
	for i := range reqs {
		if measure.Overall.Has(&reqs[i]) {
			seen[reqs[i].Category] = true
		}
	}
	thresholds = map[string][]string{}
	for _, c := range s.Categories {
		if len(c.Thresholds) == 0 {
			continue
		}
		if !seen[c.Name] {
			unmeasured = append(unmeasured, c.Name)
			continue
		}
		thresholds[c.Name] = append([]string(nil), c.Thresholds...)
	}
	return thresholds, unmeasured
}
