package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/bench"
)

// jobIndexEnv is where a Kubernetes Indexed Job gives each pod its
// completion index (bench --shards N takes its shard from it).
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// shardFlags are bench's flags of a sharded run: which part of the
// workload this process sends, and when the shards start.
type shardFlags struct {
	shard   string
	shards  int
	startAt string

	// Resolved by resolve.
	part bench.Shard
	at   time.Time
}

func (s *shardFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.shard, "shard", "", "send shard I of N of the workload (I/N, I from 0): rate R/N with a seed of its own (arrivals phase-offset when constant), concurrency C/N (remainder to the first shards), each drawn prompt asked by exactly one shard; tokenpulse merge builds the whole run from the shards' run directories")
	fl.IntVar(&s.shards, "shards", 0, "the workload is split over N shards and this is shard $"+jobIndexEnv+" (a Kubernetes Indexed Job's completion index); like --shard $"+jobIndexEnv+"/N")
	fl.StringVar(&s.startAt, "start-at", "", "with --shard or --shards, hold the measured requests (after the cold and warm-up ones) until this RFC 3339 instant, the same for every shard; the run file records how late this shard began")
}

// resolve reads the shard from the flags (and, for --shards, from
// getenv's JOB_COMPLETION_INDEX); every error is one of use.
func (s *shardFlags) resolve(getenv func(string) string) error {
	switch {
	case s.shard != "" && s.shards != 0:
		return errors.New("give --shard I/N or --shards N (with $" + jobIndexEnv + "), not both")
	case s.shard != "":
		p, err := bench.ParseShard(s.shard)
		if err != nil {
			return fmt.Errorf("--shard: %w", err)
		}
		s.part = p
	case s.shards != 0:
		if s.shards < 1 {
			return fmt.Errorf("--shards must be ≥ 1, not %d", s.shards)
		}
		v := getenv(jobIndexEnv)
		if v == "" {
			return fmt.Errorf("--shards %d takes this shard's index from $%s, which is unset (give --shard I/%d instead)", s.shards, jobIndexEnv, s.shards)
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("$%s=%q is not a shard index", jobIndexEnv, v)
		}
		s.part = bench.Shard{Index: i, Count: s.shards}
		if err := s.part.Validate(); err != nil {
			return fmt.Errorf("--shards %d with $%s=%d: %w", s.shards, jobIndexEnv, i, err)
		}
	}
	if s.startAt != "" {
		if !s.sharded() {
			return errors.New("--start-at starts the shards of a sharded run together: it needs --shard or --shards")
		}
		at, err := time.Parse(time.RFC3339Nano, s.startAt)
		if err != nil {
			return fmt.Errorf("--start-at: want an RFC 3339 instant such as 2026-01-02T03:04:05Z: %w", err)
		}
		s.at = at
	}
	return nil
}

// sharded reports whether the run is split (a shard count above 1).
func (s *shardFlags) sharded() bool { return s.part.Sharded() }

// checkWith refuses what a shard cannot be part of: repeats and the
// browser measurement make runs of their own (bench refuses the A/B
// before it plans).
func (s *shardFlags) checkWith(f *benchFlags) error {
	if !s.sharded() {
		return nil
	}
	switch {
	case f.repeat > 1:
		return errors.New("--repeat cannot be sharded: run the shards once per repeat")
	case f.browser.on:
		return errors.New("--browser cannot be sharded")
	}
	return nil
}
