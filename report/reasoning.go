package report

import (
	"slices"
	"strings"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// reasoningColumns are the columns of the reasoning table: a reasoning
// model's two phases, as package measure defines them.
var reasoningColumns = []string{"scope", "think ttft p50", "think ttft p95", "answer ttft p50", "answer ttft p95",
	"think span p50", "answer span p50", "think tpot", "think tpot p95", "answer tpot", "answer tpot p95"}

// reasoningRows returns the rows of the reasoning table, one per scope
// whose requests thought; nil for a run none of whose requests did.
func reasoningRows(r *runfile.Run) [][]string {
	var out [][]string
	for _, g := range groups(r) {
		x := g.G
		if !measure.Reasoned(x) {
			continue
		}
		out = append(out, []string{g.Name,
			ms(x.ReasoningTTFTMs, x.ReasoningTTFTMs.P50), ms(x.ReasoningTTFTMs, x.ReasoningTTFTMs.P95),
			ms(x.AnswerTTFTMs, x.AnswerTTFTMs.P50), ms(x.AnswerTTFTMs, x.AnswerTTFTMs.P95),
			ms(x.ReasoningSpanMs, x.ReasoningSpanMs.P50), ms(x.AnswerSpanMs, x.AnswerSpanMs.P50),
			ms(x.ReasoningTPOTMs, x.ReasoningTPOTMs.Mean), ms(x.ReasoningTokenIntervalMs, x.ReasoningTokenIntervalMs.P95),
			ms(x.AnswerTPOTMs, x.AnswerTPOTMs.Mean), ms(x.AnswerTokenIntervalMs, x.AnswerTokenIntervalMs.P95),
		})
	}
	return out
}

// thinkingNote says what the visible figures of a reasoning run count:
// the answer only, or the thinking too where the suite shows it.
func thinkingNote(r *runfile.Run) string {
	var shown []string
	for c, ok := range r.Config.ShowThinking {
		if ok {
			shown = append(shown, c)
		}
	}
	slices.Sort(shown)
	if len(shown) == 0 {
		return "The thinking is not shown (the suite's show_thinking): the visible figures (vis ttft, visible gaps) start at the first answer token."
	}
	return "The suite shows the thinking of " + strings.Join(shown, ", ") + ": there the visible figures start at the first thinking token; elsewhere at the first answer token."
}

// reasoning shows the reasoning table, for a run whose requests thought.
func (t *textWriter) reasoning(r *runfile.Run) {
	rows := reasoningRows(r)
	if len(rows) == 0 {
		return
	}
	t.titledTable("reasoning: thinking first, the answer after (warm requests, times in ms; tpot per token within the phase)", reasoningColumns, rows)
	t.printf("%s\n", thinkingNote(r))
}

// reasoningProperties are the JUnit properties of a reasoning run's
// overall phases (ms): the two TTFTs, p50 and p95; none for a run that
// never thought.
func reasoningProperties(g runfile.Group) []junitProperty {
	if !measure.Reasoned(g) {
		return nil
	}
	return []junitProperty{
		{"reasoning_ttft.p50_ms", ms(g.ReasoningTTFTMs, g.ReasoningTTFTMs.P50)},
		{"reasoning_ttft.p95_ms", ms(g.ReasoningTTFTMs, g.ReasoningTTFTMs.P95)},
		{"answer_ttft.p50_ms", ms(g.AnswerTTFTMs, g.AnswerTTFTMs.P50)},
		{"answer_ttft.p95_ms", ms(g.AnswerTTFTMs, g.AnswerTTFTMs.P95)},
	}
}
