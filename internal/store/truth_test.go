package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/baseline"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// allFailed is a run of 3 requests that all failed, with one rule judged
// on its error budget (crossed) and one not judged (no data).
func allFailed(minutes int, url string) *runfile.Run {
	r := mkRun(minutes, url, "m", "h", 20, true)
	for i := range r.Requests {
		r.Requests[i] = runfile.Request{Index: i, Category: "short", Error: "boom", ErrorKind: "http", Status: 500}
	}
	measure.Summarize(r)
	r.Verdicts = []runfile.Verdict{
		{Rule: "ttft.p95 < 250ms", Scope: "overall", NoData: "no data: all 4 requests of overall failed"},
		{Rule: "errors.rate <= 1%", Scope: "overall", Value: 100, Limit: 1, Unit: "%"},
	}
	return r
}

func TestRunWithoutSuccessHasNoFiguresAndNoDataIsNoFailure(t *testing.T) {
	forEachBackend(t, testRunWithoutSuccessHasNoFiguresAndNoDataIsNoFailure)
}

func testRunWithoutSuccessHasNoFiguresAndNoDataIsNoFailure(t *testing.T, b backend) {
	ctx := context.Background()
	s, err := Open(b.path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Add(ctx, allFailed(0, "http://a")); err != nil {
		t.Fatal(err)
	}
	ok := mkRun(1, "http://a", "m", "h", 20, true)
	ok.Verdicts = append(ok.Verdicts, runfile.Verdict{Rule: "[category:long] ttft.p95 < 1s", Scope: "category:long", NoData: "no data: the run has no category:long request"})
	if _, err := s.Add(ctx, ok); err != nil {
		t.Fatal(err)
	}
	es, err := s.List(ctx, Filter{})
	if err != nil || len(es) != 2 {
		t.Fatalf("List: %v, %v", es, err)
	}
	failed, good := es[1], es[0]
	for name, p := range map[string]*float64{"ttft p50": failed.TTFTP50MS, "ttft p95": failed.TTFTP95MS, "gap p95": failed.GapP95MS,
		"gap max": failed.GapMaxMS, "tpot mean": failed.TPOTMeanMS, "e2e p95": failed.E2EP95MS} {
		if p != nil {
			t.Errorf("run without a success: %s = %v, want none", name, *p)
		}
	}
	if failed.VerdictsFailed != 1 || failed.VerdictsNotJudged != 1 || failed.Passed {
		t.Errorf("run without a success: failed %d, not judged %d, passed %v; want 1, 1, false", failed.VerdictsFailed, failed.VerdictsNotJudged, failed.Passed)
	}
	if good.VerdictsFailed != 0 || good.VerdictsNotJudged != 1 || !good.Passed || good.TTFTP50MS == nil {
		t.Errorf("run with a rule not judged: failed %d, not judged %d, passed %v, ttft %v; want 0, 1, true, a value", good.VerdictsFailed, good.VerdictsNotJudged, good.Passed, good.TTFTP50MS)
	}
}

func TestTargetURLsAreNormalised(t *testing.T) { forEachBackend(t, testTargetURLsAreNormalised) }

func testTargetURLsAreNormalised(t *testing.T, b backend) {
	ctx := context.Background()
	s, err := Open(b.path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := mkRun(0, "http://H:8080/v1/", "m", "h", 20, true)
	if _, err := s.Add(ctx, first); err != nil {
		t.Fatal(err)
	}
	es, err := s.List(ctx, Filter{Target: "http://h:8080"})
	if err != nil || len(es) != 1 || es[0].TargetURL != "http://h:8080" {
		t.Fatalf("List(http://h:8080) = %+v, %v; want the run recorded as http://H:8080/v1/", es, err)
	}
	if es, _ := s.List(ctx, Filter{Target: "http://h:8080/v1"}); len(es) != 1 {
		t.Errorf("List(http://h:8080/v1) found %d runs, want 1", len(es))
	}
	next := mkRun(5, "http://h:8080", "m", "h", 20, true)
	if e, _, err := s.Previous(ctx, next, baseline.Policy{}); err != nil || !e.StartedAt.Equal(first.StartedAt) {
		t.Errorf("Previous(--url http://h:8080) = %d, %v; want the run of --url http://H:8080/v1/", e.ID, err)
	}
}

func TestPreviousRefusesOtherSettingsOrTakesTheLastComparable(t *testing.T) {
	forEachBackend(t, testPreviousRefusesOtherSettingsOrTakesTheLastComparable)
}

func testPreviousRefusesOtherSettingsOrTakesTheLastComparable(t *testing.T, b backend) {
	ctx := context.Background()
	s, err := Open(b.path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	zh := mkRun(0, "http://a", "m", "h", 20, true) // suite zh-medical
	if _, err := s.Add(ctx, zh); err != nil {
		t.Fatal(err)
	}
	cur := mkRun(10, "http://a", "m", "h", 20, true)
	cur.Config.Suite = "en-assistant"
	_, _, err = s.Previous(ctx, cur, baseline.Policy{})
	var r *baseline.Refusal
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "the last run of this target used suite zh-medical, this one en-assistant") {
		t.Fatalf("Previous(other suite) = %v, want a refusal naming the suites", err)
	}
	if e, _, err := s.Previous(ctx, cur, baseline.Policy{AnyConfig: true}); err != nil || !e.StartedAt.Equal(zh.StartedAt) {
		t.Errorf("Previous(AnyConfig) = %d, %v; want the zh-medical run", e.ID, err)
	}
	// A comparable run further back is taken over a newer one of another suite.
	en := mkRun(-10, "http://a", "m", "h", 20, true)
	en.Config.Suite = "en-assistant"
	if _, err := s.Add(ctx, en); err != nil {
		t.Fatal(err)
	}
	if e, _, err := s.Previous(ctx, cur, baseline.Policy{}); err != nil || !e.StartedAt.Equal(en.StartedAt) {
		t.Errorf("Previous = %d, %v; want the older en-assistant run", e.ID, err)
	}
}

// TestMigrationRederivesOldRows opens a history written by schema 1: its
// rows keep their raw URL, 0 for figures a run did not have, and count a
// verdict without data as failed. After the migration they match a
// normalised lookup, hold no figure, and count the verdict as not judged.
func TestMigrationRederivesOldRows(t *testing.T) { forEachBackend(t, testMigrationRederivesOldRows) }

func testMigrationRederivesOldRows(t *testing.T, b backend) {
	ctx := context.Background()
	path := b.path(t)
	db := b.rawDB(t, path)
	b.oldSchema(t, db, 1)
	old := allFailed(0, "http://h:8080/v1")
	_, gz := encodeForTest(t, old)
	_, err := db.Exec(b.d.translate(`INSERT INTO runs (fingerprint, started_at, started_ns, recorded_at, target_url, model, backend,
		hostname, device_label, device, cpu_model, os, arch, tier, suite, tool_version,
		requests, errors, ttft_p50_ms, ttft_p95_ms, gap_p95_ms, gap_max_ms, tpot_mean_ms, e2e_p95_ms,
		verdicts, verdicts_failed, passed, run_json_gz)
		VALUES ('fp', ?, ?, ?, 'http://h:8080/v1', 'm', 'mock', 'h', '', 'h', '', '', '', '', 'zh-medical', '',
		4, 4, 0, 0, 0, 0, 0, 0, 2, 2, 0, ?)`),
		old.StartedAt.Format(time.RFC3339Nano), old.StartedAt.UnixNano(), old.StartedAt.Format(time.RFC3339Nano), gz)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.List(ctx, Filter{Target: "http://h:8080"})
	if err != nil || len(es) != 1 {
		t.Fatalf("after migration, List(http://h:8080) = %d rows, %v; want the old row", len(es), err)
	}
	e := es[0]
	if e.TargetURL != "http://h:8080" || e.TTFTP50MS != nil || e.GapMaxMS != nil || e.VerdictsFailed != 1 || e.VerdictsNotJudged != 1 {
		t.Errorf("migrated row: target %q, ttft %v, gap max %v, failed %d, not judged %d; want http://h:8080, none, none, 1, 1",
			e.TargetURL, e.TTFTP50MS, e.GapMaxMS, e.VerdictsFailed, e.VerdictsNotJudged)
	}
	// The migrated history takes new runs: on PostgreSQL migration 2
	// copied the row with its id, past which the identity must have moved.
	if id, err := s.Add(ctx, mkRun(5, "http://h:8080", "m", "h", 20, true)); err != nil || id == e.ID {
		t.Errorf("Add after migration: id %d, %v; want a new id", id, err)
	}
	if e.ReportURL != "" {
		t.Errorf("migrated row has report URL %q, want none", e.ReportURL)
	}
}

func encodeForTest(t *testing.T, r *runfile.Run) ([]byte, []byte) {
	t.Helper()
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(js)
	zw.Close()
	return js, buf.Bytes()
}

// TestPreviousPassesOverAnUnreadableRun stores a run whose stored file
// no longer decodes (a run file an older tokenpulse wrote that today's
// validation refuses, or a damaged row): `--against last` passes over it
// to the comparable run before it, as it passes over an interrupted
// one, and names it when no other run qualifies.
func TestPreviousPassesOverAnUnreadableRun(t *testing.T) {
	forEachBackend(t, testPreviousPassesOverAnUnreadableRun)
}

func testPreviousPassesOverAnUnreadableRun(t *testing.T, b backend) {
	ctx := context.Background()
	s, err := Open(b.path(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"schema_version": 1, "requests": [{"index": 0, "ttft_ns": -5}]}`))
	zw.Close()
	spoil := func(id int64) {
		if _, err := s.db.ExecContext(ctx, s.q("UPDATE runs SET run_json_gz = ? WHERE id = ?"), gz.Bytes(), id); err != nil {
			t.Fatal(err)
		}
	}
	cur := mkRun(10, "http://a", "m", "h", 20, true)

	bad := mkRun(5, "http://a", "m", "h", 20, true)
	badID, err := s.Add(ctx, bad)
	if err != nil {
		t.Fatal(err)
	}
	spoil(badID)
	_, _, err = s.Previous(ctx, cur, baseline.Policy{})
	if err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("Previous with only an unreadable run = %v, want an error naming it", err)
	}

	good := mkRun(0, "http://a", "m", "h", 20, true)
	if _, err := s.Add(ctx, good); err != nil {
		t.Fatal(err)
	}
	if e, _, err := s.Previous(ctx, cur, baseline.Policy{}); err != nil || !e.StartedAt.Equal(good.StartedAt) {
		t.Errorf("Previous = %d, %v; want the readable run before the unreadable one", e.ID, err)
	}
}
