package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/internal/profiling"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// profileFlags decide whether bench takes the CPU profile of its target.
type profileFlags struct {
	on bool
}

func (p *profileFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&p.on, "profile", false, "record the target's CPU profile for the run as cpu.pprof (the HTML report draws its flame graph): on by default for the embedded server; with --url, from the target's /debug/pprof (tokenpulse serve --pprof)")
}

// start begins the run's CPU profile into dir: the embedded server's
// unless --profile=false, a --url target's only with --profile. It
// returns nil, saying why on w, when no profile is taken; a profile that
// cannot be taken never stops the run.
func (p *profileFlags) start(ctx context.Context, w io.Writer, fs *pflag.FlagSet, dir, url string, c *stream.Client) profiling.Session {
	if url == "" {
		if fs.Changed("profile") && !p.on {
			return nil
		}
		s, err := profiling.Local(dir)
		if err != nil {
			fmt.Fprintf(w, "tokenpulse: warning: no CPU profile of the embedded server: %v\n", err)
			return nil
		}
		return s
	}
	if !p.on {
		return nil
	}
	// The server's root, as /health and /metrics are found: --url may
	// name the API's base (…/v1) or its endpoint.
	s, err := profiling.Remote(ctx, dir, profiling.Target{BaseURL: c.Root(), APIKey: c.APIKey, Header: c.Header})
	if err != nil {
		fmt.Fprintf(w, "tokenpulse: warning: --profile: no CPU profile of %s: %v\n", url, err)
		return nil
	}
	return s
}

// stopProfile ends s (nil: none was taken), says on w where it went and
// returns what the run file records of it.
func stopProfile(s profiling.Session, w io.Writer, dir string) *runfile.Profile {
	if s == nil {
		return nil
	}
	pr, err := s.Stop()
	if err != nil {
		fmt.Fprintf(w, "tokenpulse: warning: the CPU profile: %v\n", err)
	}
	if pr != nil {
		fmt.Fprintf(w, "tokenpulse: CPU profile of the target written to %s (go tool pprof -http=: %s)\n", filepath.Join(dir, pr.File), filepath.Join(dir, pr.File))
	}
	return pr
}
