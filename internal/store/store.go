// Package store keeps the history of tokenpulse runs in a SQLite file
// (modernc.org/sqlite, pure Go) or, for a team's shared history, in a
// PostgreSQL database (a postgres:// URL, through pgx), so that
// `tokenpulse history` can list them and `tokenpulse compare --against
// last` can find the run to compare with. Both hold the same schema, made
// by one list of migrations; what differs between the two databases is in
// one place, the dialect (dialect.go).
//
// Each run is one row: its identity (start time, target URL, model,
// backend, device hostname, label and CPU, suite), its headline figures
// (TTFT p50/p95, gap p95/max, TPOT mean, E2E p95 of the overall scope, in
// ms, NULL where the run has no value), its verdict, and the whole run file as gzip-compressed JSON, so any
// past run can be re-judged or re-rendered. A run is written in one
// transaction; the file is in WAL mode with synchronous=FULL, so a crash
// never loses a run whose Add returned.
//
// The default file is DefaultPath(): $XDG_DATA_HOME/tokenpulse/history.db
// when XDG_DATA_HOME is set, else the platform's data directory
// (~/.local/share on Linux and other Unix systems, ~/Library/Application
// Support on macOS, %LocalAppData% on Windows), falling back to
// os.UserConfigDir.
//
// Example:
//
//	id, err := store.Record("", run) // "" is DefaultPath()
//
//	s, err := store.Open(path)
//	defer s.Close()
//	prev, base, err := s.Previous(ctx, run, baseline.Policy{}) // the run to compare with
//
// A *Store is safe for concurrent use, and several processes may use one
// file at a time, a new one too: writers wait up to 30 s for one another,
// and of several processes opening a new file at once one creates the
// schema while the others wait for it. On PostgreSQL any number of
// processes may write at once, and migrations are serialised by an
// advisory lock.
package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tokenpulse/tokenpulse/baseline"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// ErrNotFound is returned when no run matches.
var ErrNotFound = errors.New("no such run in the history")

// ErrUnreadable wraps the error of a stored run whose file cannot be read
// back: damaged, or written by an older tokenpulse in a form today's
// validation refuses.
var ErrUnreadable = errors.New("its stored run file cannot be read")

// Store is an open history file.
type Store struct {
	db       *sql.DB
	path     string
	d        *dialect
	readOnly bool // opened by OpenRead at the current schema
}

// EnvHistory names the history to use when no --history is given: a
// SQLite file or a postgres:// URL.
const EnvHistory = "TOKENPULSE_HISTORY"

// DefaultPath returns the default history: $TOKENPULSE_HISTORY when set
// (a file or a postgres:// URL), else the file the package doc
// describes. It does not create anything.
func DefaultPath() (string, error) {
	if h := os.Getenv(EnvHistory); h != "" {
		return h, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "tokenpulse", "history.db"), nil
	}
	var base string
	switch runtime.GOOS {
	case "windows":
		base = os.Getenv("LocalAppData")
	case "darwin", "ios":
		if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, "Library", "Application Support")
		}
	case "android":
		// No home directory convention; the config dir is the best guess.
	default:
		if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".local", "share")
		}
	}
	if base == "" {
		d, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("no data directory for the history (use --history FILE): %w", err)
		}
		base = d
	}
	return filepath.Join(base, "tokenpulse", "history.db"), nil
}

// Open opens (creating it and its directory if needed) the history file at
// path, "" meaning DefaultPath(), and brings its schema up to date. To
// read only, OpenRead needs no write access.
func Open(path string) (*Store, error) {
	path, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	if IsURL(path) {
		return openPostgresStore(path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("history file: %w", err)
	}
	dsn := fmt.Sprintf("%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate", path, busyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("history file %s: %w", path, err)
	}
	s := &Store{db: db, path: path, d: sqliteDialect}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("history file %s: %w", path, err)
	}
	return s, nil
}

// Resolve returns the history path names: DefaultPath() for "", a
// postgres:// URL as it is, and refuses a file path SQLite would misread
// (one with a '?').
func Resolve(path string) (string, error) {
	if path == "" {
		p, err := DefaultPath()
		if err != nil {
			return "", err
		}
		path = p
	}
	if !IsURL(path) && strings.ContainsRune(path, '?') {
		return "", fmt.Errorf("history file %q: a path with '?' is not supported", path)
	}
	return path, nil
}

