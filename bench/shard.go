package bench

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/suite"
)

// Shard is one part of a workload split over Count client processes
// (bench --shard I/N): shard Index, from 0, of Count. The zero Shard, and
// any of Count 1, is the whole workload.
//
// How a workload is split (see [Workload.Config]):
//
//   - Open loop at rate R: each shard draws its own arrival process at
//     rate R/N from a seed of its own ([Shard.Seed]), so that the
//     superposition of N independent Poisson processes at R/N is a Poisson
//     process at R. A gamma process is split the same way (each shard
//     gamma at R/N with the same shape; their superposition has rate R
//     but is a gamma renewal process only at shape 1, and tends to Poisson
//     as N grows). Constant arrivals are phase-offset: shard I's are at
//     I/R + k·N/R, so together they are exactly 1/R apart. A request
//     count -n caps the superposition: the first n arrivals of all shards
//     together.
//   - Closed loop at concurrency C: C/N each, the remainder one more on
//     each of the first shards ([Shard.Part]); so is an open loop's
//     ceiling on requests in flight.
//   - Prompts (a conversation is one prompt): the whole run's sample is
//     drawn once, with the run's seed, and each drawn prompt goes to
//     exactly one shard: in an open loop the j-th arrival of the
//     superposition asks prompt j, and its shard asks it; in a closed
//     loop prompt j goes to shard j mod N.
//   - A trace replay ([Workload.Replay]): its arrivals are dealt round
//     the shards in turn (arrival j to shard j mod N), each sent at its
//     recorded time, so that together they send the trace.
//   - The cold request is shard 0's alone (a target has one cold start);
//     every shard sends its own warm-up requests.
type Shard struct {
	Index int
	Count int
}

// Sharded reports whether s splits a workload (Count > 1).
func (s Shard) Sharded() bool { return s.Count > 1 }

