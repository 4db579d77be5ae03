package measure_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

const msNS = int64(time.Millisecond)

// painted is a browser request: four events arriving at 100, 120, 140
// and 160 ms from the click, the second and third painted in one frame,
// the last never painted.
func painted(render string) runfile.Request {
	return runfile.Request{
		Status: 200, TTFTNS: 100 * msNS, E2ENS: 160 * msNS,
		TokenTimesNS: []int64{100 * msNS, 120 * msNS, 140 * msNS, 160 * msNS},
		Paint: &runfile.Paint{
			Render:     render,
			InsertNS:   []int64{101 * msNS, 141 * msNS, 141 * msNS, -1},
			PaintNS:    []int64{110 * msNS, 150 * msNS, 150 * msNS, -1},
			LongFrames: []runfile.LongFrame{{StartNS: 90 * msNS, DurationNS: 70 * msNS}},
		},
	}
}

func TestPaintedMetrics(t *testing.T) {
	q := painted("frame")
	v := measure.Of(&q, stats.DefaultDisplay)
	for _, c := range []struct {
		m    measure.Metric
		want []float64
	}{
		{measure.PaintedTTFT, []float64{110}},
		// Tokens painted together add no gap.
		{measure.PaintGap, []float64{40}},
		// Per painted event, paint − arrival; the unpainted one has none.
		{measure.RenderOverhead, []float64{10, 30, 10}},
		{measure.LongFrame, []float64{70}},
	} {
		if got := v.Values(c.m); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %v, want %v", c.m, got, c.want)
		}
		if c.m.Pooled() == (c.m == measure.PaintedTTFT) {
			t.Errorf("%s: pooled %v", c.m, c.m.Pooled())
		}
	}
	// A request measured without a browser has none of them.
	q.Paint = nil
	v = measure.Of(&q, stats.DefaultDisplay)
	for _, m := range []measure.Metric{measure.PaintedTTFT, measure.PaintGap, measure.RenderOverhead, measure.LongFrame} {
		if got := v.Values(m); got != nil {
			t.Errorf("without a paint record %s = %v, want none", m, got)
		}
	}
}

func TestRenderGroupsAndStalePaints(t *testing.T) {
	run := &runfile.Run{SchemaVersion: 1}
	for i, r := range []string{"per-token", "frame", "per-token"} {
		q := painted(r)
		q.Index = i
		run.Requests = append(run.Requests, q)
	}
	measure.Summarize(run)
	if got := measure.Renders(run); !reflect.DeepEqual(got, []string{"per-token", "frame"}) {
		t.Errorf("Renders = %v", got)
	}
	if g := run.Summary.Renders["per-token"]; g.Requests != 2 || g.PaintedTTFTMs.Count != 2 || g.PaintGapMs.Max != 40 {
		t.Errorf("renders[per-token] = %+v", g)
	}
	if g := run.Summary.Overall; g.PaintedTTFTMs.Count != 3 || g.RenderOverheadMs.Count != 9 {
		t.Errorf("overall painted ttft %d, overhead %d values; want 3 and 9", g.PaintedTTFTMs.Count, g.RenderOverheadMs.Count)
	}

	// The follow-up's click is 145 ms after the old one's: the old
	// answer's frame at 150 ms painted two tokens after it.
	old, follow := painted("frame"), painted("frame")
	old.StartedAt = time.Unix(100, 0)
	follow.StartedAt = old.StartedAt.Add(145 * time.Millisecond)
	if got := measure.StalePaints(&old, &follow); got != 2 {
		t.Errorf("StalePaints = %d, want 2", got)
	}
	follow.StartedAt = old.StartedAt.Add(150 * time.Millisecond)
	if got := measure.StalePaints(&old, &follow); got != 0 {
		t.Errorf("StalePaints with the click at the last paint = %d, want 0", got)
	}
}