// Path returns the file or URL the store was opened on.
func (s *Store) Path() string { return s.path }

// Name returns Path fit to print (Redact): a URL without its password.
func (s *Store) Name() string { return Redact(s.path) }

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.d.name }

// openPostgresStore opens the PostgreSQL history at url and brings its
// schema up to date.
func openPostgresStore(url string) (*Store, error) {
	ctx := context.Background()
	db, err := openPostgres(ctx, url, false)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", Redact(url), err)
	}
	s := &Store{db: db, path: url, d: pgDialect}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("history %s: %w", Redact(url), err)
	}
	return s, nil
}

// q translates a query of the package (SQLite's SQL, '?' placeholders)
// into the store's dialect.
func (s *Store) q(query string) string { return s.d.translate(query) }

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// A migration is SQL, then Go for what SQL cannot do (decoding the stored
// run files). Both are written once, in SQLite's SQL; the dialect
// translates them.
type migration struct {
	sql string
	fn  func(ctx context.Context, tx *sql.Tx, d *dialect) error
}

// migrations are applied in order; the schema version (SQLite's PRAGMA
// user_version, PostgreSQL's tokenpulse_schema table) counts those
// applied. Never edit one that has shipped: add another.
var migrations = []migration{
	{sql: `CREATE TABLE runs (
		id              INTEGER PRIMARY KEY,
		fingerprint     TEXT    NOT NULL UNIQUE,
		started_at      TEXT    NOT NULL, -- RFC 3339, UTC
		started_ns      INTEGER NOT NULL, -- Unix ns, for ordering
		recorded_at     TEXT    NOT NULL,
		target_url      TEXT    NOT NULL,
		model           TEXT    NOT NULL,
		backend         TEXT    NOT NULL,
		hostname        TEXT    NOT NULL,
		device_label    TEXT    NOT NULL,
		device          TEXT    NOT NULL, -- the label, or the hostname
		cpu_model       TEXT    NOT NULL,
		os              TEXT    NOT NULL,
		arch            TEXT    NOT NULL,
		tier            TEXT    NOT NULL,
		suite           TEXT    NOT NULL,
		tool_version    TEXT    NOT NULL,
		requests        INTEGER NOT NULL,
		errors          INTEGER NOT NULL,
		ttft_p50_ms     REAL    NOT NULL,
		ttft_p95_ms     REAL    NOT NULL,
		gap_p95_ms      REAL    NOT NULL,
		gap_max_ms      REAL    NOT NULL,
		tpot_mean_ms    REAL    NOT NULL,
		e2e_p95_ms      REAL    NOT NULL,
		verdicts        INTEGER NOT NULL,
		verdicts_failed INTEGER NOT NULL,
		passed          INTEGER NOT NULL,
		run_json_gz     BLOB    NOT NULL
	);
	CREATE INDEX runs_by_key ON runs (target_url, model, device, started_ns);
	CREATE INDEX runs_by_time ON runs (started_ns);`},
	// 2: a figure the run has no value of is NULL, not 0; verdicts not
	// judged (no data) are counted apart and are not failures; target
	// URLs are normalised (runfile.Target.Key), so "http://h:8080/v1" and
	// "http://h:8080" are one target.
	{sql: `CREATE TABLE runs2 (
		id                  INTEGER PRIMARY KEY,
		fingerprint         TEXT    NOT NULL UNIQUE,
		started_at          TEXT    NOT NULL,
		started_ns          INTEGER NOT NULL,
		recorded_at         TEXT    NOT NULL,
		target_url          TEXT    NOT NULL,
		model               TEXT    NOT NULL,
		backend             TEXT    NOT NULL,
		hostname            TEXT    NOT NULL,
		device_label        TEXT    NOT NULL,
		device              TEXT    NOT NULL,
		cpu_model           TEXT    NOT NULL,
		os                  TEXT    NOT NULL,
		arch                TEXT    NOT NULL,
		tier                TEXT    NOT NULL,
		suite               TEXT    NOT NULL,
		tool_version        TEXT    NOT NULL,
		requests            INTEGER NOT NULL,
		errors              INTEGER NOT NULL,
		ttft_p50_ms         REAL, -- NULL: the run has no value
		ttft_p95_ms         REAL,
		gap_p95_ms          REAL,
		gap_max_ms          REAL,
		tpot_mean_ms        REAL,
		e2e_p95_ms          REAL,
		verdicts            INTEGER NOT NULL,
		verdicts_failed     INTEGER NOT NULL,
		verdicts_not_judged INTEGER NOT NULL DEFAULT 0,
		passed              INTEGER NOT NULL,
		run_json_gz         BLOB    NOT NULL
	);
	INSERT INTO runs2 (id, fingerprint, started_at, started_ns, recorded_at, target_url, model, backend,
		hostname, device_label, device, cpu_model, os, arch, tier, suite, tool_version, requests, errors,
		ttft_p50_ms, ttft_p95_ms, gap_p95_ms, gap_max_ms, tpot_mean_ms, e2e_p95_ms,
		verdicts, verdicts_failed, passed, run_json_gz)
	SELECT id, fingerprint, started_at, started_ns, recorded_at, target_url, model, backend,
		hostname, device_label, device, cpu_model, os, arch, tier, suite, tool_version, requests, errors,
		ttft_p50_ms, ttft_p95_ms, gap_p95_ms, gap_max_ms, tpot_mean_ms, e2e_p95_ms,
		verdicts, verdicts_failed, passed, run_json_gz FROM runs;
	DROP TABLE runs;
	ALTER TABLE runs2 RENAME TO runs;
	CREATE INDEX runs_by_key ON runs (target_url, model, device, started_ns);
	CREATE INDEX runs_by_time ON runs (started_ns);`, fn: rederive},
	// 3: what the trend charts and a Grafana dashboard read besides: the
	// address of the run's published report ("" when not published), TPOT
	// p95 and goodput (% of requests, NULL when the run has none), and the
	// regressions found against the run's base.
	{sql: `ALTER TABLE runs ADD COLUMN report_url TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN tpot_p95_ms REAL;
	ALTER TABLE runs ADD COLUMN goodput_pct REAL;
	ALTER TABLE runs ADD COLUMN regressions INTEGER NOT NULL DEFAULT 0;`, fn: deriveTrend},
}