// String is "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Validate reports what makes s unusable.
func (s Shard) Validate() error {
	if s.Count == 0 && s.Index == 0 {
		return nil
	}
	switch {
	case s.Count < 1:
		return fmt.Errorf("shard count %d: want ≥ 1", s.Count)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard %d of %d: the index runs from 0 to %d", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// ParseShard reads "I/N" (bench --shard): shard I, from 0, of N.
func ParseShard(text string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(text), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want I/N, e.g. 0/4", text)
	}
	var s Shard
	var err1, err2 error
	s.Index, err1 = strconv.Atoi(i)
	s.Count, err2 = strconv.Atoi(n)
	if err := errors.Join(err1, err2); err != nil {
		return Shard{}, fmt.Errorf("shard %q: want I/N, e.g. 0/4", text)
	}
	if s.Count < 1 {
		return Shard{}, fmt.Errorf("shard %q: the count N must be ≥ 1", text)
	}
	return s, s.Validate()
}

// Part returns shard s's part of n things split as evenly as can be:
// n/N, plus one for each of the first n mod N shards.
func (s Shard) Part(n int) int {
	if !s.Sharded() {
		return n
	}
	p := n / s.Count
	if s.Index < n%s.Count {
		p++
	}
	return p
}

// Seed derives shard index's seed of the arrival process from the run's
// seed (SplitMix64 of the pair), so that the shards' processes are
// independent and each is reproducible from the run's seed alone.
func (s Shard) Seed(seed uint64) uint64 {
	z := seed + uint64(s.Index+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// arrivalOf is shard k's arrival process of a (rate R/N), and the
// phase offset of its arrivals (constant arrivals only).
func (s Shard) arrivalOf(a Arrival, k int) (Arrival, time.Duration) {
	part := a
	part.Rate = a.Rate / float64(s.Count)
	var offset time.Duration
	if a.Process == ArrivalConstant {
		offset = time.Duration(float64(k) / a.Rate * 1e9)
	}
	return part, offset
}

// arrival is one arrival of a sharded open loop: when, and whose.
type arrival struct {
	at    time.Duration
	shard int
}

// superposition returns the arrivals of every shard of w's open loop, in
// time order (ties by shard): the whole run's schedule.
func (w Workload) superposition() ([]arrival, error) {
	s := w.Shard
	a := w.Arrival
	if a.Duration == 0 && a.Max == 0 {
		a.Max = w.Requests
	}
	var all []arrival
	for k := range s.Count {
		part, offset := s.arrivalOf(a, k)
		sched, err := part.Schedule(Shard{Index: k, Count: s.Count}.Seed(w.Seed))
		if err != nil {
			return nil, err
		}
		for _, t := range sched {
			t += offset
			if a.Duration > 0 && t >= a.Duration {
				break
			}
			all = append(all, arrival{at: t, shard: k})
		}
	}
	slices.SortStableFunc(all, func(x, y arrival) int {
		return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.shard, y.shard))
	})
	if a.Max > 0 && len(all) > a.Max {
		all = all[:a.Max]
	}
	return all, nil
}

// ShardPlan is shard Shard's part of a workload: what it sends, and how
// much of the whole run that is.
type ShardPlan struct {
	// Total is the whole run's measured draws (prompts; a conversation
	// counts once), Requests this shard's.
	Total, Requests int
	// Concurrency is this shard's requests in flight (closed loop) or
	// its ceiling on them (open loop).
	Concurrency int
	// Schedule is this shard's arrivals (open loop; nil for a closed
	// loop), offsets from the common origin.
	Schedule []time.Duration
	// Prompts are this shard's measured prompts, in the order it sends
	// them.
	Prompts []suite.Prompt
}

// Plan returns w's shard's part of w (see [Shard]); for an unsharded
// workload, the whole of it.
func (w Workload) Plan() (ShardPlan, error) {
	s := w.Shard
	if err := s.Validate(); err != nil {
		return ShardPlan{}, err
	}
	if w.Replay != nil {
		n := w.Replay.Len()
		return ShardPlan{Total: n, Requests: s.Part(n), Concurrency: s.Part(w.Concurrency)}, nil
	}
	if !s.Sharded() {
		sched, err := w.Schedule()
		if err != nil {
			return ShardPlan{}, err
		}
		n := w.Requests
		if w.Arrival.Open() {
			n = len(sched)
		}
		return ShardPlan{Total: n, Requests: n, Concurrency: w.Concurrency, Schedule: sched, Prompts: w.Suite.Sample(n, w.Seed)}, nil
	}
	p := ShardPlan{Concurrency: s.Part(w.Concurrency)}
	if !w.Arrival.Open() {
		all := w.Suite.Sample(w.Requests, w.Seed)
		for j := s.Index; j < len(all); j += s.Count {
			p.Prompts = append(p.Prompts, all[j])
		}
		p.Total, p.Requests = len(all), len(p.Prompts)
		return p, nil
	}
	all, err := w.superposition()
	if err != nil {
		return ShardPlan{}, err
	}
	prompts := w.Suite.Sample(len(all), w.Seed)
	p.Schedule = []time.Duration{}
	for j, a := range all {
		if a.shard == s.Index && j < len(prompts) {
			p.Schedule = append(p.Schedule, a.at)
			p.Prompts = append(p.Prompts, prompts[j])
		}
	}
	p.Total, p.Requests = len(all), len(p.Schedule)
	return p, nil
}

// validateShard reports what makes w's shard unrunnable: every shard
// needs a request in flight and, in a closed loop, a request to send.
func (w Workload) validateShard() error {
	s := w.Shard
	if err := s.Validate(); err != nil {
		return err
	}
	if !s.Sharded() {
		return nil
	}
	switch {
	case w.Scenario != "":
		return fmt.Errorf("the %s scenario cannot be sharded", w.Scenario)
	case w.Concurrency < s.Count:
		return fmt.Errorf("concurrency %d split over %d shards leaves a shard without a request in flight: give at least %d", w.Concurrency, s.Count, s.Count)
	case !w.Arrival.Open() && w.Replay == nil && w.Requests < s.Count:
		return fmt.Errorf("%d requests split over %d shards leaves a shard without a request: give at least %d", w.Requests, s.Count, s.Count)
	}
	return nil
}
