package engine

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

func TestParseKVType(t *testing.T) {
	for in, want := range map[string]KVType{"": KVF32, "f32": KVF32, "F16": KVF16, " f16 ": KVF16} {
		if got, err := ParseKVType(in); err != nil || got != want {
			t.Errorf("ParseKVType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"q8_0", "fp16", "16"} {
		if _, err := ParseKVType(in); !errors.Is(err, ErrOption) {
			t.Errorf("ParseKVType(%q) error = %v, want ErrOption", in, err)
		}
	}
	if _, err := Load(t.Context(), Options{KVType: "bf16"}); !errors.Is(err, ErrOption) {
		t.Errorf("Load with KV type bf16: %v, want ErrOption", err)
	}
}

// TestKVF16Greedy runs every bundled reference prompt on stories260K with
// an f16 KV cache: the greedy output must equal llama.cpp's (which keeps
// an f16 cache by default) and the engine's own with an f32 cache.
func TestKVF16Greedy(t *testing.T) {
	var refs []greedyRef
	loadJSON(t, fixture.Path(t, "models/reference/greedy.json"), &refs)
	path := fixture.Path(t, "models/stories260K.gguf")
	m16 := loadModel(t, path, Options{KVType: KVF16})
	m32 := loadModel(t, path, Options{KVType: KVF32})
	if got := m16.Info().KVType; got != "f16" {
		t.Errorf("Info().KVType = %q, want f16", got)
	}
	for _, ref := range refs {
		got16, _ := generate(t, m16.NewSession(), ref.PromptTokens, Params{MaxTokens: len(ref.OutputTokens)})
		got32, _ := generate(t, m32.NewSession(), ref.PromptTokens, Params{MaxTokens: len(ref.OutputTokens)})
		if !slices.Equal(got16, ref.OutputTokens) {
			t.Errorf("%q with an f16 KV cache:\n got %v\nwant %v", ref.Prompt, got16, ref.OutputTokens)
		}
		if !slices.Equal(got16, got32) {
			t.Errorf("%q: f16 KV cache gives %v, f32 %v", ref.Prompt, got16, got32)
		}
	}
}

// TestKVF16SynthFixtures compares the engine with an f16 KV cache against
// llama.cpp's default (f16 cache) references of the F32 synthetic models,
// teacher-forced: the argmax everywhere and the top-10 log-probabilities
// close. Measured: max |Δ logprob| 0.0022 on both (the engine with an f32
// cache is 0.014 from these references); what remains is llama.cpp's own
// order of operations (its CPU flash attention, on by default, also keeps
// the weighted sum of V in f16).
func TestKVF16SynthFixtures(t *testing.T) {
	type ref struct {
		Prompts []synthPrompt `json:"prompts"` // llama.cpp's default f16 KV cache
	}
	for _, file := range []string{"synth-llama-256", "synth-qwen2-256"} {
		t.Run(file, func(t *testing.T) {
			var r ref
			loadJSON(t, fixture.Path(t, "models/synth/"+file+".json"), &r)
			m := loadModel(t, fixture.Path(t, "models/synth/"+file+".gguf"), Options{Ctx: 512, KVType: KVF16})
			s := m.NewSession()
			agree, positions, worst := 0, 0, 0.0
			for _, p := range r.Prompts {
				seq := append(slices.Clone(p.PromptTokens), p.OutputTokens...)
				logits, err := s.Logits(seq[:len(seq)-1])
				if err != nil {
					t.Fatal(err)
				}
				for i, top := range p.TopProbs {
					l := logits[len(p.PromptTokens)-1+i]
					lp := logSoftmax(l)
					positions++
					if int32(argmax(l)) == top[0].ID {
						agree++
					}
					for _, e := range top {
						worst = math.Max(worst, math.Abs(lp[e.ID]-e.Logprob))
					}
				}
			}
			t.Logf("argmax agrees at %d/%d positions; max |Δ logprob| over the top 10 = %.2g", agree, positions, worst)
			if agree != positions || worst > 4e-3 {
				t.Errorf("argmax agrees at %d/%d positions, max |Δ logprob| %g (want all, at most 4e-3)", agree, positions, worst)
			}
		})
	}
}

// TestKVF16Memory checks that an f16 cache halves the KV part of the
// memory estimate, and that the estimate is what a session allocates.
func TestKVF16Memory(t *testing.T) {
	path := fixture.Path(t, "models/stories260K.gguf")
	m16 := loadModel(t, path, Options{KVType: KVF16, Threads: 2, BatchSize: 8})
	m32 := loadModel(t, path, Options{KVType: KVF32, Threads: 2, BatchSize: 8})
	mem16, mem32 := m16.Info().Memory, m32.Info().Memory
	if mem16.KVCache == 0 || 2*mem16.KVCache != mem32.KVCache {
		t.Errorf("KV cache: f16 %d bytes, f32 %d: want exactly half", mem16.KVCache, mem32.KVCache)
	}
	c := m16.Config()
	st := m16.NewSession().st
	if len(st.kCache) != 0 || len(st.vCache) != 0 {
		t.Errorf("f16 session holds an f32 cache too")
	}
	if got := uint64(2 * (len(st.kCache16) + len(st.vCache16))); got != mem16.KVCache {
		t.Errorf("f16 session's cache is %d bytes, estimate %d", got, mem16.KVCache)
	}
	f32s := len(st.x) + len(st.xb) + len(st.q) + len(st.att) + len(st.hb) + len(st.hb2) + len(st.logits) + len(st.scratch) + len(st.kNew) + len(st.vNew)
	if got := 4*uint64(f32s) + uint64(len(st.xq)); got != mem16.Buffers {
		t.Errorf("f16 session's buffers are %d bytes, estimate %d", got, mem16.Buffers)
	}
	if len(st.kNew) != 8*c.KVDim() {
		t.Errorf("new-key buffer holds %d elements, want batch 8 × kv_dim %d", len(st.kNew), c.KVDim())
	}
	if mem16.Total != mem16.Weights+mem16.Decoded+mem16.Rope+mem16.KVCache+mem16.Buffers {
		t.Errorf("memory = %+v", mem16)
	}
}
