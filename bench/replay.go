package bench

import (
	"time"

	"github.com/tokenpulse/tokenpulse/suite"
)

// Replay is an open loop's arrivals read as they come due rather than
// held in a schedule: a production trace (bench --trace, package trace),
// which may hold millions of requests. It is the scheduler's other source
// of arrivals beside [Config.Schedule] with [Config.Prompts]; the open
// loop keeps it the same way, lag and ceiling alike.
type Replay interface {
	// Len is how many arrivals it holds.
	Len() int
	// Arrivals calls yield with each arrival in time order (an offset
	// from the schedule's origin and the prompt it asks, one request,
	// not a conversation) until yield returns false. Its error is one of
	// reading the arrivals.
	Arrivals(yield func(at time.Duration, p suite.Prompt) bool) error
}

// shardReplay is shard s's part of a replay: its arrivals j with j mod
// Count = Index (the run's arrivals dealt round the shards in turn, each
// at its recorded time).
type shardReplay struct {
	all Replay
	s   Shard
}

func (r shardReplay) Len() int { return r.s.Part(r.all.Len()) }

func (r shardReplay) Arrivals(yield func(time.Duration, suite.Prompt) bool) error {
	j := 0
	return r.all.Arrivals(func(at time.Duration, p suite.Prompt) bool {
		mine := j%r.s.Count == r.s.Index
		j++
		return !mine || yield(at, p)
	})
}

// arrivals is what an open loop sends: how many records it makes, where
// arrival i's first record goes, and the arrivals in order.
type arrivals struct {
	total int
	first func(i int) int
	each  func(yield func(at time.Duration, p suite.Prompt) bool) error
}

// arrivals returns cfg's open-loop source: its Replay, else its Schedule
// with its Prompts.
func (cfg Config) arrivals() arrivals {
	if cfg.Replay != nil {
		return arrivals{total: cfg.Replay.Len(), first: func(i int) int { return i }, each: cfg.Replay.Arrivals}
	}
	n := min(len(cfg.Schedule), len(cfg.Prompts))
	total, first := requests(cfg.Prompts[:n])
	return arrivals{
		total: total,
		first: func(i int) int { return first[i] },
		each: func(yield func(time.Duration, suite.Prompt) bool) error {
			for i := range n {
				if !yield(cfg.Schedule[i], cfg.Prompts[i]) {
					break
				}
			}
			return nil
		},
	}
}
