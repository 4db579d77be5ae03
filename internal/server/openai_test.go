package server

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tokenpulse/tokenpulse/api"
)

// TestOpenAIClient streams a chat completion with the official Go client,
// which no one here wrote.
func TestOpenAIClient(t *testing.T) {
	f := newFake("The", " cat", " sat", ".")
	_, ts, _ := newTestServer(t, f, Options{APIKey: "sk-test"})
	client := openai.NewClient(
		option.WithBaseURL(ts.URL+"/v1"),
		option.WithAPIKey("sk-test"),
		option.WithMaxRetries(0),
	)
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:         "fake-1",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me a story")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}, option.WithHeader(api.HeaderRequestID, "openai-go-1"))
	var acc openai.ChatCompletionAccumulator
	tokens := 0
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			var x api.Extension
			if err := json.Unmarshal([]byte(chunk.JSON.ExtraFields["tokenpulse"].Raw()), &x); err != nil {
				t.Fatalf("tokenpulse extension: %v", err)
			}
			if got, want := x.Index, tokens; got != want {
				t.Errorf("extension index: got %d, want %d", got, want)
			}
			tokens++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := acc.Choices[0].Message.Content, "The cat sat."; got != want {
		t.Errorf("content: got %q, want %q", got, want)
	}
	if got, want := acc.Choices[0].FinishReason, "stop"; got != want {
		t.Errorf("finish reason: got %q, want %q", got, want)
	}
	if got, want := acc.Usage.CompletionTokens, int64(4); got != want {
		t.Errorf("usage completion tokens: got %d, want %d", got, want)
	}
	if got, want := tokens, 4; got != want {
		t.Errorf("token events: got %d, want %d", got, want)
	}
	if got, want := acc.ID, "chatcmpl-openai-go-1"; got != want {
		t.Errorf("completion id: got %q, want %q", got, want)
	}

	// The non-streamed call and the model list go through the same client.
	c, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("again")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Choices[0].Message.Content, "The cat sat."; got != want {
		t.Errorf("non-streamed content: got %q, want %q", got, want)
	}
	models, err := client.Models.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(models.Data) != 1 || models.Data[0].ID != "fake-1" {
		t.Errorf("models: got %+v", models.Data)
	}
}
