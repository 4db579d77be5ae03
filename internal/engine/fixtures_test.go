package engine

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// synthRef is the part of a shared/models/synth/*.json reference we use.
type synthRef struct {
	Prompts []synthPrompt `json:"prompts_kv_f32"` // llama.cpp with an F32 KV cache, like ours
}

type synthPrompt struct {
	Prompt       string  `json:"prompt"`
	PromptTokens []int32 `json:"prompt_tokens"`
	OutputTokens []int32 `json:"output_tokens"`
	TopProbs     [][]struct {
		ID      int32   `json:"id"`
		Logprob float64 `json:"logprob"`
	} `json:"top_probs"`
}

// logSoftmax returns the log-probabilities of logits, in float64.
func logSoftmax(logits []float32) []float64 {
	mx := float64(logits[0])
	for _, v := range logits {
		mx = math.Max(mx, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - mx)
	}
	out := make([]float64, len(logits))
	for i, v := range logits {
		out[i] = float64(v) - mx - math.Log(sum)
	}
	return out
}

// TestSynthFixtures compares the engine with llama.cpp on the synthetic
// random-weight models: teacher-forced (the engine reads prompt + the
// reference output and is compared at each generated position) for the
// top-10 log-probabilities and the argmax, and free-running greedy for the
// F32 files, where agreement must be exact.
func TestSynthFixtures(t *testing.T) {
	// qwen2 Q4_K_M measures 0.14 on amd64's three paths (AVX-512,
	// AVX2, pure Go) since the AVX2 Q4_K and Q6_K kernels round as
	// their Go twins do (quant's sumsLikeGo); the AVX2 path measured
	// 0.16 before. arm64's NEON kernels, which keep float32 lanes, give
	// 0.2.
	qwen2Q4KMTol := 0.3
	if runtime.GOARCH == "amd64" {
		qwen2Q4KMTol = 0.15
	}
	cases := []struct {
		file       string
		tol        float64 // max |Δ logprob| over the top 10
		minArgmax  int     // positions out of 48 where the argmax agrees
		exactGreed bool
	}{
		{"synth-llama-256", 1e-4, 48, true},
		{"synth-qwen2-256", 1e-4, 48, true},
		// Quantised: like llama.cpp, the engine quantises activations
		// (Q8_0, Q8_1, Q8_K) before integer dot products, which agrees
		// better than the README's exact-dequantiser bounds (46/48 ...
		// 0.57): measured 48/48 0.041, 48/48 0.12, 46/48 0.34, 48/48 0.24,
		// 47/48 0.21, 48/48 0.14. Bounds leave a little slack. With
		// Q8_0's 16-row groups (AVX-512 VNNI), llama Q8_0 measures
		// 48/48 0.15: one activation quant (ffn_down's input at position
		// 7) rounds to 8 where the file's kernels get 7, after a last-bit
		// difference of float32 summation order, and the difference
		// carries on through the KV cache; the integer block sums are
		// exact (quant.TestX16GoMatchesFile).
		{"synth-llama-256-Q8_0", 0.2, 47, false},
		{"synth-qwen2-256-Q8_0", 0.25, 47, false},
		{"synth-llama-256-Q4_0", 0.5, 45, false},
		{"synth-llama-256-Q6_K", 0.4, 47, false},
		{"synth-llama-256-Q4_K_M", 0.35, 46, false},
		{"synth-qwen2-256-Q4_K_M", qwen2Q4KMTol, 48, false},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			var ref synthRef
			loadJSON(t, fixture.Path(t, "models/synth/"+c.file+".json"), &ref)
			m := loadModel(t, fixture.Path(t, "models/synth/"+c.file+".gguf"), Options{Ctx: 512})
			s := m.NewSession()
			agree, positions := 0, 0
			worst := 0.0
			for _, p := range ref.Prompts {
				seq := append(slices.Clone(p.PromptTokens), p.OutputTokens...)
				logits, err := s.Logits(seq[:len(seq)-1])
				if err != nil {
					t.Fatal(err)
				}
				for i, top := range p.TopProbs {
					lp := logSoftmax(logits[len(p.PromptTokens)-1+i])
					positions++
					if int32(argmax(logits[len(p.PromptTokens)-1+i])) == top[0].ID {
						agree++
					}
					for _, e := range top {
						worst = math.Max(worst, math.Abs(lp[e.ID]-e.Logprob))
					}
				}
				if c.exactGreed {
					got, _ := generate(t, s, p.PromptTokens, Params{MaxTokens: len(p.OutputTokens)})
					if !slices.Equal(got, p.OutputTokens) {
						t.Errorf("%q greedy\n got %v\nwant %v", p.Prompt, got, p.OutputTokens)
					}
				}
			}
			t.Logf("argmax agrees at %d/%d positions; max |Δ logprob| over the top 10 = %.2g", agree, positions, worst)
			if agree < c.minArgmax {
				t.Errorf("argmax agrees at %d/%d positions, want at least %d", agree, positions, c.minArgmax)
			}
			if worst > c.tol {
				t.Errorf("max |Δ logprob| = %g, want at most %g", worst, c.tol)
			}
		})
	}
}

// TestStoriesQuantised runs the quantised stories260K files: llama.cpp's
// Q8_0 greedy text equals the F32 one for "Once upon a time" (48 tokens),
// and Q4_0 agrees up to "...play outside in the" (shared/models/README.md).
func TestStoriesQuantised(t *testing.T) {
	var refs []greedyRef
	loadJSON(t, fixture.Path(t, "models/reference/greedy.json"), &refs)
	ref := refs[0]
	if ref.Prompt != "Once upon a time" {
		t.Fatalf("first reference prompt is %q", ref.Prompt)
	}
	cases := []struct {
		file   string
		prefix string // text the output must start with
	}{
		{"stories260K-Q8_0.gguf", ref.OutputText},
		{"stories260K-Q4_0.gguf", ref.OutputText[:strings.Index(ref.OutputText, "play outside in the")+len("play outside in the")]},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m := loadModel(t, fixture.Path(t, "models/"+c.file), Options{})
			got, _ := generate(t, m.NewSession(), ref.PromptTokens, Params{MaxTokens: len(ref.OutputTokens)})
			text := m.Tokenizer().Decode(got)
			if !strings.HasPrefix(text, c.prefix) {
				t.Errorf("output %q\ndoes not start with %q", text, c.prefix)
			}
		})
	}
}
