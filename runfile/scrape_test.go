package runfile

import (
	"path/filepath"
	"testing"
	"time"
)

// TestScrapeRoundTripAndBounds: a run's scrape is written and read back
// as it was; a scrape out of time order or of an unknown kind is
// refused; a run without one (every file before it) has none.
func TestScrapeRoundTripAndBounds(t *testing.T) {
	r := saneRun(2)
	at := time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC)
	r.Scrape = &Scrape{URL: "http://h/metrics", StartedAt: at, IntervalMS: 1000, Samples: 3, Failed: 1, Series: []ScrapeSeries{
		{Name: "vllm:num_requests_waiting", Labels: map[string]string{"model_name": "m", "engine": "0"}, Role: RoleQueue, Kind: KindGauge,
			Points: []ScrapePoint{{0, 1}, {1000, 4}}},
	}}
	p := filepath.Join(t.TempDir(), "run.json")
	if err := r.Write(p); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	s := got.Scrape.Series[0]
	if !got.Scrape.StartedAt.Equal(at) || s.Key() != `vllm:num_requests_waiting{engine="0",model_name="m"}` || len(s.Points) != 2 || s.Points[1].V != 4 {
		t.Errorf("read back %+v", got.Scrape)
	}
	if v, ok := s.At(1500, 2000); !ok || v != 4 {
		t.Errorf("At(1500) = %v, %v; want 4", v, ok)
	}
	if _, ok := s.At(5000, 2000); ok {
		t.Error("At(5000) found a value 4 s stale")
	}
	if _, ok := s.At(-1, 2000); ok {
		t.Error("At before the first point found a value")
	}

	r.Scrape.Series[0].Points = []ScrapePoint{{1000, 1}, {0, 4}}
	wantInvalid(t, r.Validate(), "scrape", "out of time order")
	r.Scrape.Series[0].Points = nil
	r.Scrape.Series[0].Kind = "histogram"
	wantInvalid(t, r.Validate(), "scrape", "kind")

	r.Scrape = nil
	if err := r.Write(p); err != nil {
		t.Fatal(err)
	}
	if got, err := Load(p); err != nil || got.Scrape != nil {
		t.Errorf("a run without a scrape read back with %+v (%v)", got.Scrape, err)
	}
}
