package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNoFile is returned by OpenRead when the history file does not exist:
// no run has been recorded there.
var ErrNoFile = errors.New("no history file")

// OpenRead opens the history file at path ("" meaning DefaultPath()) to
// read it: it creates nothing and, when the file's schema is current,
// writes nothing, so it works on a read-only filesystem or in a directory
// the user may not write, where Open fails. `history` and `compare
// --against` read through it.
//
// No statement it runs writes (query_only). Where the file cannot be
// opened for writing it is opened with SQLite's mode=ro, and where SQLite
// cannot read a WAL file that way either (it must create the -shm file
// beside it, and the directory is read-only) and no -wal file holds
// commits not yet in the file itself, the file is opened immutable:
// nothing can be writing it there.
//
// A file whose schema is older than this package's is migrated, which
// needs a write: OpenRead then opens it as Open does, and when that fails
// for want of write access it says so ("read-only and its schema is
// older"). A missing file is ErrNoFile (wrapped, with the path). The
// Store's Add fails on a store opened here.
//
// On PostgreSQL (a postgres:// URL) every transaction is read-only
// (default_transaction_read_only), a database without the history's
// schema is ErrNoFile, and an older schema is migrated as Open does.
func OpenRead(path string) (*Store, error) {
	path, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	if IsURL(path) {
		return openReadPostgres(path)
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("history file %s: %w", path, ErrNoFile)
		}
		return nil, fmt.Errorf("history file: %w", err)
	}
	s, v, err := openReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("history file %s: %w", path, err)
	}
	switch needsWrite(v) {
	case readAsIs:
		return s, nil
	case readTooNew:
		s.Close()
		return nil, fmt.Errorf("history file %s: schema version %d is newer than this tokenpulse knows (%d)", path, v, SchemaVersion)
	}
	s.Close()
	w, err := Open(path)
	if err != nil && isWriteDenied(err) {
		return nil, fmt.Errorf("history file %s is read-only and its schema is older (v%d); run a writing command once where it is writable (tokenpulse history there migrates it) (%w)", path, v, errors.Unwrap(err))
	}
	return w, err
}

// readNeed is what reading a file at some schema version needs.
type readNeed int

const (
	readAsIs    readNeed = iota // current: read it as it is, read-only
	readMigrate                 // older: migrate it first, which writes
	readTooNew                  // newer than this package: refuse
)

// needsWrite says what reading a file at schema version v needs: only a
// file older than SchemaVersion needs a write (its migration).
func needsWrite(v int) readNeed {
	switch {
	case v == SchemaVersion:
		return readAsIs
	case v > SchemaVersion:
		return readTooNew
	}
	return readMigrate
}

// openReadOnly opens path to read, as OpenRead describes, and returns its
// schema version. It asks for write access first (mode=rw, never
// creating), though it runs no write (query_only): a connection that may
// write removes the -wal and -shm files beside the history when it
// closes, where a read-only one leaves them behind. Where that is denied
// it opens the file read-only, and then immutable.
func openReadOnly(path string) (*Store, int, error) {
	var err error
	for _, mode := range []string{"mode=rw", "mode=ro"} {
		var s *Store
		var v int
		s, v, err = openURI(path, mode)
		if err == nil || !isWriteDenied(err) {
			return s, v, err
		}
	}
	// SQLite could not set up the WAL index beside the file. Immutable
	// reads the file alone, which is exact only when no -wal file holds
	// commits the file lacks.
	if fi, werr := os.Stat(path + "-wal"); werr == nil && fi.Size() > 0 {
		return nil, 0, fmt.Errorf("%w (its -wal file holds commits that only a process able to write beside it can read)", err)
	}
	return openURI(path, "mode=ro&immutable=1")
}

// openURI opens path as a SQLite URI with params and reads its schema
// version, which also makes SQLite open the file.
func openURI(path, params string) (*Store, int, error) {
	dsn := "file:" + uriPath(path) + "?" + params + fmt.Sprintf("&_pragma=busy_timeout(%d)&_pragma=query_only(1)", busyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, 0, err
	}
	var v int
	if err := db.QueryRowContext(context.Background(), "PRAGMA user_version").Scan(&v); err != nil {
		db.Close()
		return nil, 0, fmt.Errorf("read schema version: %w", err)
	}
	return &Store{db: db, path: path, d: sqliteDialect, readOnly: true}, v, nil
}

// openReadPostgres is OpenRead on a PostgreSQL history.
func openReadPostgres(url string) (*Store, error) {
	ctx := context.Background()
	db, err := openPostgres(ctx, url, true)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", Redact(url), err)
	}
	v, err := pgDialect.version(ctx, db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("history %s: read schema version: %w", Redact(url), err)
	}
	switch {
	case v == 0:
		db.Close()
		return nil, fmt.Errorf("history %s: %w (the database has no tokenpulse schema yet)", Redact(url), ErrNoFile)
	case needsWrite(v) == readAsIs:
		return &Store{db: db, path: url, d: pgDialect, readOnly: true}, nil
	case needsWrite(v) == readTooNew:
		db.Close()
		return nil, fmt.Errorf("history %s: schema version %d is newer than this tokenpulse knows (%d)", Redact(url), v, SchemaVersion)
	}
	db.Close()
	return Open(url)
}

// uriPath escapes path for a SQLite "file:" URI: '%' and '#' are special
// there ('?' is refused by Resolve).
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "#", "%23").Replace(path)
}

// isWriteDenied reports whether err says the file or its directory cannot
// be written or a file cannot be created beside it: SQLite's CANTOPEN and
// READONLY, or the system's EROFS, EACCES and EPERM.
func isWriteDenied(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
			return true
		}
	}
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}
