package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// copyColumns are the columns Import copies: every column but id (the
// destination numbers its rows itself).
const copyColumns = `fingerprint, started_at, started_ns, recorded_at, target_url, model, backend,
	hostname, device_label, device, cpu_model, os, arch, tier, suite, tool_version,
	requests, errors, ttft_p50_ms, ttft_p95_ms, gap_p95_ms, gap_max_ms, tpot_mean_ms, e2e_p95_ms,
	verdicts, verdicts_failed, verdicts_not_judged, passed, run_json_gz, report_url,
	tpot_p95_ms, goodput_pct, regressions`

// ImportResult counts what Import did: runs copied, and runs skipped
// because the destination already held them (same fingerprint).
type ImportResult struct {
	Copied, Skipped int
}

// Import copies every run of the SQLite history file src into s, as they
// are stored (figures, verdicts, run file, report address), oldest first,
// in one transaction: all or nothing. A run s already holds (same start
// time, hostname, target, model and suite) is skipped, so a second import
// of one file copies nothing. src is opened read-only and migrated first
// if its schema is older.
func (s *Store) Import(ctx context.Context, src string) (ImportResult, error) {
	var res ImportResult
	if s.readOnly {
		return res, fmt.Errorf("history %s: opened for reading only", s.Name())
	}
	if IsURL(src) {
		return res, errors.New("import reads a SQLite history file, not a URL")
	}
	from, err := OpenRead(src)
	if err != nil {
		return res, err
	}
	defer from.Close()
	if from.path == s.path {
		return res, errors.New("import: the file is the history itself")
	}
	rows, err := from.db.QueryContext(ctx, "SELECT "+copyColumns+" FROM runs ORDER BY started_ns, id")
	if err != nil {
		return res, fmt.Errorf("read %s: %w", src, err)
	}
	defer rows.Close()
	n := strings.Count(copyColumns, ",") + 1
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	// A run already held is looked up first: PostgreSQL takes an id from
	// the sequence for an INSERT even when ON CONFLICT then skips it, so
	// that a second import would leave the next run numbered past a gap.
	exists := s.q("SELECT COUNT(*) FROM runs WHERE fingerprint = ?")
	insert := s.q("INSERT INTO runs (" + copyColumns + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ") ON CONFLICT (fingerprint) DO NOTHING")
	err = func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return fmt.Errorf("read %s: %w", src, err)
			}
			var held int
			if err := tx.QueryRowContext(ctx, exists, vals[0]).Scan(&held); err != nil {
				return err
			}
			if held > 0 {
				res.Skipped++
				continue
			}
			r, err := tx.ExecContext(ctx, insert, vals...)
			if err != nil {
				return err
			}
			if k, err := r.RowsAffected(); err == nil && k == 1 {
				res.Copied++
			} else {
				res.Skipped++
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read %s: %w", src, err)
		}
		return tx.Commit()
	}()
	if err != nil {
		return ImportResult{}, fmt.Errorf("import %s: %w", src, err)
	}
	return res, nil
}
