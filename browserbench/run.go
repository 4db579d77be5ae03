package browserbench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
	"github.com/tokenpulse/tokenpulse/suite"
)

// Plan is a browser run: the prompts of a bench workload, asked one at a
// time in one page, once per render strategy.
type Plan struct {
	// Cold, when set, is asked first (with the first strategy) and marked
	// cold; Warmup prompts are asked before each strategy's measured ones
	// and marked warm-up.
	Cold   *suite.Prompt
	Warmup []suite.Prompt
	// Prompts are the measured prompts; in the rapid-fire scenario they
	// are taken in pairs (first, follow-up).
	Prompts []suite.Prompt
	// Renders are the strategies, run one after another.
	Renders []string
	// Scenario is "" or bench.ScenarioRapidFire.
	Scenario string
	// AfterTokens is, in rapid-fire, how many tokens of the first answer
	// are painted before the follow-up's click (0: 3).
	AfterTokens int
	// Progress, when set, hears of each finished request.
	Progress func(bench.Progress)
	// Journal, when set, keeps each finished request.
	Journal bench.Journal
}

// Run carries out plan in session s and returns every request in the
// order asked (indexed from 0), rapid-fire's follow-ups, and the error
// that stopped it (what was measured until then is returned with it).
func (s *Session) Run(ctx context.Context, plan Plan) ([]runfile.Request, *runfile.Scenario, error) {
	var reqs []runfile.Request
	var scen *runfile.Scenario
	if plan.Scenario == bench.ScenarioRapidFire {
		scen = &runfile.Scenario{Name: bench.ScenarioRapidFire}
	}
	total := len(plan.Renders) * (len(plan.Warmup) + len(plan.Prompts))
	if plan.Scenario == bench.ScenarioRapidFire {
		total = len(plan.Renders) * (len(plan.Warmup) + len(plan.Prompts)/2*3)
	}
	if plan.Cold != nil {
		total++
	}
	var ttfts []float64
	errs, slot := 0, map[string]int{}
	add := func(phase string, q runfile.Request) {
		q.Index = len(reqs)
		switch phase {
		case runfile.PhaseCold:
			q.Cold = true
		case runfile.PhaseWarmup:
			q.Warmup = true
		}
		reqs = append(reqs, q)
		r := &reqs[len(reqs)-1]
		if plan.Journal != nil {
			plan.Journal.Append(phase, slot[phase], r)
		}
		slot[phase]++
		if !r.OK() {
			errs++
		}
		if phase == runfile.PhaseMeasure {
			// The request's TTFT as measure reads it (none for a failed
			// one), and its p50 as stats takes it: bench's progress too.
			v := measure.Of(r, stats.DefaultDisplay)
			ttfts = append(ttfts, v.Values(measure.TTFT)...)
		}
		if plan.Progress != nil {
			p := bench.Progress{Phase: progressPhase(phase), Done: len(reqs), Total: total, Errors: errs, Last: r}
			if len(ttfts) > 0 {
				p.TTFTP50Ms = stats.Percentile(slices.Sorted(slices.Values(ttfts)), 50)
			}
			plan.Progress(p)
		}
	}
	ask := func(p suite.Prompt, render, phase string) error {
		q, err := s.Ask(ctx, p, render)
		if err != nil {
			return err
		}
		add(phase, q)
		return nil
	}
	for k, render := range plan.Renders {
		if k == 0 && plan.Cold != nil {
			if err := ask(*plan.Cold, render, runfile.PhaseCold); err != nil {
				return reqs, scen, err
			}
		}
		for _, p := range plan.Warmup {
			if err := ask(p, render, runfile.PhaseWarmup); err != nil {
				return reqs, scen, err
			}
		}
		if plan.Scenario == bench.ScenarioRapidFire {
			for i := 0; i+1 < len(plan.Prompts); i += 2 {
				if ctx.Err() != nil {
					return reqs, scen, ctx.Err()
				}
				fu, err := s.rapidFire(ctx, plan.Prompts[i], plan.Prompts[i+1], render, plan.AfterTokens, func(q runfile.Request) int {
					add(runfile.PhaseScenario, q)
					return len(reqs) - 1
				})
				if err != nil {
					return reqs, scen, err
				}
				scen.FollowUps = append(scen.FollowUps, fu)
			}
			continue
		}
		for _, p := range plan.Prompts {
			if ctx.Err() != nil {
				return reqs, scen, ctx.Err()
			}
			if err := ask(p, render, runfile.PhaseMeasure); err != nil {
				return reqs, scen, err
			}
		}
	}
	return reqs, scen, ctx.Err()
}

// rapidFire asks follow alone (its reference TTFT), then first, and once
// after tokens of first are in the page clicks send again with follow:
// the page aborts first (AbortController and /v1/abort) and must paint
// none of its tokens after that click. add records a request and returns
// its index.
func (s *Session) rapidFire(ctx context.Context, first, follow suite.Prompt, render string, after int, add func(runfile.Request) int) (runfile.FollowUp, error) {
	if after <= 0 {
		after = 3
	}
	fu := runfile.FollowUp{TokensAfterAbort: -1}
	alone, err := s.Ask(ctx, follow, render)
	if err != nil {
		return fu, err
	}
	add(alone)
	idA, err := s.click(first, render)
	if err != nil {
		return fu, err
	}
	// Wait for after tokens of first in the page, or for its end: an
	// answer that failed or ended short will bring no more, and waiting
	// out the timeout for them would hang the run.
	deadline := time.Now().Add(s.cfg.Timeout)
	for {
		n, err := s.Painted(idA)
		if err != nil {
			return fu, err
		}
		if n >= after || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		if over, err := s.ended(idA); err != nil {
			return fu, err
		} else if over {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	idB, err := s.click(follow, render)
	if err != nil {
		return fu, err
	}
	a, err := s.result(ctx, idA, first)
	if err != nil {
		return fu, err
	}
	b, err := s.result(ctx, idB, follow)
	if err != nil {
		return fu, err
	}
	if !a.Aborted {
		a.Error, a.ErrorKind = fmt.Sprintf("the answer ended before %d tokens were in the page, so it was not interrupted", after), runfile.ErrorCut
	}
	a.Aborted = true
	stale := measure.StalePaints(&a, &b)
	fu.OldPaintsAfterClick = &stale
	click := b.StartedAt.Sub(a.StartedAt).Nanoseconds()
	if n := len(a.TokenTimesNS); n > 0 && a.TokenTimesNS[n-1] > click {
		fu.AbortLatencyNS = a.TokenTimesNS[n-1] - click
	}
	if a.E2ENS > click {
		fu.StopLatencyNS = a.E2ENS - click
	}
	fu.ForeignEvents = b.ForeignEvents
	fu.TTFTNS, fu.AloneTTFTNS = b.TTFTNS, alone.TTFTNS
	fu.Interrupted = add(a)
	fu.FollowUp = add(b)
	return fu, nil
}

// progressPhase is bench's progress phase of a journal phase.
func progressPhase(phase string) string {
	switch phase {
	case runfile.PhaseCold:
		return "cold"
	case runfile.PhaseWarmup:
		return "warmup"
	case runfile.PhaseMeasure:
		return "measure"
	}
	return "scenario"
}
