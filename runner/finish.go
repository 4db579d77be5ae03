package runner

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
	"github.com/tokenpulse/tokenpulse/suite"
)

// The warnings for a category of the suite no request measured.
const (
	unmeasuredInRun     = "category %s was not measured (no request of it in this run; raise --requests): its thresholds were not judged"
	unmeasuredInJournal = "category %s was not measured before the run stopped: its thresholds were not judged"
)

// Finish finishes a run whose requests are in: it records the thresholds
// of suite s's measured categories (config.suite_thresholds, and a
// warning for each category with no request), summarises the requests
// (measure.Summarize), adds the run's warnings ([Warnings]) and judges it
// by rules ([gate.RuleSet.Apply]: verdicts, goodput, experience). rules
// nil judges by the default error budget alone.
func Finish(run *runfile.Run, s *suite.Suite, rules *gate.RuleSet) {
	spec := Spec{Rules: rules}
	finish(run, s, spec.rules(), unmeasuredInRun, nil)
}

// finish is [Finish] with the warning for an unmeasured category
// (a format of its name) and notes added after those warnings.
func finish(run *runfile.Run, s *suite.Suite, rules *gate.RuleSet, unmeasured string, notes []string) {
	var unsampled []string
	run.Config.SuiteThresholds, unsampled = s.MeasuredThresholds(run.Requests)
	run.Config.ShowThinking = s.ThinkingShown()
	for _, c := range unsampled {
		if run.StopReason != "" {
			break // not for want of requests: the run stopped, and says why
		}
		run.Warnings = append(run.Warnings, fmt.Sprintf(unmeasured, c))
	}
	run.Warnings = append(run.Warnings, notes...)
	measure.Summarize(run)
	run.Warnings = append(run.Warnings, Warnings(run)...)
	rules.Apply(run)
}

// Rebuild finishes the run a journal holds, as [Measure] would have had
// it not been killed: marked interrupted, summarised, judged by the
// rules its header recorded, with warnings that say it was rebuilt.
func Rebuild(j *runfile.Journal) (*runfile.Run, error) {
	run := j.Run()
	s, rules, err := recorded(run, j.Header.TierThresholds, j.Header.ExperienceYAML)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.Path, err)
	}
	run.Warnings = append(run.Warnings, fmt.Sprintf("rebuilt from the journal %s: the run stopped without writing run.json (killed, or crashed) after %d finished requests; figures cover those", j.Path, len(run.Requests)))
	run.Warnings = append(run.Warnings, j.Notes...)
	if run.Config.Scenario != "" {
		run.Warnings = append(run.Warnings, fmt.Sprintf("the %s scenario's own results (abort latencies, tokens after the abort) are not journaled: only its requests were rebuilt", run.Config.Scenario))
	}
	finish(run, s, rules, unmeasuredInJournal, nil)
	return run, nil
}

// recorded returns the suite and the rules a run records: its
// categories' thresholds (config.suite_thresholds), and the device
// tier's thresholds and the experience mapping as bench recorded them
// (the journal's header, a shard's block).
func recorded(run *runfile.Run, tierThresholds []string, experienceYAML string) (*suite.Suite, *gate.RuleSet, error) {
	s := &suite.Suite{Name: run.Config.Suite}
	names := slices.Sorted(maps.Keys(run.Config.SuiteThresholds))
	for c, shown := range run.Config.ShowThinking {
		if shown && !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	slices.Sort(names)
	for _, c := range names {
		s.Categories = append(s.Categories, suite.Category{Name: c, Thresholds: run.Config.SuiteThresholds[c], ShowThinking: run.Config.ShowThinking[c]})
	}
	rules, err := gate.Recorded(run.Device.Tier, tierThresholds, experienceYAML)
	return s, rules, err
}

// FinishRecorded finishes a run assembled from other records (tokenpulse
// merge: the shards' requests) as [Finish] would: summarised, warned of
// (notes first) and judged by the rules it records (see [recorded]):
// config.thresholds, config.suite_thresholds, and tierThresholds and
// experienceYAML as bench recorded them.
func FinishRecorded(run *runfile.Run, tierThresholds []string, experienceYAML string, notes []string) error {
	s, rules, err := recorded(run, tierThresholds, experienceYAML)
	if err != nil {
		return err
	}
	finish(run, s, rules, unmeasuredInRun, notes)
	return nil
}

// Warnings are what a summarised run warns of by itself: that it was
// interrupted or stopped (and why), and that an open loop's client did not keep its schedule
// ([ScheduleWarnings]).
func Warnings(run *runfile.Run) []string {
	var w []string
	switch {
	case run.StopReason != "":
		w = append(w, "the run "+run.StopReason+"; figures cover the requests measured before it stopped")
	case run.Interrupted:
		w = append(w, "the run was interrupted; figures cover the requests measured before it stopped")
	}
	return append(w, ScheduleWarnings(run)...)
}

// LagLimit is the schedule lag p99 above which an open loop's client is
// said not to have kept its schedule: 10 ms, or the mean inter-arrival
// 1/rate when that is shorter.
func LagLimit(rate float64) time.Duration {
	limit := 10 * time.Millisecond
	if rate > 0 {
		limit = min(limit, time.Duration(float64(time.Second)/rate))
	}
	return limit
}

// Behind reports whether a schedule lag p99 (ms) at rate (requests/s)
// is above [LagLimit].
func Behind(rate, lagP99Ms float64) bool {
	return lagP99Ms > stats.Millis(int64(LagLimit(rate)))
}

// ScheduleWarnings says when an open loop's client did not keep its
// schedule: then the arrivals the target saw were not the process asked
// for, and the TTFT and E2E from t_start understate what a user arriving
// on time waited (scheduled_ttft_ms holds that).
func ScheduleWarnings(run *runfile.Run) []string {
	if !run.Config.Arrival.Open() {
		return nil
	}
	var w []string
	o := run.Summary.Overall
	if o.SlotWaits > 0 {
		w = append(w, fmt.Sprintf("%d of %d requests found the ceiling of %d requests in flight (-c) reached and were sent late, waiting for a slot; raise -c to keep the schedule", o.SlotWaits, o.ScheduleLagMs.Count, run.Config.Concurrency))
	}
	limit := LagLimit(run.Config.Rate)
	if lag := o.ScheduleLagMs; lag.Count > 0 && Behind(run.Config.Rate, lag.P99) {
		what := fmt.Sprintf("the %s schedule at %g requests/s", run.Config.Arrival, run.Config.Rate)
		if run.Config.Arrival == runfile.ArrivalTrace {
			what = "the trace's schedule"
		}
		w = append(w, fmt.Sprintf("the client did not keep %s: schedule lag p99 %.1f ms (max %.1f ms) is above %v; the target saw other arrivals than asked for, and TTFT from t_start leaves the lag out (scheduled_ttft_ms includes it)",
			what, lag.P99, lag.Max, limit))
	}
	return w
}
