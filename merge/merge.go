// Package merge builds one run from the run files of its shards (bench
// --shard I/N; tokenpulse merge): from their raw per-request records, so
// that every figure of the merged run is computed over all its requests
// (no percentile is ever averaged), then summarised and judged by package
// runner like any run.
//
//	parts, notes, err := merge.ReadDir("shards")
//	run, err := merge.Merge(parts, notes)
//	// run.Partial, run.Merge.SkewBoundNS, run.Summary, run.Verdicts
//
// What merging keeps and aligns:
//
//   - Settings: every shard must have been made with the same settings
//     (target, model, suite, API, max tokens, load, arrival, sampling,
//     seed, requests, warm-up, thresholds, tier, shard count, common
//     start); otherwise Merge refuses with a [*Mismatch] naming each
//     difference. The shards' hosts may differ.
//   - Host and clock facts: each shard's device, tool, start and end and
//     its start lateness are kept in run.Merge.Shards.
//   - Time: a request's TTFT, gaps and token times are durations on its
//     own host's monotonic clock and need no alignment. The load timeline
//     (requests in flight, requests/s) is drawn from each request's
//     wall-clock start, so it aligns the shards by their hosts' wall
//     clocks; run.Merge.SkewBoundNS states how far apart the shards'
//     measured requests began. An open loop's scheduled instants are
//     rebased to one origin: the common --start-at (each shard's lateness
//     then counts in its requests' schedule lag), else the earliest
//     shard's.
//   - Requests are re-indexed: the cold request, every shard's warm-up
//     requests by shard, then the measured requests in order of their
//     wall-clock start.
//   - A shard missing, or one that did not finish (merged from its
//     journal, or interrupted), makes the run partial: run.Partial, a
//     warning, and run.Interrupted, so that it never serves as a
//     baseline; it is never silently smaller.
package merge

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/baseline"
	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
)

// Part is one shard's record as read.
type Part struct {
	// Source names where it was read from (a run directory, an object
	// key).
	Source string
	// Run is its run file, or the run its journal holds.
	Run *runfile.Run
	// Finished is false for a shard read from its journal (it never
	// wrote run.json) or marked interrupted; Problem then says which.
	Finished bool
	Problem  string
	// TierThresholds and ExperienceYAML are what judging needs, as the
	// shard recorded them.
	TierThresholds []string
	ExperienceYAML string
}

// FromRunFile reads a shard from its run.json's bytes.
func FromRunFile(source string, b []byte) (Part, error) {
	run, err := runfile.Decode(b)
	if err != nil {
		return Part{}, fmt.Errorf("%s: %w", source, err)
	}
	p := Part{Source: source, Run: run, Finished: !run.Interrupted}
	if run.Interrupted {
		p.Problem = "interrupted"
		if run.StopReason != "" {
			p.Problem = run.StopReason
		}
	}
	if run.Shard != nil {
		p.TierThresholds, p.ExperienceYAML = run.Shard.TierThresholds, run.Shard.ExperienceYAML
	}
	return p, nil
}

// FromJournal reads a shard that never wrote run.json from its
// journal's bytes.
func FromJournal(source string, b []byte) (Part, error) {
	j, err := runfile.DecodeJournal(source, b)
	if err != nil {
		return Part{}, err
	}
	run := j.Run()
	return Part{
		Source: source, Run: run,
		Problem:        fmt.Sprintf("its journal was never finished (the shard was killed or crashed after %d requests)", len(run.Requests)),
		TierThresholds: j.Header.TierThresholds, ExperienceYAML: j.Header.ExperienceYAML,
	}, nil
}

// ReadDir reads the shards in dir: each subdirectory holding a run.json,
// or else a journal, is one. A subdirectory with neither is noted and
// left out (the shard died before its journal was written: merging
// finds it missing), and so is a merged run (the merge step publishes
// beside its shards, PREFIX/merged).
func ReadDir(dir string) (parts []Part, notes []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		p, err := readRunDir(sub)
		if errors.Is(err, fs.ErrNotExist) {
			notes = append(notes, fmt.Sprintf("%s holds no %s nor %s: left out", sub, runner.FileName, runfile.JournalFile))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if p.Run.Merge != nil {
			notes = append(notes, fmt.Sprintf("%s is a merged run, not a shard: left out", sub))
			continue
		}
		parts = append(parts, p)
	}
	return parts, notes, nil
}

