package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// openReadChild, set in the environment to a history file, makes the test
// binary open that file with OpenRead and print how many runs it lists
// (or the error) instead of running the tests: the process that the
// read-only tests start without write access.
const openReadChild = "TOKENPULSE_STORE_OPENREAD"

// openReadHelper is the test binary run with openReadChild set.
func openReadHelper(path string) int {
	s, err := OpenRead(path)
	if err == nil {
		var es []Entry
		es, err = s.List(context.Background(), Filter{})
		s.Close()
		if err == nil {
			fmt.Printf("%d runs\n", len(es))
			return 0
		}
	}
	fmt.Printf("error: %v\n", err)
	return 1
}

// TestNeedsWrite: only an older schema needs a write; a current one is
// read as it is, a newer one refused.
func TestNeedsWrite(t *testing.T) {
	for v, want := range map[int]readNeed{0: readMigrate, SchemaVersion - 1: readMigrate, SchemaVersion: readAsIs, SchemaVersion + 1: readTooNew} {
		if got := needsWrite(v); got != want {
			t.Errorf("needsWrite(%d) = %d, want %d", v, got, want)
		}
	}
}

// TestOpenReadMissingAndAdd: OpenRead creates no file, and a store it
// opened refuses to record.
func TestOpenReadMissingAndAdd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none", "history.db")
	if _, err := OpenRead(path); !errors.Is(err, ErrNoFile) {
		t.Errorf("missing file: %v, want ErrNoFile", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("OpenRead created %s", filepath.Dir(path))
	}
	if _, err := Record(path, mkRun(0, "http://a", "m", "h", 20, true)); err != nil {
		t.Fatal(err)
	}
	s, err := OpenRead(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Add(context.Background(), mkRun(1, "http://a", "m", "h", 20, true)); err == nil {
		t.Error("Add on a store opened for reading succeeded")
	}
}
