package engine

import (
	"bytes"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
)

func synthFile(t testing.TB, sp synth.Spec) string {
	t.Helper()
	var buf bytes.Buffer
	if err := synth.Write(&buf, sp); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "synth.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSynth(t *testing.T) {
	cases := []struct {
		name string
		spec synth.Spec
	}{
		{"llama-F32", synth.Spec{Arch: "llama", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 128, Vocab: 300, Ctx: 64, Type: quant.F32, Seed: 1}},
		{"qwen2-Q8_0", synth.Spec{Arch: "qwen2", Dim: 64, Layers: 2, Heads: 4, KVHeads: 1, FFN: 96, Vocab: 1000, Ctx: 64, Type: quant.Q8_0, Seed: 2}},
		{"llama-Q4_K", synth.Spec{Arch: "llama", Dim: 256, Layers: 1, Heads: 8, FFN: 512, Vocab: 2000, Ctx: 32, Type: quant.Q4_K, Seed: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := synthFile(t, c.spec)
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if w, _ := f.Tensor("blk.0.ffn_up.weight"); w.Type != c.spec.Type {
				t.Errorf("ffn_up type = %v, want %v", w.Type, c.spec.Type)
			}
			m := loadModel(t, path, Options{})
			cfg := m.Config()
			if cfg.Dim != c.spec.Dim || cfg.Layers != c.spec.Layers || cfg.Vocab != c.spec.Vocab || m.Ctx() != c.spec.Ctx {
				t.Errorf("config = %+v, ctx %d; spec %+v", cfg, m.Ctx(), c.spec)
			}
			if got, want := cfg.RopeNeox, c.spec.Arch == "qwen2"; got != want {
				t.Errorf("neox = %v, want %v", got, want)
			}
			text := "héllo, wörld! 日本 \x01 tokens"
			ids := m.Tokenizer().Encode(text, true, false)
			if got := m.Tokenizer().Decode(ids[1:]); got != " "+text { // SentencePiece adds a space prefix
				t.Errorf("decode(encode(%q)) = %q", text, got)
			}
			got, res := generate(t, m.NewSession(), ids, Params{MaxTokens: 5, Temperature: 1, Seed: 3})
			if res.StopReason == "length" && len(got) != 5 {
				t.Errorf("generated %d tokens, want 5", len(got))
			}
		})
	}
}

// TestThreadsAgree checks that the worker pool changes nothing: every row
// is computed by one dot product whichever worker runs it, so logits are
// bit-identical with 1 and 3 threads and with prefill batches of 1, 7 and 64.
func TestThreadsAgree(t *testing.T) {
	path := synthFile(t, synth.Spec{Arch: "qwen2", Dim: 256, Layers: 2, Heads: 8, KVHeads: 2, FFN: 512, Vocab: 600, Ctx: 64, Type: quant.Q8_0, Seed: 9})
	prompt := []int32{1, 300, 301, 302, 400, 500, 599, 260, 270, 280, 290}
	var ref []float32
	for _, opts := range []Options{{Threads: 1, BatchSize: 1}, {Threads: 3, BatchSize: 1}, {Threads: 3, BatchSize: 7}, {Threads: 2, BatchSize: 64}} {
		m := loadModel(t, path, opts)
		s := m.NewSession()
		for pos := 0; pos < len(prompt); pos += m.batch {
			m.forward(s.st, prompt[pos:min(pos+m.batch, len(prompt))], pos, pos+m.batch >= len(prompt), nil)
		}
		got := slices.Clone(s.st.logits)
		if ref == nil {
			ref = got
			continue
		}
		var worst float64
		for i := range got {
			worst = max(worst, math.Abs(float64(got[i]-ref[i])))
		}
		// Quantised weights take one integer dot product per row and
		// input whatever the batch, so even batched prefill is exact.
		tol := 0.0
		if worst > tol {
			t.Errorf("%+v: logits differ from 1 thread by up to %g, want at most %g", opts, worst, tol)
		}
	}
}

// TestConfigFromMetadata checks the hyperparameters read from metadata:
// defaults, rope options, and rejection of hostile values.
func TestConfigFromMetadata(t *testing.T) {
	base := func(w *gguf.Writer, extra map[string]any) {
		w.Add("general.architecture", "llama")
		kv := map[string]any{
			"llama.embedding_length": uint32(64), "llama.block_count": uint32(1),
			"llama.attention.head_count": uint32(4), "llama.feed_forward_length": uint32(128),
		}
		for k, v := range extra {
			kv[k] = v
		}
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			if kv[k] != nil {
				w.Add(k, kv[k])
			}
		}
		w.AddTensor("token_embd.weight", quant.F32, []uint64{64, 10}, make([]byte, 64*10*4))
	}
	cases := []struct {
		name  string
		extra map[string]any
		check func(Config) bool
		ok    bool
	}{
		{"defaults", nil, func(c Config) bool {
			return c.KVHeads == 4 && c.HeadDim() == 16 && c.RopeDim == 16 && c.RopeBase == 10000 && c.RopeScale == 1 && c.CtxTrain == DefaultCtx && c.Vocab == 10 && !c.RopeNeox
		}, true},
		{"rope options", map[string]any{"llama.rope.freq_base": float32(500000), "llama.rope.scaling.type": "linear", "llama.rope.scaling.factor": float32(4), "llama.context_length": uint32(4096)},
			func(c Config) bool { return c.RopeBase == 500000 && c.RopeScale == 4 && c.CtxTrain == 4096 }, true},
		{"gqa", map[string]any{"llama.attention.head_count_kv": uint32(2)}, func(c Config) bool { return c.Group() == 2 && c.KVDim() == 32 }, true},
		{"missing dim", map[string]any{"llama.embedding_length": nil}, nil, false},
		{"zero heads", map[string]any{"llama.attention.head_count": uint32(0)}, nil, false},
		{"huge ctx", map[string]any{"llama.context_length": uint64(1 << 40)}, nil, false},
		{"kv heads not dividing", map[string]any{"llama.attention.head_count_kv": uint32(3)}, nil, false},
		{"yarn", map[string]any{"llama.rope.scaling.type": "yarn"}, nil, false},
		{"nan base", map[string]any{"llama.rope.freq_base": float32(math.NaN())}, nil, false},
		{"bad eps", map[string]any{"llama.attention.layer_norm_rms_epsilon": float32(-1)}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var w gguf.Writer
			base(&w, c.extra)
			var buf bytes.Buffer
			if _, err := w.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Parse(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := configFrom(f)
			if (err == nil) != c.ok {
				t.Fatalf("configFrom err = %v, want ok %v", err, c.ok)
			}
			if c.ok && !c.check(cfg) {
				t.Errorf("config = %+v", cfg)
			}
		})
	}
}
