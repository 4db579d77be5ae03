package store

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/baseline"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// val reads a headline figure, NaN when it is absent.
func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC)

// mkRun builds a small run started at t0 + minutes, with token times so
// that its summary is real.
func mkRun(minutes int, url, model, host string, gapMS int64, passed bool) *runfile.Run {
	r := &runfile.Run{
		SchemaVersion: runfile.SchemaVersion,
		Tool:          runfile.Tool{Name: "tokenpulse", Version: "v0.1.0"},
		StartedAt:     t0.Add(time.Duration(minutes) * time.Minute),
		Target:        runfile.Target{URL: url, Model: model, Backend: "mock"},
		Device:        runfile.Device{Hostname: host, CPUModel: "Xeon", OS: "linux", Arch: "amd64"},
		Config:        runfile.Config{Suite: "zh-medical"},
	}
	for i := range 4 {
		times := []int64{100e6}
		for k := 1; k < 30; k++ {
			times = append(times, times[k-1]+gapMS*1e6)
		}
		r.Requests = append(r.Requests, runfile.Request{Index: i, Category: "short", Status: 200,
			TTFTNS: times[0], E2ENS: times[len(times)-1], OutputTokens: 30, ContentEvents: 30, TokenTimesNS: times})
	}
	measure.Summarize(r)
	r.Verdicts = []runfile.Verdict{{Rule: "gap.max <= 120ms", Scope: "overall", Passed: passed}}
	return r
}

func TestAddGetList(t *testing.T) { forEachBackend(t, testAddGetList) }