// rederive recomputes, from each row's stored run file, what migration 2
// changed: the normalised target key, NULL for figures without a value,
// and the verdict counts with verdicts not judged apart. A row whose run
// file cannot be read keeps its key and counts; its figures become NULL
// when no request succeeded.
func rederive(ctx context.Context, tx *sql.Tx, d *dialect) error {
	rows, err := tx.QueryContext(ctx, d.translate("SELECT id, requests, errors, run_json_gz FROM runs"))
	if err != nil {
		return err
	}
	type row struct {
		id               int64
		requests, errors int
		gz               []byte
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.requests, &r.errors, &r.gz); err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range all {
		run, err := decodeRun(r.gz)
		if err != nil {
			if r.errors >= r.requests {
				if _, err := tx.ExecContext(ctx, d.translate(`UPDATE runs SET ttft_p50_ms = NULL, ttft_p95_ms = NULL, gap_p95_ms = NULL,
					gap_max_ms = NULL, tpot_mean_ms = NULL, e2e_p95_ms = NULL WHERE id = ?`), r.id); err != nil {
					return err
				}
			}
			continue
		}
		f := headline(run)
		_, err = tx.ExecContext(ctx, d.translate(`UPDATE runs SET target_url = ?, ttft_p50_ms = ?, ttft_p95_ms = ?, gap_p95_ms = ?,
			gap_max_ms = ?, tpot_mean_ms = ?, e2e_p95_ms = ?, verdicts = ?, verdicts_failed = ?, verdicts_not_judged = ?, passed = ?
			WHERE id = ?`), run.Target.Key(), f.ttftP50, f.ttftP95, f.gapP95, f.gapMax, f.tpotMean, f.e2eP95,
			f.verdicts, f.failed, f.notJudged, boolInt(f.failed == 0), r.id)
		if err != nil {
			return err
		}
	}
	return nil
}

// deriveTrend fills, from each row's stored run file, the columns
// migration 3 added; a row whose run file cannot be read keeps NULL and 0.
func deriveTrend(ctx context.Context, tx *sql.Tx, d *dialect) error {
	rows, err := tx.QueryContext(ctx, d.translate("SELECT id, run_json_gz FROM runs"))
	if err != nil {
		return err
	}
	type row struct {
		id int64
		gz []byte
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.gz); err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range all {
		run, err := decodeRun(r.gz)
		if err != nil {
			continue
		}
		f := headline(run)
		if _, err := tx.ExecContext(ctx, d.translate("UPDATE runs SET tpot_p95_ms = ?, goodput_pct = ?, regressions = ? WHERE id = ?"),
			f.tpotP95, f.goodput, f.regressions, r.id); err != nil {
			return err
		}
	}
	return nil
}

