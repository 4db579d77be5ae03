package measure

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

func TestHeadlineFigures(t *testing.T) {
	var g runfile.Group
	g.TTFTMs = stats.Distribution{Count: 3, P50: 1, P95: 2}
	g.GapMs = stats.Distribution{Count: 9, P50: 3, P95: 4, Max: 5}
	g.TPOTMs = stats.Distribution{Count: 3, Mean: 6, P95: 99}
	g.TokenIntervalMs = stats.Distribution{Count: 9, P95: 7}
	want := map[string]float64{"ttft.p50": 1, "ttft.p95": 2, "gap.p50": 3, "gap.p95": 4, "gap.max": 5, "tpot.mean": 6, "tpot.p95": 7}
	for _, f := range append(Headlines, TPOTP95) {
		if w, ok := want[f.Name]; ok {
			if v, has := f.Of(&g); !has || v != w {
				t.Errorf("%s = %v, %v; want %v", f.Name, v, has, w)
			}
		}
	}
	if _, ok := E2EP95.Of(&g); ok {
		t.Error("e2e.p95 of a group without E2E: want no value, not 0")
	}
	if len(Headlines) != 7 || Headlines[0] != TTFTP50 || Headlines[6] != E2EP95 {
		t.Errorf("Headlines = %v", Headlines)
	}
}
