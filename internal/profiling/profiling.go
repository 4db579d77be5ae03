// Package profiling takes the CPU profile of a benchmark's target while
// the run lasts, as pprof's profile.proto in the run directory:
//
//   - the embedded server runs in this process, beside the measuring
//     client: [Local] profiles the process, and the server's goroutines
//     (HTTP handlers and the engine's workers, started under [Server])
//     carry the label [LabelKey]=[LabelValue], so that a flame graph can
//     keep the server's samples alone;
//   - a remote tokenpulse started with `serve --pprof` is profiled through
//     its /debug/pprof/profile ([Remote]), in windows merged into one
//     profile.
//
// Either way the result is a file that `go tool pprof` reads and a
// runfile.Profile naming it.
package profiling

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// File is the profile's name in the run directory.
const File = "cpu.pprof"

// The label the embedded server's goroutines carry.
const (
	LabelKey   = "tokenpulse"
	LabelValue = "server"
)

// Sources of a profile (runfile.Profile.Source).
const (
	SourceEmbedded = "embedded"
	SourceRemote   = "remote"
)

// Server runs f with the server's label set: every goroutine f starts,
// and every goroutine those start (the HTTP server's connections, the
// engine's workers), carries it. Labels cost nothing while no profile
// runs.
func Server(ctx context.Context, f func(context.Context)) {
	pprof.Do(ctx, pprof.Labels(LabelKey, LabelValue), f)
}

// Session is a profile being taken; Stop ends it.
type Session interface {
	// Stop ends the profile, writes it and says what it holds.
	Stop() (*runfile.Profile, error)
}

// local is a profile of this process.
type local struct {
	f     *os.File
	start time.Time
}

// ErrBusy is returned by Local when this process is already being
// profiled (go test -cpuprofile, another run): Go takes one CPU profile
// at a time.
var ErrBusy = errors.New("a CPU profile of this process is already running")

// Local starts profiling this process into dir/cpu.pprof; the samples of
// the server's goroutines carry the server's label.
func Local(dir string) (Session, error) {
	path := filepath.Join(dir, File)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("%w (%v)", ErrBusy, err)
	}
	return &local{f: f, start: time.Now()}, nil
}

func (l *local) Stop() (*runfile.Profile, error) {
	pprof.StopCPUProfile()
	d := time.Since(l.start)
	if err := l.f.Close(); err != nil {
		return nil, err
	}
	return &runfile.Profile{File: File, Source: SourceEmbedded, Label: LabelKey + "=" + LabelValue, DurationMS: stats.Millis(int64(d))}, nil
}