func testAddGetList(t *testing.T, b backend) {
	ctx := context.Background()
	path := b.path(t)
	if b.name == "sqlite" {
		path = filepath.Join(t.TempDir(), "sub", "history.db") // its directory is created
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	runs := []*runfile.Run{
		mkRun(0, "http://a", "m1", "host1", 20, true),
		mkRun(1, "http://a", "m1", "host1", 30, false),
		mkRun(2, "http://a", "m2", "host1", 20, true),
		mkRun(3, "http://b", "m1", "host2", 20, true),
	}
	runs[3].Device.Label = "Pixel 8 / Android 15"
	var ids []int64
	for _, r := range runs {
		id, err := s.Add(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}

	// Adding a run again is a no-op that returns its id.
	again, err := s.Add(ctx, runs[1])
	if err != nil || again != ids[1] {
		t.Errorf("re-adding: got %d, %v; want %d", again, err, ids[1])
	}

	all, err := s.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 || all[0].ID != ids[3] || all[3].ID != ids[0] {
		t.Fatalf("List: got %d rows (first %d), want 4 newest first", len(all), all[0].ID)
	}
	e := all[2] // runs[1]
	if e.TargetURL != "http://a" || e.Model != "m1" || e.Backend != "mock" || e.Hostname != "host1" || e.Device != "host1" ||
		e.CPUModel != "Xeon" || e.Suite != "zh-medical" || e.ToolVersion != "v0.1.0" || !e.StartedAt.Equal(runs[1].StartedAt) {
		t.Errorf("row: got %+v", e)
	}
	if e.Passed || e.Verdicts != 1 || e.VerdictsFailed != 1 {
		t.Errorf("verdict: got passed %v, %d/%d failed; want failed 1/1", e.Passed, e.VerdictsFailed, e.Verdicts)
	}
	if e.Requests != 4 || val(e.GapP95MS) != 30 || val(e.GapMaxMS) != 30 || val(e.TTFTP50MS) != 100 || val(e.TPOTMeanMS) != 30 {
		t.Errorf("headline: got requests %d gap p95 %v max %v ttft p50 %v tpot %v; want 4, 30, 30, 100, 30", e.Requests, val(e.GapP95MS), val(e.GapMaxMS), val(e.TTFTP50MS), val(e.TPOTMeanMS))
	}
	if all[0].Device != "Pixel 8 / Android 15" || all[0].DeviceLabel != "Pixel 8 / Android 15" {
		t.Errorf("labelled device: got %q / %q", all[0].Device, all[0].DeviceLabel)
	}

	filters := []struct {
		name string
		f    Filter
		want []int64
	}{
		{"target", Filter{Target: "http://a"}, []int64{ids[2], ids[1], ids[0]}},
		{"target and model", Filter{Target: "http://a", Model: "m1"}, []int64{ids[1], ids[0]}},
		{"device by label", Filter{Device: "Pixel 8 / Android 15"}, []int64{ids[3]}},
		{"device by hostname", Filter{Device: "host2"}, []int64{ids[3]}},
		{"before", Filter{Before: runs[2].StartedAt}, []int64{ids[1], ids[0]}},
		{"limit", Filter{Limit: 2}, []int64{ids[3], ids[2]}},
		{"nothing", Filter{Target: "http://none"}, nil},
	}
	for _, tc := range filters {
		t.Run(tc.name, func(t *testing.T) {
			es, err := s.List(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, e := range es {
				got = append(got, e.ID)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got ids %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got ids %v, want %v", got, tc.want)
				}
			}
		})
	}

	// Get returns the whole run file.
	_, back, err := s.Get(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Requests) != 4 || len(back.Requests[0].TokenTimesNS) != 30 || back.Summary.Overall.GapMs.P95 != 30 || !back.StartedAt.Equal(runs[1].StartedAt) {
		t.Errorf("Get: run did not survive the round trip: %d requests, gap p95 %v", len(back.Requests), back.Summary.Overall.GapMs.P95)
	}
	if _, _, err := s.Get(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(999): got %v, want ErrNotFound", err)
	}

	// Latest and Previous.
	le, _, err := s.Latest(ctx, "http://a", "m1", "host1")
	if err != nil || le.ID != ids[1] {
		t.Errorf("Latest: got %d, %v; want %d", le.ID, err, ids[1])
	}
	pe, prev, err := s.Previous(ctx, runs[1], baseline.Policy{})
	if err != nil || pe.ID != ids[0] || !prev.StartedAt.Equal(runs[0].StartedAt) {
		t.Errorf("Previous(run 1): got %d, %v; want %d", pe.ID, err, ids[0])
	}
	fresh := mkRun(10, "http://a", "m1", "host1", 20, true) // not recorded
	if pe, _, err := s.Previous(ctx, fresh, baseline.Policy{}); err != nil || pe.ID != ids[1] {
		t.Errorf("Previous(unrecorded): got %d, %v; want %d", pe.ID, err, ids[1])
	}
	if _, _, err := s.Previous(ctx, runs[0], baseline.Policy{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Previous(first run): got %v, want ErrNotFound", err)
	}
	if _, _, err := s.Latest(ctx, "http://a", "m1", "host9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Latest(other device): got %v, want ErrNotFound", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReopenKeepsRunsAndSchema(t *testing.T) { forEachBackend(t, testReopenKeepsRunsAndSchema) }

func testReopenKeepsRunsAndSchema(t *testing.T, b backend) {
	ctx := context.Background()
	path := b.path(t)
	id, err := Record(path, mkRun(0, "http://a", "m", "h", 20, true))
	if err != nil {
		t.Fatal(err)
	}
	id2, err := Record(path, mkRun(5, "http://a", "m", "h", 25, true))
	if err != nil || id2 == id {
		t.Fatalf("second Record: got %d, %v", id2, err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.List(ctx, Filter{})
	if err != nil || len(es) != 2 || es[1].ID != id || val(es[0].GapP95MS) != 25 {
		t.Fatalf("after reopening: got %+v, %v", es, err)
	}

	// The history is at the current schema version, and a SQLite file
	// in WAL mode.
	db := b.rawDB(t, path)
	version, err := b.d.version(ctx, db)
	if err != nil || version != SchemaVersion {
		t.Errorf("version %d, %v; want %d", version, err, SchemaVersion)
	}
	if b.name == "sqlite" {
		var mode string
		db.QueryRow("PRAGMA journal_mode").Scan(&mode)
		if mode != "wal" {
			t.Errorf("journal mode %q, want wal", mode)
		}
	}
}

func TestNewerSchemaIsRefused(t *testing.T) { forEachBackend(t, testNewerSchemaIsRefused) }

func testNewerSchemaIsRefused(t *testing.T, b backend) {
	path := b.path(t)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.d.setVersion(context.Background(), tx, 99); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("got %v, want a schema-too-new error", err)
	}
	if _, err := OpenRead(path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("OpenRead: got %v, want a schema-too-new error", err)
	}
}

func TestDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvHistory, "postgres://h/db")
	if got, err := DefaultPath(); err != nil || got != "postgres://h/db" {
		t.Errorf("with %s: got %q, %v", EnvHistory, got, err)
	}
	t.Setenv(EnvHistory, "")
	t.Setenv("XDG_DATA_HOME", dir)
	got, err := DefaultPath()
	if err != nil || got != filepath.Join(dir, "tokenpulse", "history.db") {
		t.Errorf("got %q, %v; want under XDG_DATA_HOME", got, err)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", dir)
	got, err = DefaultPath()
	if err != nil || !strings.HasPrefix(got, dir) || filepath.Base(got) != "history.db" {
		t.Errorf("without XDG_DATA_HOME: got %q, %v; want a history.db under HOME", got, err)
	}
	// Record with "" uses it.
	if _, err := Record("", mkRun(0, "http://a", "m", "h", 20, true)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(got); err != nil {
		t.Errorf("default file not created: %v", err)
	}
}

func TestPreviousSkipsUnusableBaselinesAndKeysEmbeddedByModel(t *testing.T) {
	forEachBackend(t, testPreviousSkipsUnusableBaselinesAndKeysEmbeddedByModel)
}

func testPreviousSkipsUnusableBaselinesAndKeysEmbeddedByModel(t *testing.T, b backend) {
	s, err := Open(b.path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	mk := func(i int, port string, ok, requests int, interrupted bool) *runfile.Run {
		r := &runfile.Run{
			SchemaVersion: runfile.SchemaVersion,
			StartedAt:     t0.Add(time.Duration(i) * time.Hour),
			Interrupted:   interrupted,
			Target:        runfile.Target{URL: "http://127.0.0.1:" + port, Model: "stories260K", Backend: "embedded", ModelSHA256: "047bf46455a544931cff"},
			Device:        runfile.Device{Hostname: "h"},
		}
		r.Summary.Overall.Requests = requests
		r.Summary.Overall.Errors = requests - ok
		return r
	}
	good := mk(0, "1111", 5, 5, false)
	if _, err := s.Add(ctx, good); err != nil {
		t.Fatal(err)
	}
	for i, r := range []*runfile.Run{
		mk(1, "2222", 0, 5, false), // every request failed
		mk(2, "3333", 0, 0, false), // nothing measured
		mk(3, "4444", 3, 3, true),  // interrupted
	} {
		if _, err := s.Add(ctx, r); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	// A new run on another port of the same embedded model finds the good
	// run, passing over the three unusable ones recorded after it.
	e, base, err := s.Previous(ctx, mk(4, "5555", 5, 5, false), baseline.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if !base.StartedAt.Equal(good.StartedAt) {
		t.Errorf("baseline started %v (entry %d), want the good run of %v", base.StartedAt, e.ID, good.StartedAt)
	}
	if got, want := e.TargetURL, "embedded:stories260K@047bf46455a5"; got != want {
		t.Errorf("recorded target = %q, want %q", got, want)
	}
}
