package engine

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// greedyRef is one entry of shared/models/reference/greedy.json.
type greedyRef struct {
	Prompt       string  `json:"prompt"`
	PromptTokens []int32 `json:"prompt_tokens"`
	OutputTokens []int32 `json:"output_tokens"`
	OutputText   string  `json:"output_text"`
}

func loadJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

func loadModel(t testing.TB, path string, opts Options) *Model {
	t.Helper()
	opts.ModelPath = path
	m, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func generate(t *testing.T, s *Session, prompt []int32, p Params) ([]int32, Result) {
	t.Helper()
	var got []int32
	res, err := s.Generate(context.Background(), prompt, p, func(tok Token) error {
		got = append(got, tok.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, res
}

// TestGreedyStories reproduces llama.cpp's greedy continuations of
// stories260K token for token, from the file and from the bundled copy,
// with prefill batches of several sizes and one or two threads.
func TestGreedyStories(t *testing.T) {
	var refs []greedyRef
	loadJSON(t, fixture.Path(t, "models/reference/greedy.json"), &refs)
	path := fixture.Path(t, "models/stories260K.gguf")
	configs := []struct {
		name string
		path string
		opts Options
	}{
		{"file", path, Options{}},
		{"bundled", "", Options{}},
		{"batch1-threads2", path, Options{BatchSize: 1, Threads: 2}},
		{"batch3-threads1", path, Options{BatchSize: 3, Threads: 1}},
	}
	for _, cfg := range configs {
		m := loadModel(t, cfg.path, cfg.opts)
		s := m.NewSession()
		for _, ref := range refs {
			t.Run(cfg.name+"/"+ref.Prompt, func(t *testing.T) {
				got, res := generate(t, s, ref.PromptTokens, Params{MaxTokens: len(ref.OutputTokens)})
				if !slices.Equal(got, ref.OutputTokens) {
					t.Errorf("tokens\n got %v\nwant %v", got, ref.OutputTokens)
				}
				if res.StopReason != "length" || res.OutputTokens != len(ref.OutputTokens) || res.PromptTokens != len(ref.PromptTokens) {
					t.Errorf("result = %+v, want stop length with %d tokens", res, len(ref.OutputTokens))
				}
			})
		}
	}
}
