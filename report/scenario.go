package report

import (
	"fmt"
	"strconv"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// scenarioColumns are the columns of the rapid-fire table.
var scenarioColumns = []string{"interrupted", "follow-up", "abort latency", "stream end", "tokens after abort", "foreign events", "follow-up ttft", "alone ttft", "ttft change"}

// scenarioRows returns one row per follow-up of a rapid-fire run: what the
// impatient user's abort cost (times in ms).
func scenarioRows(r *runfile.Run) [][]string {
	if r.Scenario == nil {
		return nil
	}
	var rows [][]string
	for _, f := range r.Scenario.FollowUps {
		after := "unknown"
		if f.TokensAfterAbort >= 0 {
			after = strconv.Itoa(f.TokensAfterAbort)
		}
		change := "-"
		if f.AloneTTFTNS > 0 {
			change = fmt.Sprintf("%+.0f%%", 100*(float64(f.TTFTNS)/float64(f.AloneTTFTNS)-1))
		}
		rows = append(rows, []string{
			promptOf(r, f.Interrupted), promptOf(r, f.FollowUp),
			nsMS(f.AbortLatencyNS), nsMS(f.StopLatencyNS), after, strconv.Itoa(f.ForeignEvents),
			nsMS(f.TTFTNS), nsMS(f.AloneTTFTNS), change,
		})
	}
	return rows
}

// scenarioSummary is the one-line verdict of a rapid-fire run: the abort is
// real when no token was produced after it and no foreign event was seen.
func scenarioSummary(r *runfile.Run) string {
	if r.Scenario == nil || len(r.Scenario.FollowUps) == 0 {
		return ""
	}
	after, foreign, unknown := 0, 0, 0
	for _, f := range r.Scenario.FollowUps {
		if f.TokensAfterAbort < 0 {
			unknown++
		} else {
			after += f.TokensAfterAbort
		}
		foreign += f.ForeignEvents
	}
	n := len(r.Scenario.FollowUps)
	if r.Config.Browser != nil {
		return browserScenarioSummary(r)
	}
	s := fmt.Sprintf("%s: %d follow-ups; %d tokens produced after the aborts, %d foreign events", r.Scenario.Name, n, after, foreign)
	if unknown > 0 {
		s += fmt.Sprintf(" (%d aborts unanswered: the target may not support /v1/abort)", unknown)
	}
	if after == 0 && foreign == 0 && unknown == 0 {
		s += ": the aborts were real"
	}
	return s
}

func promptOf(r *runfile.Run, i int) string {
	if i < 0 || i >= len(r.Requests) {
		return "-"
	}
	return orDash(r.Requests[i].PromptID)
}

func nsMS(ns int64) string { return fmtMS(float64(ns) / 1e6) }