// figures are a run's headline values as stored: nil where the run has
// no value.
type figures struct {
	ttftP50, ttftP95, gapP95, gapMax, tpotMean, e2eP95 *float64
	tpotP95, goodput                                   *float64
	verdicts, failed, notJudged, regressions           int
}

func headline(run *runfile.Run) figures {
	o := run.Summary.Overall
	val := func(fig measure.Figure) *float64 {
		if v, ok := fig.Of(&o); ok {
			return &v
		}
		return nil
	}
	f := figures{
		ttftP50: val(measure.TTFTP50), ttftP95: val(measure.TTFTP95),
		gapP95: val(measure.GapP95), gapMax: val(measure.LongestStall),
		tpotMean: val(measure.TPOTMean), e2eP95: val(measure.E2EP95),
		tpotP95:  val(measure.TPOTP95),
		verdicts: len(run.Verdicts),
	}
	if g := run.Summary.Goodput; g != nil && g.Requests > 0 {
		pct := 100 * g.Share
		f.goodput = &pct
	}
	if run.Comparison != nil {
		f.regressions = run.Comparison.Regressions
	}
	for _, v := range run.Verdicts {
		switch {
		case !v.Judged():
			f.notJudged++
		case v.Failed():
			f.failed++
		}
	}
	return f
}

// boolInt stores a truth value as both dialects' integer column holds it.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SchemaVersion is the schema version this package writes.
var SchemaVersion = len(migrations)

// busyTimeout is how long a process waits for another one's write to the
// file before it gives up: SQLite's busy_timeout, and the budget of
// retryBusy.
const busyTimeout = 30 * time.Second

// migrate brings the schema up to date, one migration per transaction.
// Each transaction begins IMMEDIATE (the DSN's _txlock), so it holds the
// file's write lock from its first statement, and reads the schema
// version inside it: of several processes opening a new file at once,
// one applies a migration while the others wait (busy_timeout) and then
// find it applied. Reading the version before the transaction let two
// processes both read 0, and the second failed with "table runs already
// exists".
func (s *Store) migrate(ctx context.Context) error {
	for {
		var done bool
		err := retryBusy(ctx, func() error {
			var err error
			done, err = s.migrateOne(ctx)
			return err
		})
		if err != nil || done {
			return err
		}
	}
}

