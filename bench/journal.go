package bench

import "github.com/tokenpulse/tokenpulse/runfile"

// Journal keeps each request as it finishes, so that a run killed before
// its end still has what it measured; *runfile.JournalWriter is one.
// Append is called once per finished request, from one goroutine at a
// time, before the request is reported to Config.Progress (and so before
// the worker that measured it sends its next request). phase is one of
// runfile's Phase constants and slot the request's place in the order of
// issue within the phase. Its error is the journal's to keep
// (JournalWriter.Err): a journal that cannot be written does not stop
// the run.
type Journal interface {
	Append(phase string, slot int, r *runfile.Request) error
}

// journalPhase is the journal's phase of a progress phase.
func journalPhase(phase string) string {
	switch phase {
	case "cold":
		return runfile.PhaseCold
	case "warmup":
		return runfile.PhaseWarmup
	case "measure":
		return runfile.PhaseMeasure
	}
	return runfile.PhaseScenario
}

// journaled returns progress with every reported request journaled first,
// as a scenario's requests (one at a time, in the order of issue).
func journaled(j Journal, progress func(Progress)) func(Progress) {
	if j == nil {
		return progress
	}
	slot := 0
	return func(p Progress) {
		if p.Last != nil {
			j.Append(runfile.PhaseScenario, slot, p.Last)
			slot++
		}
		if progress != nil {
			progress(p)
		}
	}
}
