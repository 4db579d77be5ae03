package measure

import (
	"math"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestOverTimeAndBuckets(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	// Ten requests a second apart; the first three slow (warm-up), one
	// failed.
	var reqs []runfile.Request
	for i := range 10 {
		ttft := int64(20 * time.Millisecond)
		if i < 3 {
			ttft = int64(200 * time.Millisecond)
		}
		q := runfile.Request{Index: i, RequestID: "r", StartedAt: t0.Add(time.Duration(i) * time.Second),
			TTFTNS: ttft, E2ENS: ttft + int64(100*time.Millisecond), TokenTimesNS: []int64{ttft, ttft + int64(100*time.Millisecond)}}
		if i == 7 {
			q.Error, q.ErrorKind, q.TokenTimesNS = "boom", "http", nil
		}
		reqs = append(reqs, q)
	}
	run := &runfile.Run{Requests: reqs}
	ts := OverTime(Views(run, Overall))
	if len(ts) != 10 || ts[9].AtS != 9 || ts[7].OK || !ts[0].HasTTFT || ts[0].TTFTMs != 200 {
		t.Fatalf("OverTime: %+v", ts)
	}
	b := TimeBuckets(ts, 10, 2)
	if len(b) != 2 || b[0].Requests != 5 || b[1].Requests != 5 || b[1].Failed != 1 {
		t.Fatalf("buckets %+v", b)
	}
	// The first half holds the warm-up: its TTFT median is the slow one.
	if b[0].TTFTP50 != 200 || b[1].TTFTP50 != 20 || b[1].TTFTCount != 4 {
		t.Errorf("TTFT p50 %g then %g (%d), want 200 then 20 (4)", b[0].TTFTP50, b[1].TTFTP50, b[1].TTFTCount)
	}
	if math.Abs(b[1].E2EP50-120) > 1e-9 {
		t.Errorf("E2E p50 of the second half %g, want 120", b[1].E2EP50)
	}
	if TimeBuckets(ts, 0, 3) != nil {
		t.Error("no span: want nil")
	}
}
