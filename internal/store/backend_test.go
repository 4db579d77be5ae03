package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for raw access in tests

	"github.com/tokenpulse/tokenpulse/internal/pgtest"
)

// backend is one kind of history the store's tests run against.
type backend struct {
	name string
	d    *dialect
	// path returns the path or URL of a new, empty history.
	path func(t *testing.T) string
	// driver is the database/sql driver for raw access to it.
	driver string
}

var backends = []backend{
	{name: "sqlite", d: sqliteDialect, driver: "sqlite", path: func(t *testing.T) string { return filepath.Join(t.TempDir(), "h.db") }},
	{name: "postgres", d: pgDialect, driver: "pgx", path: func(t *testing.T) string { return pgtest.Database(t) }},
}

// forEachBackend runs test once per backend, as a subtest named after it.
func forEachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

// rawDB opens the history at path with no migration, as an older
// tokenpulse or a test writing by hand would.
func (b backend) rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open(b.driver, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// oldSchema writes, by hand, the schema an older tokenpulse made at
// version v: the SQL of the first v migrations (as that version shipped
// them, without their Go step) and the version mark.
func (b backend) oldSchema(t *testing.T, db *sql.DB, v int) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := b.d.lock(ctx, tx); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:v] {
		if _, err := tx.Exec(b.d.translate(m.sql)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.d.setVersion(ctx, tx, v); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
