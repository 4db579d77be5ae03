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
	os.Exit(m.Run())
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
func TestConcurrentFirstRecords(t *testing.T) {
	const procs, rounds = 8, 4
	for round := range rounds {
		dir := t.TempDir()
		db := filepath.Join(dir, "history.db")
		start := filepath.Join(dir, "start")
		cmds := make([]*exec.Cmd, procs)
		outs := make([]*strings.Builder, procs)
		for i := range procs {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), helperDB+"="+db, helperRun+"="+strconv.Itoa(i), helperStart+"="+start)
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
				t.Errorf("round %d: process %d: %v: %s", round, i, err, outs[i])
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
		if len(es) != procs {
			t.Errorf("round %d: %d runs recorded, want %d (%d processes failed)", round, len(es), procs, failed)
		}
	}
}
