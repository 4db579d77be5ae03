// Package abtest measures two targets on one workload, fairly, and says
// how they differ: `tokenpulse bench --model A.gguf --model-b B.gguf`
// (two quantisations of one model, say).
//
// Fairness on a noisy machine comes from interleaving: both targets run
// at once, and the same sample of prompts (one seed) is sent to them one
// request at a time in the order A B B A A B B A ..., so that a slow
// spell of the machine (a compiler, a backup) falls on both alike and a
// steady drift cancels out within each pair of pairs. Each target's cold
// request comes first (A's, then B's), then the warm-up requests, A
// then B.
//
// The outputs are recorded so that their agreement can be told: the
// share of measured requests whose outputs are identical, and the mean
// length of their common prefix in content events (tokens, for a server
// that sends one token per event, as tokenpulse serve does). Outputs are
// comparable when sampling is greedy (temperature 0).
package abtest

import (
	"context"
	"sync"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// Recorder is a bench.Doer that keeps each answer's content events (the
// text each carried), by request id.
type Recorder struct {
	// Doer sends the requests.
	Doer bench.Doer

	mu  sync.Mutex
	out map[string][]string
}

// Do sends req and keeps its answer's events.
func (r *Recorder) Do(ctx context.Context, req stream.Request) *stream.Trace {
	tr := r.Doer.Do(ctx, req)
	if tr == nil {
		return tr
	}
	pieces := make([]string, len(tr.TextEnds))
	from := 0
	for i, end := range tr.TextEnds {
		if end >= from && end <= len(tr.Text) {
			pieces[i] = tr.Text[from:end]
			from = end
		}
	}
	r.mu.Lock()
	if r.out == nil {
		r.out = map[string][]string{}
	}
	r.out[tr.RequestID] = pieces
	r.mu.Unlock()
	return tr
}

// Output returns the content events of the request with this id (nil
// when none was recorded).
func (r *Recorder) Output(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out[id]
}

// Step is one request of the interleaved run: Side is "A" or "B", Phase
// "cold", "warmup" or "measure".
type Step struct {
	Side, Phase string
	Done, Total int
	Last        *runfile.Request
}

// Run sends workload w (closed loop, one request at a time) to a and b
// interleaved as the package says, and returns each side's requests in
// the order each side issued them, indexed from 0 per side. a and b are
// the same configuration but for their Client; their prompts come from
// w. progress, when set, is told of each request. On error (ctx ended, a
// Fatal) what was measured is returned with it.
func Run(ctx context.Context, a, b bench.Config, w bench.Workload, progress func(Step)) (ra, rb []runfile.Request, err error) {
	cfg := w.Config(a)
	total := 2 * (len(cfg.Prompts) + len(cfg.WarmupPrompts))
	if cfg.ColdPrompt != nil {
		total += 2
	}
	done := 0
	one := func(side string, c bench.Config, p suite.Prompt, phase string, out *[]runfile.Request) error {
		c.Prompts, c.WarmupPrompts, c.ColdPrompt, c.Schedule, c.Concurrency, c.Progress = []suite.Prompt{p}, nil, nil, nil, 1, nil
		reqs, err := bench.Run(ctx, c)
		for _, r := range reqs {
			r.Cold, r.Warmup = phase == "cold", phase == "warmup"
			r.Index = len(*out)
			*out = append(*out, r)
			done++
			if progress != nil {
				progress(Step{Side: side, Phase: phase, Done: done, Total: total, Last: &(*out)[len(*out)-1]})
			}
		}
		return err
	}
	pair := func(p suite.Prompt, phase string, bFirst bool) error {
		if bFirst {
			if err := one("B", b, p, phase, &rb); err != nil {
				return err
			}
			return one("A", a, p, phase, &ra)
		}
		if err := one("A", a, p, phase, &ra); err != nil {
			return err
		}
		return one("B", b, p, phase, &rb)
	}
	if cfg.ColdPrompt != nil {
		if err := pair(*cfg.ColdPrompt, "cold", false); err != nil {
			return ra, rb, err
		}
	}
	for _, p := range cfg.WarmupPrompts {
		if err := pair(p, "warmup", false); err != nil {
			return ra, rb, err
		}
	}
	for i, p := range cfg.Prompts {
		if err := pair(p, "measure", i%2 == 1); err != nil {
			return ra, rb, err
		}
	}
	return ra, rb, nil
}

// Agreement is how far two targets' outputs agree over the measured
// requests that succeeded on both sides.
type Agreement struct {
	// Pairs is the number of requests compared; Identical those whose
	// outputs are the same, event for event.
	Pairs     int `json:"pairs"`
	Identical int `json:"identical"`
	// IdenticalShare is Identical ÷ Pairs.
	IdenticalShare float64 `json:"identical_share"`
	// MeanCommonPrefix is the mean number of leading content events
	// (tokens) the two outputs share; MeanLengthA and MeanLengthB their
	// mean lengths, in the same unit.
	MeanCommonPrefix float64 `json:"mean_common_prefix_tokens"`
	MeanLengthA      float64 `json:"mean_length_a_tokens"`
	MeanLengthB      float64 `json:"mean_length_b_tokens"`
}

// Agree pairs the measured warm requests of ra and rb (package measure's
// overall scope, in order; the same prompt on both sides) and compares
// the outputs outA and outB recorded of them.
func Agree(ra, rb *runfile.Run, outA, outB func(id string) []string) Agreement {
	va, vb := measure.Views(ra, measure.Overall), measure.Views(rb, measure.Overall)
	var g Agreement
	var prefix, la, lb int
	for i := 0; i < min(len(va), len(vb)); i++ {
		x, y := va[i], vb[i]
		if !x.OK || !y.OK || x.Req.PromptID != y.Req.PromptID {
			continue
		}
		a, b := outA(x.Req.RequestID), outB(y.Req.RequestID)
		n := commonPrefix(a, b)
		g.Pairs++
		if n == len(a) && n == len(b) {
			g.Identical++
		}
		prefix, la, lb = prefix+n, la+len(a), lb+len(b)
	}
	if g.Pairs > 0 {
		n := float64(g.Pairs)
		g.IdenticalShare = float64(g.Identical) / n
		g.MeanCommonPrefix, g.MeanLengthA, g.MeanLengthB = float64(prefix)/n, float64(la)/n, float64(lb)/n
	}
	return g
}

// commonPrefix is the number of leading events a and b share.
func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