// readRunDir reads one shard's run directory.
func readRunDir(dir string) (Part, error) {
	b, err := os.ReadFile(filepath.Join(dir, runner.FileName))
	if err == nil {
		return FromRunFile(dir, b)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Part{}, err
	}
	b, err = os.ReadFile(filepath.Join(dir, runfile.JournalFile))
	if err != nil {
		return Part{}, err
	}
	return FromJournal(filepath.Join(dir, runfile.JournalFile), b)
}

// Mismatch is Merge's refusal of shards made with other settings.
type Mismatch struct {
	// Base and Other name the two shards; Differences are Other's
	// settings against Base's.
	Base, Other string
	Differences []baseline.Difference
}

// Error names every difference: "shard 2 (dir) was made with seed 7,
// shard 0 (dir) with 1".
func (m *Mismatch) Error() string {
	parts := make([]string, len(m.Differences))
	for i, d := range m.Differences {
		parts[i] = fmt.Sprintf("%s %s (%s: %s)", d.Setting, d.New, m.Base, d.Base)
	}
	return fmt.Sprintf("%s was made with other settings than %s: %s; merge only the shards of one run", m.Other, m.Base, strings.Join(parts, "; "))
}

// Differences returns the settings in which shard run b differs from
// shard run a that forbid merging them: those that make two runs
// incomparable (baseline.Differences) less the device (shards may run on
// other hosts), and those that make them parts of other runs.
func Differences(a, b *runfile.Run) []baseline.Difference {
	var out []baseline.Difference
	for _, d := range baseline.Differences(a, b) {
		if d.Setting != "device" {
			out = append(out, d)
		}
	}
	add := func(setting, x, y string) {
		if x != y {
			out = append(out, baseline.Difference{Setting: setting, Base: x, New: y})
		}
	}
	ca, cb := a.Config, b.Config
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	add("shard count", strconv.Itoa(shardCount(a)), strconv.Itoa(shardCount(b)))
	add("seed", strconv.FormatUint(ca.Seed, 10), strconv.FormatUint(cb.Seed, 10))
	add("requests", strconv.Itoa(ca.Requests), strconv.Itoa(cb.Requests))
	add("concurrency", strconv.Itoa(ca.Concurrency), strconv.Itoa(cb.Concurrency))
	add("warm-up", strconv.Itoa(ca.Warmup), strconv.Itoa(cb.Warmup))
	add("cold", strconv.FormatBool(ca.Cold), strconv.FormatBool(cb.Cold))
	add("burstiness", num(ca.Burstiness), num(cb.Burstiness))
	add("duration", time.Duration(ca.DurationMS*1e6).String(), time.Duration(cb.DurationMS*1e6).String())
	add("ramp", time.Duration(ca.RampMS*1e6).String(), time.Duration(cb.RampMS*1e6).String())
	add("timeout", time.Duration(ca.TimeoutMS*1e6).String(), time.Duration(cb.TimeoutMS*1e6).String())
	add("thresholds", strings.Join(ca.Thresholds, ", "), strings.Join(cb.Thresholds, ", "))
	add("tokenizer", ca.Tokenizer, cb.Tokenizer)
	add("tier", a.Device.Tier, b.Device.Tier)
	add("start", startAt(a), startAt(b))
	return out
}

func shardCount(r *runfile.Run) int {
	if r.Shard == nil {
		return 1
	}
	return r.Shard.Count
}

func startAt(r *runfile.Run) string {
	if r.Shard == nil || r.Shard.StartAt == nil {
		return "none"
	}
	return r.Shard.StartAt.Format(time.RFC3339Nano)
}

// name is "shard I (source)".
func (p *Part) name() string {
	return fmt.Sprintf("shard %d (%s)", p.Run.Shard.Index, p.Source)
}

