package runfile

import "time"

// Shard is one client process's part of a sharded run (bench --shard
// I/N): its run file's Config is the whole run's (the same in every
// shard), Shard says which part this process sent and when it started.
// tokenpulse merge builds the whole run from the shards' run files.
type Shard struct {
	// Index is this shard's, from 0, of Count.
	Index int `json:"index"`
	Count int `json:"count"`
	// Requests is this shard's measured draws (prompts; a conversation
	// counts once) of the run's config.requests; Concurrency its requests
	// in flight (closed loop) or its ceiling on them (open loop).
	Requests    int `json:"requests"`
	Concurrency int `json:"concurrency"`
	// StartAt is the wall-clock instant every shard was told to start
	// its measured requests at (bench --start-at); nil when none was.
	StartAt *time.Time `json:"start_at,omitempty"`
	// MeasuredAt is when, on this host's wall clock, the measured
	// requests began (an open loop's schedule origin); zero when the
	// shard stopped before them.
	MeasuredAt time.Time `json:"measured_at,omitzero"`
	// StartLateNS is MeasuredAt − StartAt: how late this shard started
	// (its warm-up ran past the instant, or its clock is behind); 0
	// without StartAt.
	StartLateNS int64 `json:"start_late_ns,omitempty"`
	// TierThresholds and ExperienceYAML are what judging the merged run
	// needs beyond the config, as the journal's header holds them.
	TierThresholds []string `json:"tier_thresholds,omitempty"`
	ExperienceYAML string   `json:"experience_yaml,omitempty"`
}

// Merge records how a run was merged from its shards (tokenpulse merge).
type Merge struct {
	// Count is the shards the run was split into; Shards are those found,
	// in index order.
	Count  int           `json:"count"`
	Shards []MergedShard `json:"shards"`
	// Missing are the indices of the shards with no run file or journal.
	Missing []int `json:"missing,omitempty"`
	// SkewBoundNS bounds how far apart the shards' measured requests
	// began, by their hosts' clocks: the spread (max − min) of their
	// start lateness with a common --start-at, else of their
	// MeasuredAt. The load timeline (requests in flight, requests/s)
	// aligns the shards by wall clock, so it is off by at most this
	// plus the hosts' clock offsets, which tokenpulse does not measure.
	SkewBoundNS int64 `json:"skew_bound_ns"`
}

// MergedShard is one shard of a merged run: where it came from, its host
// and clock facts, and where its requests went.
type MergedShard struct {
	Shard Shard `json:"shard"`
	// Source is its run directory or object key.
	Source string `json:"source"`
	// Finished is false for a shard whose run file was never written
	// (merged from its journal) or that was interrupted; Problem says
	// what became of it.
	Finished bool   `json:"finished"`
	Problem  string `json:"problem,omitempty"`
	Device   Device `json:"device"`
	Tool     Tool   `json:"tool"`
	// StartedAt and FinishedAt are its run's, on its host's clock.
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	// Requests is how many of its requests the merged run holds (cold,
	// warm-up and measured).
	Requests int `json:"requests"`
}
