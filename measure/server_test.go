package measure

import (
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestServerAt sums the queues, takes the fullest KV cache, and leaves
// out a value staler than two and a half intervals.
func TestServerAt(t *testing.T) {
	t0 := time.Unix(100, 0)
	pts := func(v ...float64) []runfile.ScrapePoint {
		var out []runfile.ScrapePoint
		for i, x := range v {
			out = append(out, runfile.ScrapePoint{MS: float64(i) * 1000, V: x})
		}
		return out
	}
	sc := &runfile.Scrape{StartedAt: t0, IntervalMS: 1000, Series: []runfile.ScrapeSeries{
		{Name: "q", Labels: map[string]string{"engine": "0"}, Role: runfile.RoleQueue, Kind: runfile.KindGauge, Points: pts(0, 2, 3)},
		{Name: "q", Labels: map[string]string{"engine": "1"}, Role: runfile.RoleQueue, Kind: runfile.KindGauge, Points: pts(1, 1)},
		{Name: "kv", Role: runfile.RoleKV, Kind: runfile.KindGauge, Points: pts(0.2, 0.4, 0.9)},
		{Name: "kv2", Role: runfile.RoleKV, Kind: runfile.KindGauge, Points: pts(0.5, 0.5, 0.5)},
		{Name: "other", Kind: runfile.KindGauge, Points: pts(7, 7, 7)},
	}}
	got := ServerAt(sc, t0.Add(1500*time.Millisecond))
	if !got.HasQueue || got.Queue != 3 || !got.HasKV || got.KV != 0.5 || got.HasRunning {
		t.Errorf("at 1.5 s: %+v; want queue 2+1, KV 0.5, no running", got)
	}
	// At 4 s engine 1's last point (1 s) is 3 s old: left out.
	got = ServerAt(sc, t0.Add(4*time.Second))
	if got.Queue != 3 || got.KV != 0.9 {
		t.Errorf("at 4 s: %+v; want queue 3 (engine 0 alone), KV 0.9", got)
	}
	if got := ServerAt(sc, t0.Add(-time.Second)); got.HasQueue || got.HasKV {
		t.Errorf("before the first sample: %+v", got)
	}
}
