package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/pgtest"
)

// The helper mode of this test binary: record one run in a history file,
// as one `tokenpulse bench` process does at its end. The parent sets
// these variables and runs os.Args[0] again.
const (
	helperDB    = "TOKENPULSE_STORE_HELPER_DB"    // the history file
	helperRun   = "TOKENPULSE_STORE_HELPER_RUN"   // which run (minutes after t0)
	helperStart = "TOKENPULSE_STORE_HELPER_START" // a file whose appearance starts every helper at once
)

func TestMain(m *testing.M) {
	if db := os.Getenv(helperDB); db != "" {
		os.Exit(recordHelper(db))
	}
	if path := os.Getenv(openReadChild); path != "" {
		os.Exit(openReadHelper(path))
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// recordHelper waits for the start file, then records its run.
func recordHelper(db string) int {
	n, err := strconv.Atoi(os.Getenv(helperRun))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	for {
		if _, err := os.Stat(os.Getenv(helperStart)); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := Record(db, mkRun(n, "http://a", "m1", "host1", 20, true)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestConcurrentFirstRecords starts eight processes at once that each
// record a run in one new history file, as eight `bench --history FILE`
// runs started together do: every one must record its run. Before the
// schema version was read inside the migration's transaction, two
// processes could both read version 0 and the second failed with
// "migration 1: ... table runs already exists".
//
// On PostgreSQL the processes migrate one new database at once: of them
// one applies each migration, under the advisory lock, and the others
// wait, then find it applied.
func TestConcurrentFirstRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for round := range 4 {
			if n := concurrentRecords(t, b.path(t), 0, 8); n != 8 {
				t.Errorf("round %d: %d runs recorded, want 8", round, n)
			}
		}
	})
}

// TestSixteenWritersLoseNothing starts 16 processes at once that each
// record a run in one PostgreSQL history, as 16 CI jobs of a fleet
// finishing together do: all 16 runs are recorded.
func TestSixteenWritersLoseNothing(t *testing.T) {
	url := pgtest.Database(t)
	// The schema exists already, as in a fleet's steady state: the 16
	// race on writing, not on migrating (TestConcurrentFirstRecords).
	s, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for round := range 2 {
		if n := concurrentRecords(t, url, 16*round, 16); n != 16*(round+1) {
			t.Errorf("round %d: %d runs in the history, want %d", round, n, 16*(round+1))
		}
	}
}

// concurrentRecords starts procs processes that each record one run (the
// runs first, first+1, ...: minutes after t0) in the history at db, all
// released at one instant, and returns how many runs the history then
// holds. A process that fails fails t.
func concurrentRecords(t *testing.T, db string, first, procs int) int {
	t.Helper()
	{
		dir := t.TempDir()
		start := filepath.Join(dir, "start")
		base := first
		cmds := make([]*exec.Cmd, procs)
		outs := make([]*strings.Builder, procs)
		for i := range procs {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), helperDB+"="+db, helperRun+"="+strconv.Itoa(base+i), helperStart+"="+start)
			outs[i] = &strings.Builder{}
			cmd.Stdout, cmd.Stderr = outs[i], outs[i]
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds[i] = cmd
		}
		if err := os.WriteFile(start, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		failed := 0
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				failed++
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				t.Errorf("process %d of %d: %v: %s", i, procs, err, outs[i])
			}
		}
		s, err := Open(db)
		if err != nil {
			t.Fatal(err)
		}
		es, err := s.List(context.Background(), Filter{})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if failed > 0 {
			t.Logf("%d of %d processes failed", failed, procs)
		}
		return len(es)
	}
}
