package bench

import (
	"context"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/clock"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// ask sends prompt p as a workload draws it: one request, or for a
// conversation each of its turns in turn (see [Config.converse]). keep
// gets each finished request with its turn's place from 0 and, for a
// later turn, the instant the turn became due (the previous answer's end
// plus the think time); due is zero for a first turn or a single prompt.
func ask(ctx context.Context, cfg Config, p suite.Prompt, keep func(k int, due time.Time, r runfile.Request)) {
	if !p.Conversation() {
		keep(0, time.Time{}, one(ctx, cfg, p))
		return
	}
	cfg.converse(ctx, p, keep)
}

// converse holds conversation p with the target: turn k is sent once
// turn k−1's answer has ended and its think time has passed on
// cfg.Clock, and carries the earlier turns with the answers the target
// streamed to them ([TurnRequest]). Every turn is recorded with the
// conversation's id (its first turn's request id) and its turn number
// from 1. A turn that fails ends the conversation: the turns after it
// would carry an answer that was never given, so they are not sent.
func (cfg Config) converse(ctx context.Context, p suite.Prompt, keep func(k int, due time.Time, r runfile.Request)) {
	clk := cfg.clock()
	answers := make([]string, 0, len(p.Turns)-1)
	var id string
	var ended time.Time
	for k, t := range p.Turns {
		var due time.Time
		if k > 0 {
			due = ended.Add(t.Think)
			if clk.SleepUntil(ctx, due) != nil {
				return
			}
		}
		req := TurnRequest(p, k, answers, cfg.MaxTokens)
		tr := cfg.do(ctx, req)
		ended = clk.Now()
		r := cfg.record(tr)
		cfg.countPrompt(&r, req)
		r.Category, r.PromptID = p.Category, p.ID
		if k == 0 {
			id = r.RequestID
		}
		r.ConversationID, r.Turn, r.ThinkNS = id, k+1, int64(t.Think)
		keep(k, due, r)
		if !r.OK() || ctx.Err() != nil {
			return
		}
		answers = append(answers, tr.Text)
	}
}

// TurnRequest builds the request of turn k (from 0) of conversation p,
// given answers, the text the target streamed for each turn before it.
// The chat carries p's system prompt, then each earlier turn as a user
// message followed by its answer as an assistant message, in order, then
// turn k. The completions prompt is the text the model has seen and
// written so far: turn 1's prompt is its text, as a single prompt's, and
// turn k's is turn k−1's prompt, its answer, a blank line and turn k's
// text (so a server's prefix cache can reuse every earlier turn).
// maxTokens > 0 overrides the prompt's own limit.
func TurnRequest(p suite.Prompt, k int, answers []string, maxTokens int) stream.Request {
	var msgs []api.Message
	if p.System != "" {
		msgs = append(msgs, api.Message{Role: "system", Content: api.Content(p.System)})
	}
	var prompt strings.Builder
	for j := range k {
		msgs = append(msgs,
			api.Message{Role: "user", Content: api.Content(p.Turns[j].Text)},
			api.Message{Role: "assistant", Content: api.Content(answers[j])})
		prompt.WriteString(p.Turns[j].Text + answers[j] + "\n\n")
	}
	msgs = append(msgs, api.Message{Role: "user", Content: api.Content(p.Turns[k].Text)})
	prompt.WriteString(p.Turns[k].Text)
	mt := p.MaxTokens
	if maxTokens > 0 {
		mt = maxTokens
	}
	return stream.Request{Messages: msgs, Prompt: prompt.String(), MaxTokens: mt}
}

// do sends req under cfg.Timeout.
func (cfg Config) do(ctx context.Context, req stream.Request) *stream.Trace {
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	return cfg.Client.Do(ctx, req)
}

// clock returns cfg.Clock, or the real clock.
func (cfg Config) clock() clock.Clock {
	if cfg.Clock == nil {
		return clock.Real{}
	}
	return cfg.Clock
}

// requests returns how many requests prompts become (a conversation one
// per turn), and where each prompt's first request falls in that order.
func requests(prompts []suite.Prompt) (total int, first []int) {
	first = make([]int, len(prompts))
	for i, p := range prompts {
		first[i] = total
		total += p.Requests()
	}
	return total, first
}