// Merge builds the whole run from its shards' parts (see the package
// doc): checked, aligned, re-indexed, then finished by
// runner.FinishRecorded (summary, warnings, verdicts), with notes (from
// ReadDir) among its warnings. The error is a refusal: no parts, a part
// that is no shard's, two parts of one shard, a [*Mismatch], or a
// merged run that fails the run file's rules.
func Merge(parts []Part, notes []string) (*runfile.Run, error) {
	if len(parts) == 0 {
		return nil, errors.New("no shard's run file or journal found")
	}
	for i := range parts {
		if parts[i].Run.Shard == nil {
			return nil, fmt.Errorf("%s is not a shard's run (its run file has no shard block: made without bench --shard)", parts[i].Source)
		}
		if parts[i].Run.Merge != nil {
			return nil, fmt.Errorf("%s is a merged run already", parts[i].Source)
		}
	}
	parts = slices.Clone(parts)
	slices.SortStableFunc(parts, func(a, b Part) int { return cmp.Compare(a.Run.Shard.Index, b.Run.Shard.Index) })
	ref := &parts[0]
	count := ref.Run.Shard.Count
	for i := 1; i < len(parts); i++ {
		p := &parts[i]
		if p.Run.Shard.Index == parts[i-1].Run.Shard.Index {
			return nil, fmt.Errorf("%s and %s are both shard %d: merge one run's shards, each once", parts[i-1].Source, p.Source, p.Run.Shard.Index)
		}
		if d := Differences(ref.Run, p.Run); len(d) > 0 {
			return nil, &Mismatch{Base: ref.name(), Other: p.name(), Differences: d}
		}
	}

	m := &runfile.Merge{Count: count}
	present := map[int]bool{}
	for i := range parts {
		present[parts[i].Run.Shard.Index] = true
	}
	for i := range count {
		if !present[i] {
			m.Missing = append(m.Missing, i)
		}
	}

	run := &runfile.Run{
		SchemaVersion: runfile.SchemaVersion,
		Tool:          ref.Run.Tool,
		StartedAt:     ref.Run.StartedAt,
		FinishedAt:    ref.Run.FinishedAt,
		Target:        ref.Run.Target,
		Device:        ref.Run.Device,
		Config:        ref.Run.Config,
		Merge:         m,
	}
	run.Config.SuiteThresholds = map[string][]string{}
	origin, withStart := scheduleOrigin(parts)
	var cold, warm, measured []runfile.Request
	var hosts []string
	var begins []time.Time
	var unfinished []string
	for i := range parts {
		p := &parts[i]
		r := p.Run
		if r.StartedAt.Before(run.StartedAt) {
			run.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(run.FinishedAt) {
			run.FinishedAt = r.FinishedAt
		}
		if run.ColdStart == nil {
			run.ColdStart = r.ColdStart
		}
		if run.Scrape == nil {
			// Every shard sampled the one target (bench --scrape): the
			// lowest shard's samples stand for all.
			run.Scrape = r.Scrape
		}
		maps.Copy(run.Config.SuiteThresholds, r.Config.SuiteThresholds)
		if !slices.Contains(hosts, r.Device.Hostname) {
			hosts = append(hosts, r.Device.Hostname)
		}
		if !p.Finished {
			unfinished = append(unfinished, fmt.Sprintf("shard %d %s", r.Shard.Index, p.Problem))
		}
		shift, lagAdd := rebase(r, origin, withStart)
		if at := shardOrigin(r); !at.IsZero() {
			begins = append(begins, at)
		}
		for _, q := range r.Requests {
			switch {
			case q.Cold:
				cold = append(cold, q)
			case q.Warmup:
				warm = append(warm, q)
			default:
				if q.ScheduledNS != nil {
					s := *q.ScheduledNS + shift
					q.ScheduledNS = &s
					q.ScheduleLagNS += lagAdd
				}
				measured = append(measured, q)
			}
		}
		sh := *r.Shard
		sh.TierThresholds, sh.ExperienceYAML = nil, ""
		m.Shards = append(m.Shards, runfile.MergedShard{
			Shard: sh, Source: p.Source, Finished: p.Finished, Problem: p.Problem,
			Device: r.Device, Tool: r.Tool, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
			Requests: len(r.Requests),
		})
	}
	if len(run.Config.SuiteThresholds) == 0 {
		run.Config.SuiteThresholds = nil
	}
	m.SkewBoundNS = spread(begins)
	slices.SortStableFunc(measured, func(a, b runfile.Request) int { return a.StartedAt.Compare(b.StartedAt) })
	run.Requests = slices.Concat(cold, warm, measured)
	for i := range run.Requests {
		run.Requests[i].Index = i
	}
	if err := run.Validate(); err != nil {
		return nil, fmt.Errorf("the merged run: %w", err)
	}

	var warn []string
	if len(m.Missing) > 0 || len(unfinished) > 0 {
		run.Partial, run.Interrupted = true, true
		var why []string
		for _, i := range m.Missing {
			why = append(why, fmt.Sprintf("shard %d is missing", i))
		}
		why = append(why, unfinished...)
		run.StopReason = fmt.Sprintf("is PARTIAL: merged from %d of %d shards, %d finished (%s)", len(parts), count, len(parts)-len(unfinished), strings.Join(why, "; "))
	}
	warn = append(warn, notes...)
	warn = append(warn, fmt.Sprintf("merged from %d shards on %d host(s) (%s): the load timeline aligns them by their hosts' wall clocks; their measured requests began within %v of each other%s, and the hosts' clock offsets are not measured",
		len(parts), len(hosts), strings.Join(hosts, ", "), time.Duration(m.SkewBoundNS), skewBasis(withStart)))
	if len(hosts) > 1 {
		warn = append(warn, fmt.Sprintf("the device recorded is shard %d's (%s); each shard's is in merge.shards", ref.Run.Shard.Index, ref.Run.Device.Hostname))
	}
	if run.Config.Arrival == bench.ArrivalGamma && run.Config.Burstiness != 1 {
		warn = append(warn, fmt.Sprintf("each shard drew gamma arrivals of shape %g at rate/%d; their superposition has the run's rate but is not a gamma process (it tends to Poisson as the shards grow)", run.Config.Burstiness, count))
	}
	if err := runner.FinishRecorded(run, ref.TierThresholds, ref.ExperienceYAML, warn); err != nil {
		return nil, err
	}
	return run, nil
}

// skewBasis says what the skew bound was measured against.
func skewBasis(withStart bool) string {
	if withStart {
		return " (the spread of their lateness after the common --start-at)"
	}
	return " (no common --start-at: the spread of their starts)"
}

// shardOrigin is the wall-clock instant shard run r's measured requests
// began: its record, or for a shard read from its journal (whose header
// was written before), the instant its scheduled requests' starts less
// their offsets and lags give; zero when unknown.
func shardOrigin(r *runfile.Run) time.Time {
	if !r.Shard.MeasuredAt.IsZero() {
		return r.Shard.MeasuredAt
	}
	for _, q := range r.Requests {
		if q.ScheduledNS != nil && !q.StartedAt.IsZero() && q.Turn <= 1 {
			return q.StartedAt.Add(-time.Duration(*q.ScheduledNS + q.ScheduleLagNS))
		}
	}
	return time.Time{}
}

// scheduleOrigin is the merged schedule's origin: the common --start-at,
// else the earliest shard's origin.
func scheduleOrigin(parts []Part) (time.Time, bool) {
	if at := parts[0].Run.Shard.StartAt; at != nil {
		return *at, true
	}
	var first time.Time
	for i := range parts {
		if at := shardOrigin(parts[i].Run); !at.IsZero() && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first, false
}

// rebase returns what moves shard run r's scheduled offsets to the
// merged origin, and what adds to their lag: with a common start the
// plan is every shard's schedule from that instant, so offsets stay and
// the shard's lateness joins each lag; without one, offsets move by the
// shard's origin's distance from the earliest.
func rebase(r *runfile.Run, origin time.Time, withStart bool) (shift, lagAdd int64) {
	at := shardOrigin(r)
	if at.IsZero() || origin.IsZero() {
		return 0, 0
	}
	if withStart {
		return 0, int64(at.Sub(origin))
	}
	return int64(at.Sub(origin)), 0
}

// spread is the largest minus the smallest of ts (0 for fewer than two).
func spread(ts []time.Time) int64 {
	if len(ts) < 2 {
		return 0
	}
	lo, hi := ts[0], ts[0]
	for _, t := range ts[1:] {
		if t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	return int64(hi.Sub(lo))
}
