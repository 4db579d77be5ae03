package merge

import (
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestMergeKeepsTheScrape: the shards of a run with --scrape each
// sampled the one target; the merged run keeps the lowest shard's
// samples instead of losing them all.
func TestMergeKeepsTheScrape(t *testing.T) {
	a, b := shardRun(0, 2, 2, 0), shardRun(1, 2, 2, 0)
	b.Scrape = &runfile.Scrape{URL: "http://x/metrics", StartedAt: t0, IntervalMS: 1000, Samples: 1,
		Series: []runfile.ScrapeSeries{{Name: "llamacpp:requests_deferred", Role: runfile.RoleQueue, Kind: runfile.KindGauge, Points: []runfile.ScrapePoint{{MS: 0, V: 4}}}}}
	run, err := Merge(parts(b, a), nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Scrape == nil || run.Scrape.Series[0].Points[0].V != 4 {
		t.Errorf("merged scrape %+v, want shard 1's", run.Scrape)
	}
	a.Scrape = &runfile.Scrape{URL: "http://x/metrics", StartedAt: t0.Add(time.Second), IntervalMS: 1000, Series: []runfile.ScrapeSeries{}}
	if run, _ := Merge(parts(b, a), nil); run.Scrape == nil || !run.Scrape.StartedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("merged scrape %+v, want shard 0's", run.Scrape)
	}
}
