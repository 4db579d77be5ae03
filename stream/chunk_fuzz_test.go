package stream

import (
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/tokenpulse/tokenpulse/api"
)

// refChunk is the chunk as the library decodes it into plain structs: the
// reference the allocation-free chunkParser must agree with.
type refChunk struct {
	Choices []struct {
		Delta        *api.Delta `json:"delta"`
		Text         *string    `json:"text"`
		FinishReason *string    `json:"finish_reason"`
	} `json:"choices"`
	Usage      *api.Usage        `json:"usage"`
	Tokenpulse *api.Extension    `json:"tokenpulse"`
	Timings    *api.LlamaTimings `json:"timings"`
}

// FuzzChunkParser holds chunkParser against the library's own decoding of
// the same JSON: both accept or both refuse, and an accepted chunk gives
// the same text, token flags, finish reason, usage, extension and
// timings.
func FuzzChunkParser(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"role":"assistant"}}]}`,
		`{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`,
		`{"choices":[{"text":"lo","finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
		`{"choices":[],"usage":{"completion_tokens":9}}`,
		`{"choices":[{"delta":{},"finish_reason":"length"}],"usage":{"completion_tokens":8},"timings":{"prompt_n":36,"prompt_ms":197.5,"predicted_n":8,"predicted_ms":311.8}}`,
		`{"choices":[{"delta":{"content":"a\u00e9\ud83d\ude00"}}],"tokenpulse":{"server_ns":17,"index":2,"tokens":3}}`,
		`{"choices":[{"delta":{"content":5}}]}`,
		`{"choices":null,"usage":null}`,
		`null`, `[]`, `{"choices":{}}`, `{"choices":[null]}`, `{"choices":[{"delta":null,"text":null}]}`,
		`{"choices":[{"delta":{"content":"x","content":"y"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var ref refChunk
		refErr := jsonv2.Unmarshal(data, &ref, chunkOptions)
		p := chunkParser{text: []byte("before|")}
		err := p.parse(data)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%q: parser error %v, reference error %v", data, err, refErr)
		}
		if err != nil {
			if string(p.text) != "before|" {
				t.Fatalf("%q: a refused chunk changed the text to %q", data, p.text)
			}
			return
		}
		var text strings.Builder
		token, reasoning, finish := false, false, ""
		for _, c := range ref.Choices {
			if d := c.Delta; d != nil {
				if d.Content != "" {
					text.WriteString(d.Content)
					token = true
				}
				if d.ReasoningContent != "" || d.Reasoning != "" {
					token, reasoning = true, true
				}
			}
			if c.Text != nil && *c.Text != "" {
				text.WriteString(*c.Text)
				token = true
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				finish = *c.FinishReason
			}
		}
		if got, want := string(p.text), "before|"+text.String(); got != want {
			t.Fatalf("%q: text %q, reference %q", data, got, want)
		}
		if p.token != token || p.reasoning != reasoning || string(p.finish) != finish {
			t.Fatalf("%q: token %v reasoning %v finish %q; reference %v %v %q", data, p.token, p.reasoning, p.finish, token, reasoning, finish)
		}
		if p.hasUsage != (ref.Usage != nil) || (ref.Usage != nil && p.usage != *ref.Usage) {
			t.Fatalf("%q: usage %v %+v, reference %+v", data, p.hasUsage, p.usage, ref.Usage)
		}
		if p.hasExt != (ref.Tokenpulse != nil) || (ref.Tokenpulse != nil && p.ext.ServerNS != ref.Tokenpulse.ServerNS) {
			t.Fatalf("%q: extension %v %+v, reference %+v", data, p.hasExt, p.ext, ref.Tokenpulse)
		}
		if p.hasLlama != (ref.Timings != nil) || (ref.Timings != nil && p.llama != *ref.Timings) {
			t.Fatalf("%q: timings %v %+v, reference %+v", data, p.hasLlama, p.llama, ref.Timings)
		}
	})
}
