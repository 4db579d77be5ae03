package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/tokenpulse/tokenpulse/baseline"
	"github.com/tokenpulse/tokenpulse/internal/pgtest"
)

// TestImportFromSQLite copies a SQLite history into PostgreSQL: every run
// arrives with its figures, verdict, run file and report address; a
// second import copies nothing; a run the destination already held is
// skipped, not doubled; and `--against last` then finds the imported run.
func TestImportFromSQLite(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "old.db")
	runs := 5
	for i := range runs {
		if _, err := Record(src, mkRun(i*60, "http://a:8080/v1", "m", "host1", int64(20+i), i != 2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := RecordReportURL(src, mkRun(0, "http://a:8080/v1", "m", "host1", 20, true), "https://reports.example/0/report.html"); err != nil {
		t.Fatal(err)
	}
	url := pgtest.Database(t)
	dst, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	// The fleet had already recorded run 4 there.
	if _, err := dst.Add(ctx, mkRun(4*60, "http://a:8080/v1", "m", "host1", 24, true)); err != nil {
		t.Fatal(err)
	}
	res, err := dst.Import(ctx, src)
	if err != nil || res != (ImportResult{Copied: 4, Skipped: 1}) {
		t.Fatalf("first import: %+v, %v; want 4 copied, 1 skipped", res, err)
	}
	res, err = dst.Import(ctx, src)
	if err != nil || res != (ImportResult{Copied: 0, Skipped: 5}) {
		t.Fatalf("second import: %+v, %v; want 0 copied, 5 skipped", res, err)
	}
	// A run recorded after the imports takes the next id: the skipped
	// rows of the second import used none.
	if id, err := dst.Add(ctx, mkRun(9*60, "http://b:8080/v1", "m", "host1", 20, true)); err != nil || id != int64(runs+1) {
		t.Errorf("the run after two imports of %d runs is run %d (%v), want %d", runs, id, err, runs+1)
	}
	es, err := dst.List(ctx, Filter{Target: "http://a:8080"})
	if err != nil || len(es) != runs {
		t.Fatalf("after import: %d runs, %v; want %d", len(es), err, runs)
	}
	from, err := OpenRead(src)
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	want, err := from.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		g, w := es[i], want[i]
		if w.TPOTP95MS == nil || val(g.TPOTP95MS) != val(w.TPOTP95MS) {
			t.Errorf("run %d: TPOT p95 %v imported as %v", i, val(w.TPOTP95MS), val(g.TPOTP95MS))
		}
		if val(g.GapP95MS) != val(w.GapP95MS) || g.Passed != w.Passed || g.ReportURL != w.ReportURL || !g.StartedAt.Equal(w.StartedAt) {
			t.Errorf("run %d: imported %+v, want %+v", i, g, w)
		}
	}
	if es[len(es)-1].ReportURL == "" {
		t.Error("the report address was not copied")
	}
	_, base, err := dst.Previous(ctx, mkRun(5*60, "http://a:8080", "m", "host1", 20, true), baseline.Policy{})
	if err != nil || !base.StartedAt.Equal(mkRun(4*60, "", "", "", 0, true).StartedAt) {
		t.Errorf("Previous after import: %v, %v; want run 4", base, err)
	}
	if _, err := dst.Import(ctx, url); err == nil {
		t.Error("importing from a URL: no error")
	}
}

// TestOpenReadPostgres: a database without the schema is "nothing
// recorded" (ErrNoFile) and is left without it; a store opened to read
// refuses to write, and the server refuses its writes too.
func TestOpenReadPostgres(t *testing.T) {
	url := pgtest.Database(t)
	if _, err := OpenRead(url); !errors.Is(err, ErrNoFile) {
		t.Fatalf("OpenRead on an empty database: %v, want ErrNoFile", err)
	}
	if _, err := OpenRead(url); !errors.Is(err, ErrNoFile) {
		t.Fatalf("second OpenRead on an empty database: %v, want ErrNoFile (nothing created)", err)
	}
	if _, err := Record(url, mkRun(0, "http://a", "m", "h", 20, true)); err != nil {
		t.Fatal(err)
	}
	s, err := OpenRead(url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Add(context.Background(), mkRun(1, "http://a", "m", "h", 20, true)); err == nil {
		t.Error("Add on a store opened to read: no error")
	}
	if _, err := s.db.Exec("DELETE FROM runs"); err == nil {
		t.Error("the server let a read-only store delete")
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=disable": "postgres://u:xxxxx@h:5432/db?sslmode=disable",
		"postgresql://h/db?password=secret":             "postgresql://h/db?password=xxxxx",
		"/var/lib/tokenpulse/history.db":                "/var/lib/tokenpulse/history.db",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
