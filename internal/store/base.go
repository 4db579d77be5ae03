package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tokenpulse/tokenpulse/baseline"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Last is the base ("--against last") that is the latest comparable run.
const Last = "last"

// CheckAgainst checks how a base is named: "last" or a history id.
func CheckAgainst(against string) error {
	if against == Last {
		return nil
	}
	if _, err := strconv.ParseInt(against, 10, 64); err != nil {
		return fmt.Errorf("--against: want \"last\" or a history id, got %q", against)
	}
	return nil
}

// NoBase says that the history holds no run to compare with, or only one
// made with other settings: not a failure of a run that judges
// thresholds anyway (bench records the comparison as skipped, saying
// why).
type NoBase struct{ Msg string }

// Error is the message: why no base was found.
func (e *NoBase) Error() string { return e.Msg }

// Base is the recorded base of a comparison.
type Base struct {
	// Runs are the base first, then, for "last", up to noiseRuns−1
	// earlier comparable runs newest first: the history of a noise band
	// (compare.Against).
	Runs []*runfile.Run
	// Name names the base ("history run 12 (2026-…)"); ID is its id.
	Name string
	ID   int64
}

// FindBase finds the base of cur named by against ("last" or a history
// id, see [CheckAgainst]) in the history at path ("" = the default),
// under package baseline's policy (anyConfig: compare even across other
// settings). "last" takes the latest comparable run that is usable; an
// id is taken even when its run was interrupted, but not with other
// settings. When none is found, or the base's settings differ from
// cur's, the error is a *NoBase that says so (naming each difference).
func FindBase(ctx context.Context, path, against string, anyConfig bool, cur *runfile.Run, noiseRuns int) (*Base, error) {
	if err := CheckAgainst(against); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	none := func(detail string) *NoBase {
		return &NoBase{fmt.Sprintf("no earlier run of %s, model %q, device %q%s", cur.Target.Key(), cur.Target.Model, cur.Device.Key(), detail)}
	}
	s, err := OpenRead(path)
	if errors.Is(err, ErrNoFile) {
		// Nothing recorded yet: no base, and no file created to say so.
		return nil, none(": " + err.Error())
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var e Entry
	var hist []*runfile.Run
	var refusal *baseline.Refusal
	if against == Last {
		var es []Entry
		es, hist, err = s.Comparable(ctx, cur, baseline.Policy{AnyConfig: anyConfig}, max(noiseRuns, 1))
		switch {
		case errors.Is(err, ErrNotFound):
			return nil, none(" in " + s.Path())
		case errors.As(err, &refusal):
			return nil, &NoBase{refusal.Error() + "; pass --against-any to compare anyway"}
		case err != nil:
			return nil, err
		}
		e = es[0]
	} else {
		id, _ := strconv.ParseInt(against, 10, 64)
		var run *runfile.Run
		if e, run, err = s.Get(ctx, id); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Path(), err)
		}
		if errors.As(baseline.Policy{AnyConfig: anyConfig, AllowUnusable: true}.Check(run, cur), &refusal) {
			refusal.Base = fmt.Sprintf("history run %d", id)
			return nil, &NoBase{refusal.Error() + "; pass --against-any to compare anyway"}
		}
		hist = []*runfile.Run{run}
	}
	return &Base{Runs: hist, Name: fmt.Sprintf("history run %d (%s)", e.ID, e.StartedAt.Format(time.RFC3339)), ID: e.ID}, nil
}
