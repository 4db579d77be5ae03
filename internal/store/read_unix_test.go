//go:build unix

package store

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/unwritable"
)

// readAsUnwritable runs OpenRead and List on path in a process that cannot
// write path's directory (package unwritable) and returns its output.
func readAsUnwritable(t *testing.T, path string) (string, error) {
	t.Helper()
	unwritable.Seal(t, filepath.Dir(path))
	cmd := unwritable.Command(t, os.Args[0])
	cmd.Env = append(os.Environ(), openReadChild+"="+path)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestOpenReadInUnwritableDir lists a current history from a directory
// its reader cannot write (the kernel answers EACCES, as a read-only
// filesystem answers EROFS): the file is WAL, its -shm cannot be created,
// and Open failed there with "begin migration: unable to open database
// file (14)". Reading a current file needs no write.
func TestOpenReadInUnwritableDir(t *testing.T) {
	dir := unwritable.Dir(t)
	path := filepath.Join(dir, "history.db")
	for i := range 3 {
		if _, err := Record(path, mkRun(i, "http://a", "m", "h", 20, true)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + "-shm"); err == nil {
		t.Fatalf("%s-shm is left after Record: the test wants it absent", path)
	}
	out, err := readAsUnwritable(t, path)
	if err != nil || out != "3 runs" {
		t.Fatalf("reading from an unwritable directory: %v, output %q; want \"3 runs\"", err, out)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("the directory holds %d files after reading; want the history file alone", len(es))
	}
}

// TestOpenReadOlderSchemaUnwritable: a schema-1 file needs a migration,
// which cannot be written there; the error says so plainly, in both of
// the file's journal modes.
func TestOpenReadOlderSchemaUnwritable(t *testing.T) {
	for _, mode := range []string{"delete", "wal"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(unwritable.Dir(t), "old.db")
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"PRAGMA journal_mode = " + mode, migrations[0].sql, "PRAGMA user_version = 1"} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			out, err := readAsUnwritable(t, path)
			want := "history file " + path + " is read-only and its schema is older (v1); run a writing command once where it is writable"
			if err == nil || !strings.Contains(out, want) {
				t.Fatalf("got %v, output %q; want an error containing %q", err, out, want)
			}
		})
	}
}
