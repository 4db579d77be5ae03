package stream

import (
	"context"
	"reflect"
	"testing"
)

// llamaReasoningStream is a reasoning model's chat stream as llama.cpp's
// llama-server sends it with --reasoning-format deepseek: the field name
// "reasoning_content" is the one examples/server/server.cpp
// (to_json_oaicompat_chat, message["reasoning_content"]) and
// common/chat.h (common_chat_msg::reasoning_content) give it, and the
// chunks are shaped as that file's to_json_oaicompat_chat_stream writes
// them (keys in nlohmann::json's order). The c392e50 snapshot separates
// the thinking in its final message only and streams it inline in
// "content"; later builds stream each thinking piece as
// delta.reasoning_content, the shape below.
var llamaReasoningStream = []string{
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant"}}],"created":1740000000,"id":"chatcmpl-R1","model":"r1","object":"chat.completion.chunk"}` + "\n\n",
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"The"}}],"created":1740000000,"id":"chatcmpl-R1","model":"r1","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk"}` + "\n\n",
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":" user"}}],"created":1740000000,"id":"chatcmpl-R1","model":"r1","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk"}` + "\n\n",
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":" asks"}}],"created":1740000000,"id":"chatcmpl-R1","model":"r1","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk"}` + "\n\n",
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hello"}}],"created":1740000000,"id":"chatcmpl-R1","model":"r1","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk"}` + "\n\n",
	`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" there"}}],"created":1740000000,"id":"chatcmpl-R1","model":"r1","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk"}` + "\n\n",
	`data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1740000000,"id":"chatcmpl-R1","model":"r1","system_fingerprint":"b4763-c392e509","object":"chat.completion.chunk","usage":{"completion_tokens":5,"prompt_tokens":9,"total_tokens":14},"timings":{"predicted_ms":40.1,"predicted_n":5,"predicted_per_second":124.7,"predicted_per_token_ms":8.02,"prompt_ms":11.3,"prompt_n":9,"prompt_per_second":796.4,"prompt_per_token_ms":1.25}}` + "\n\n",
	done,
}

// A llama-server reasoning stream: the thinking events are one run before
// the answer's, and the answer text holds no thinking.
func TestReasoningRunsLlamaServer(t *testing.T) {
	c, _ := newScript(t, &script{frames: llamaReasoningStream})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	if got, want := tr.ReasoningRuns, [][2]int{{0, 3}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReasoningRuns = %v, want %v", got, want)
	}
	if tr.ContentEvents() != 5 || tr.ReasoningEvents != 3 || tr.Text != "Hello there" {
		t.Errorf("%d content events, %d reasoning, text %q; want 5, 3, %q", tr.ContentEvents(), tr.ReasoningEvents, tr.Text, "Hello there")
	}
}

// vLLM and OpenRouter name the field "reasoning"; an event that carries
// answer text is the answer's even when it carries thinking too, and
// thinking that resumes after answer text is a run of its own.
func TestReasoningRunsMixed(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{
		`data: {"choices":[{"delta":{"reasoning":"a"}}]}` + "\n\n",
		`data: {"choices":[{"delta":{"reasoning_content":"b"}}]}` + "\n\n",
		`data: {"choices":[{"delta":{"content":"X","reasoning":"c"}}]}` + "\n\n",
		`data: {"choices":[{"delta":{"reasoning":"d"}}]}` + "\n\n",
		content("Y"),
		finish("stop"), done,
	}})
	tr := c.Do(context.Background(), Request{Prompt: "p"})
	if !tr.OK() {
		t.Fatalf("Err = %v", tr.Err)
	}
	if got, want := tr.ReasoningRuns, [][2]int{{0, 2}, {3, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReasoningRuns = %v, want %v", got, want)
	}
	if tr.ReasoningEvents != 4 {
		t.Errorf("ReasoningEvents = %d, want 4", tr.ReasoningEvents)
	}
}
