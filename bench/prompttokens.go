package bench

import (
	"strings"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// countPrompt fills r's prompt tokens from cfg.Tokens (bench
// --tokenizer) when the server counted none: the text req sent (the
// completions prompt, or the chat messages' contents, one after another)
// tokenized with that vocabulary. The chat template's own tokens (role
// markers) are not in that text, so a chat prompt's count is a little
// short of the server's; the record's prompt_token_source says
// "tokenizer".
func (cfg Config) countPrompt(r *runfile.Request, req stream.Request) {
	if cfg.Tokens == nil || r.PromptTokens > 0 || !r.OK() {
		return
	}
	text := req.Prompt
	if c, ok := cfg.Client.(*stream.Client); (!ok || c.API != "completions") && len(req.Messages) > 0 {
		parts := make([]string, len(req.Messages))
		for i, m := range req.Messages {
			parts[i] = string(m.Content)
		}
		text = strings.Join(parts, "\n")
	}
	if n := cfg.Tokens.Count(text); n > 0 {
		r.PromptTokens, r.PromptTokenSource = n, "tokenizer"
	}
}
