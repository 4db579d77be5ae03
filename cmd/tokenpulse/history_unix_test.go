//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/store"
	"github.com/tokenpulse/tokenpulse/internal/unwritable"
)

// TestHistoryReadOnly runs `history` and `compare --against last` in a
// process that cannot write the history's directory (package unwritable:
// EACCES from the kernel, as a read-only filesystem gives EROFS). Both
// failed with "begin migration: unable to open database file"; reading a
// current history needs no write.
func TestHistoryReadOnly(t *testing.T) {
	dir := unwritable.Dir(t)
	hist := filepath.Join(dir, "history.db")
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	_, first := seededRun(t, dir, 1, 20, start)
	secondPath, _ := seededRun(t, dir, 2, 20, start.Add(time.Minute))
	if _, err := store.Record(hist, first); err != nil {
		t.Fatal(err)
	}
	unwritable.Seal(t, dir)
	for _, args := range [][]string{
		{"history", "--history", hist},
		{"compare", secondPath, "--against", "last", "--history", hist},
	} {
		cmd := unwritable.Command(t, os.Args[0], args...)
		cmd.Env = append(os.Environ(), cliHelper+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "2026-11-29") {
			t.Errorf("%s: %v, output:\n%s", args[0], err, out)
		}
	}
}