// retryBusy runs fn again while it fails with SQLITE_BUSY, for up to
// busyTimeout. SQLite's busy handler covers most waits, but not all: a
// connection opened while the new file was still in rollback-journal
// mode, which another process then switched to WAL, gets SQLITE_BUSY at
// once from BEGIN, without its busy handler being asked (seen with eight
// processes opening one new file). fn must be a whole transaction, safe
// to run again.
func retryBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(busyTimeout)
	wait := 5 * time.Millisecond
	for {
		err := fn()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// migrateOne applies the next migration the file lacks, in one
// transaction; done is true when there was none. On PostgreSQL the
// transaction first takes an advisory lock (dialect.lock), so that of
// several processes migrating at once one applies each migration while
// the others wait and then find it applied.
func (s *Store) migrateOne(ctx context.Context) (done bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback()
	if err := s.d.lock(ctx, tx); err != nil {
		return false, fmt.Errorf("lock for migration: %w", err)
	}
	v, err := s.d.version(ctx, tx)
	if err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	if v > len(migrations) {
		return false, fmt.Errorf("schema version %d is newer than this tokenpulse knows (%d)", v, len(migrations))
	}
	if v == len(migrations) {
		return true, nil
	}
	m := migrations[v]
	if _, err := tx.ExecContext(ctx, s.q(m.sql)); err != nil {
		return false, fmt.Errorf("migration %d: %w", v+1, err)
	}
	if m.fn != nil {
		if err := m.fn(ctx, tx, s.d); err != nil {
			return false, fmt.Errorf("migration %d: %w", v+1, err)
		}
	}
	if s.d.afterMigration != "" {
		if _, err := tx.ExecContext(ctx, s.d.afterMigration); err != nil {
			return false, fmt.Errorf("migration %d: %w", v+1, err)
		}
	}
	if err := s.d.setVersion(ctx, tx, v+1); err != nil {
		return false, fmt.Errorf("migration %d: %w", v+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migration %d: %w", v+1, err)
	}
	return false, nil
}

// Entry is one run's row, without its run file.
type Entry struct {
	ID          int64
	StartedAt   time.Time
	RecordedAt  time.Time
	TargetURL   string // the target as the history keys it: see TargetKey
	Model       string
	Backend     string
	Hostname    string
	DeviceLabel string
	// Device is DeviceLabel when set, otherwise Hostname: the device key
	// runs are grouped by.
	Device      string
	CPUModel    string
	OS          string
	Arch        string
	Tier        string
	Suite       string
	ToolVersion string
	Requests    int
	Errors      int
	// Headline figures of the overall (warm) scope, in ms; nil when the
	// run has no value of one (no successful request, no gap), which is
	// not 0.
	TTFTP50MS  *float64
	TTFTP95MS  *float64
	GapP95MS   *float64
	GapMaxMS   *float64
	TPOTMeanMS *float64
	E2EP95MS   *float64
	// Verdicts counts the run's verdicts, VerdictsFailed those judged and
	// crossed, VerdictsNotJudged those whose scope had no data (neither
	// passed nor failed); Passed is true when none was crossed.
	Verdicts          int
	VerdictsFailed    int
	VerdictsNotJudged int
	Passed            bool
	// ReportURL is the address of the run's published report ("" when
	// it was not published): see SetReportURL.
	ReportURL string
	// TPOTP95MS is the p95 of the per-token intervals (tpot.p95), and
	// GoodputPct the share of requests that met every objective, in %;
	// nil when the run has none. Regressions counts the figures that
	// regressed against the run's base (run.Comparison).
	TPOTP95MS   *float64
	GoodputPct  *float64
	Regressions int
}

// fingerprint identifies a run: the same run recorded twice has the same
// fingerprint.
func fingerprint(r *runfile.Run) string {
	h := sha256.New()
	for _, s := range []string{r.StartedAt.UTC().Format(time.RFC3339Nano), r.Device.Hostname, r.Target.URL, r.Target.Model, r.Config.Suite} {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func unixNS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// Record opens the history at path ("" meaning DefaultPath()), adds run and
// closes it: the one call the bench command makes after a run.
func Record(path string, run *runfile.Run) (int64, error) {
	s, err := Open(path)
	if err != nil {
		return 0, err
	}
	id, err := s.Add(context.Background(), run)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return id, err
}

// Add records run in one transaction and returns its id. Adding a run that
// is already recorded (same start time, hostname, target, model and suite)
// returns the existing id and writes nothing. Headline figures come from
// run.Summary as it is.
func (s *Store) Add(ctx context.Context, run *runfile.Run) (int64, error) {
	if s.readOnly {
		return 0, fmt.Errorf("history %s: opened for reading only", s.Name())
	}
	js, err := json.Marshal(run)
	if err != nil {
		return 0, fmt.Errorf("encode run: %w", err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(js)
	if err := zw.Close(); err != nil {
		return 0, fmt.Errorf("compress run: %w", err)
	}
	f := headline(run)
	o := run.Summary.Overall
	fp := fingerprint(run)
	var id int64
	err = retryBusy(ctx, func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		// ON CONFLICT: two writers of one run at once (PostgreSQL lets
		// them) record it once; the second then reads its id.
		err = tx.QueryRowContext(ctx, s.q(`INSERT INTO runs (
			fingerprint, started_at, started_ns, recorded_at, target_url, model, backend,
			hostname, device_label, device, cpu_model, os, arch, tier, suite, tool_version,
			requests, errors, ttft_p50_ms, ttft_p95_ms, gap_p95_ms, gap_max_ms, tpot_mean_ms, e2e_p95_ms,
			verdicts, verdicts_failed, verdicts_not_judged, passed, run_json_gz,
			tpot_p95_ms, goodput_pct, regressions
		) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (fingerprint) DO NOTHING RETURNING id`),
			fp, run.StartedAt.UTC().Format(time.RFC3339Nano), unixNS(run.StartedAt), time.Now().UTC().Format(time.RFC3339Nano),
			run.Target.Key(), run.Target.Model, run.Target.Backend,
			run.Device.Hostname, run.Device.Label, run.Device.Key(), run.Device.CPUModel, run.Device.OS, run.Device.Arch, run.Device.Tier,
			run.Config.Suite, run.Tool.Version,
			o.Requests, o.Errors, f.ttftP50, f.ttftP95, f.gapP95, f.gapMax, f.tpotMean, f.e2eP95,
			f.verdicts, f.failed, f.notJudged, boolInt(f.failed == 0), gz.Bytes(),
			f.tpotP95, f.goodput, f.regressions).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			err = tx.QueryRowContext(ctx, s.q("SELECT id FROM runs WHERE fingerprint = ?"), fp).Scan(&id)
		}
		if err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return 0, fmt.Errorf("record run: %w", err)
	}
	return id, nil
}

// Filter selects runs for List. Empty fields match everything.
type Filter struct {
	// Target is the target URL or key; URLs are compared normalised
	// (runfile.NormalizeURL), so "http://h:8080/v1" finds "http://h:8080".
	Target string
	Model  string
	// Device matches the device key, the hostname or the label.
	Device string
	// Before keeps runs started strictly before it, when not zero.
	Before time.Time
	// Limit caps the result (0: no cap).
	Limit int
}

const entryColumns = `id, started_at, recorded_at, target_url, model, backend, hostname, device_label, device,
	cpu_model, os, arch, tier, suite, tool_version, requests, errors,
	ttft_p50_ms, ttft_p95_ms, gap_p95_ms, gap_max_ms, tpot_mean_ms, e2e_p95_ms,
	verdicts, verdicts_failed, verdicts_not_judged, passed, report_url, tpot_p95_ms, goodput_pct, regressions`

func scanEntry(sc interface{ Scan(...any) error }) (Entry, error) {
	var e Entry
	var started, recorded string
	err := sc.Scan(&e.ID, &started, &recorded, &e.TargetURL, &e.Model, &e.Backend, &e.Hostname, &e.DeviceLabel, &e.Device,
		&e.CPUModel, &e.OS, &e.Arch, &e.Tier, &e.Suite, &e.ToolVersion, &e.Requests, &e.Errors,
		&e.TTFTP50MS, &e.TTFTP95MS, &e.GapP95MS, &e.GapMaxMS, &e.TPOTMeanMS, &e.E2EP95MS,
		&e.Verdicts, &e.VerdictsFailed, &e.VerdictsNotJudged, &e.Passed, &e.ReportURL, &e.TPOTP95MS, &e.GoodputPct, &e.Regressions)
	if err != nil {
		return e, err
	}
	e.StartedAt, _ = time.Parse(time.RFC3339Nano, started)
	e.RecordedAt, _ = time.Parse(time.RFC3339Nano, recorded)
	return e, nil
}

// List returns the runs f selects, newest first.
func (s *Store) List(ctx context.Context, f Filter) ([]Entry, error) {
	q := "SELECT " + entryColumns + " FROM runs WHERE 1=1"
	var args []any
	if f.Target != "" {
		q += " AND target_url = ?"
		args = append(args, runfile.NormalizeURL(f.Target))
	}
	if f.Model != "" {
		q += " AND model = ?"
		args = append(args, f.Model)
	}
	if f.Device != "" {
		q += " AND (device = ? OR hostname = ? OR device_label = ?)"
		args = append(args, f.Device, f.Device, f.Device)
	}
	if !f.Before.IsZero() {
		q += " AND started_ns < ?"
		args = append(args, f.Before.UnixNano())
	}
	q += " ORDER BY started_ns DESC, id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// Get returns the row and the run file of run id.
func (s *Store) Get(ctx context.Context, id int64) (Entry, *runfile.Run, error) {
	row := s.db.QueryRowContext(ctx, s.q("SELECT "+entryColumns+", run_json_gz FROM runs WHERE id = ?"), id)
	var gz []byte
	e, err := scanEntry(scanner(func(dest ...any) error { return row.Scan(append(dest, &gz)...) }))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, nil, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Entry{}, nil, fmt.Errorf("run %d: %w", id, err)
	}
	run, err := decodeRun(gz)
	if err != nil {
		return Entry{}, nil, fmt.Errorf("run %d: %w: %w", id, ErrUnreadable, err)
	}
	return e, run, nil
}

// decodeRun reads a stored run file.
func decodeRun(gz []byte) (*runfile.Run, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	js, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	return runfile.Decode(js)
}

type scanner func(dest ...any) error

func (f scanner) Scan(dest ...any) error { return f(dest...) }

// Latest returns the newest run of target, model and device (device as in
// Filter.Device), or ErrNotFound.
func (s *Store) Latest(ctx context.Context, target, model, device string) (Entry, *runfile.Run, error) {
	return s.first(ctx, Filter{Target: target, Model: model, Device: device, Limit: 1})
}

// Previous returns the newest run with the same target, model and device
// as run that started before it and that policy p accepts as its base
// (baseline.Policy.Check): the base of `compare --against last`. Runs p
// finds unusable (interrupted, no successful request) are passed over,
// and so are runs whose settings differ (suite, API, max tokens, ...)
// unless p.AnyConfig. When no run qualifies but a usable one of other
// settings exists, the error is a *baseline.Refusal naming how the newest
// of them differs ("the last run of this target used suite zh-medical,
// this one en-assistant"); when none exists at all, ErrNotFound. run
// itself need not be recorded.
func (s *Store) Previous(ctx context.Context, run *runfile.Run, p baseline.Policy) (Entry, *runfile.Run, error) {
	es, runs, err := s.Comparable(ctx, run, p, 1)
	if err != nil {
		return Entry{}, nil, err
	}
	return es[0], runs[0], nil
}

// Comparable returns up to k runs that Previous would accept as run's
// base, newest first (a stored run that cannot be read, ErrUnreadable, is
// passed over): the history a noise band is estimated from (package
// compare, Against). Its errors are Previous's: a *baseline.Refusal or
// ErrNotFound when not even one run qualifies. At most the 200 newest runs
// of the target, model and device are looked at.
func (s *Store) Comparable(ctx context.Context, run *runfile.Run, p baseline.Policy, k int) ([]Entry, []*runfile.Run, error) {
	if run.StartedAt.IsZero() {
		return nil, nil, errors.New("run has no start time")
	}
	es, err := s.List(ctx, Filter{Target: run.Target.Key(), Model: run.Target.Model, Device: run.Device.Key(), Before: run.StartedAt, Limit: 200})
	if err != nil {
		return nil, nil, err
	}
	var refused *baseline.Refusal
	var unreadable error
	var outE []Entry
	var outR []*runfile.Run
	for _, e := range es {
		if len(outR) >= k {
			break
		}
		if e.Requests == 0 || e.Errors >= e.Requests {
			continue
		}
		e, base, err := s.Get(ctx, e.ID)
		if errors.Is(err, ErrUnreadable) {
			// A run file this tokenpulse refuses is no base: passed
			// over as an interrupted run is, named if nothing qualifies.
			if unreadable == nil {
				unreadable = err
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		err = p.Check(base, run)
		var r *baseline.Refusal
		switch {
		case err == nil:
			outE, outR = append(outE, e), append(outR, base)
		case errors.As(err, &r) && refused == nil:
			r.Base = "the last run of this target"
			refused = r
		}
	}
	switch {
	case len(outR) > 0:
		return outE, outR, nil
	case refused != nil:
		return nil, nil, refused
	case unreadable != nil:
		return nil, nil, fmt.Errorf("no readable earlier run of this target (%w)", unreadable)
	}
	return nil, nil, ErrNotFound
}

func (s *Store) first(ctx context.Context, f Filter) (Entry, *runfile.Run, error) {
	es, err := s.List(ctx, f)
	if err != nil {
		return Entry{}, nil, err
	}
	if len(es) == 0 {
		return Entry{}, nil, ErrNotFound
	}
	return s.Get(ctx, es[0].ID)
}

// SetReportURL records url as the address of the published report of run
// (the recorded run of the same start time, hostname, target, model and
// suite); ErrNotFound when run is not recorded.
func (s *Store) SetReportURL(ctx context.Context, run *runfile.Run, url string) error {
	if s.readOnly {
		return fmt.Errorf("history %s: opened for reading only", s.Name())
	}
	res, err := s.db.ExecContext(ctx, s.q("UPDATE runs SET report_url = ? WHERE fingerprint = ?"), url, fingerprint(run))
	if err != nil {
		return fmt.Errorf("record the report's address: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("record the report's address: %w", ErrNotFound)
	}
	return nil
}

// RecordReportURL opens the history at path ("" meaning DefaultPath()),
// records url as run's published report (SetReportURL) and closes it: the
// call bench makes after publishing a run it recorded.
func RecordReportURL(path string, run *runfile.Run, url string) error {
	s, err := Open(path)
	if err != nil {
		return err
	}
	err = s.SetReportURL(context.Background(), run, url)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}
