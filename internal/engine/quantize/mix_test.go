package quantize

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// TestMixMatchesLlamaCpp quantises the F32 synth fixtures to Q4_K_M and
// compares the result, tensor by tensor (by name: llama-quantize reorders
// tensors), with the Q4_K_M files llama.cpp's llama-quantize made of the
// same F32 files: the same type for every tensor, the same bytes for
// every tensor (the quantisers are ports of ggml's reference ones), and
// the same general.file_type.
func TestMixMatchesLlamaCpp(t *testing.T) {
	mix, ok := LookupMix("q4_k_m")
	if !ok {
		t.Fatal("no Q4_K_M mixture")
	}
	for _, name := range []string{"synth-llama-256", "synth-qwen2-256"} {
		t.Run(name, func(t *testing.T) {
			src := fixture.Path(t, "models/synth/"+name+".gguf")
			ref := openGGUF(t, fixture.Path(t, "models/synth/"+name+"-Q4_K_M.gguf"))
			out, res := quantizeTo(t, src, Options{Mix: mix})
			got := openGGUF(t, out)
			if len(got.Tensors) != len(ref.Tensors) {
				t.Fatalf("%d tensors, llama.cpp wrote %d", len(got.Tensors), len(ref.Tensors))
			}
			raised := 0
			for _, g := range got.Tensors {
				r, ok := ref.Tensor(g.Name)
				if !ok {
					t.Errorf("%s: not in llama.cpp's file", g.Name)
					continue
				}
				if g.Type != r.Type {
					t.Errorf("%s: %v, llama.cpp made %v", g.Name, g.Type, r.Type)
					continue
				}
				if g.Type == quant.Q6_K {
					raised++
				}
				if !bytes.Equal(g.Data, r.Data) {
					t.Errorf("%s (%v): data differs from llama.cpp's", g.Name, g.Type)
				}
			}
			if raised != 3 {
				t.Errorf("%d Q6_K tensors, want 3 (output, blk.1.attn_v, blk.1.ffn_down)", raised)
			}
			want, _ := ref.Uint("general.file_type")
			if ft, _ := got.Uint("general.file_type"); ft != want || uint64(res.Plan.FileType) != want {
				t.Errorf("general.file_type %d (plan %d), llama.cpp wrote %d", ft, res.Plan.FileType, want)
			}
		})
	}
}

// mixRef is testdata/mix-qwen2-192x8-Q4_K_M.json, written by
// testdata/mixref/mixref.sh.
type mixRef struct {
	SourceSHA   map[string]string `json:"source_tensor_sha256"`
	FileType    uint64            `json:"general_file_type"`
	TensorTypes map[string]string `json:"tensor_types"`
	TensorSHA   map[string]string `json:"tensor_sha256"`
	Q5KM        struct {
		FileType    uint64            `json:"general_file_type"`
		TensorTypes map[string]string `json:"tensor_types"`
		TensorSHA   map[string]string `json:"tensor_sha256"`
	} `json:"q5_k_m"`
	Prompts []struct {
		Prompt       string  `json:"prompt"`
		PromptTokens []int32 `json:"prompt_tokens"`
		OutputTokens []int32 `json:"output_tokens"`
		// TopProbs[i] is llama.cpp's top 10 at generated position i, or
		// nil where llama-server did not report one (a byte token that
		// leaves a UTF-8 character unfinished).
		TopProbs [][]struct {
			ID      int32   `json:"id"`
			Logprob float64 `json:"logprob"`
		} `json:"top_probs"`
	} `json:"prompts"`
}

// mixRefSpec is the F32 source of mixRef: the qwen2 shape of the 0.5B
// preset in small (rows of 192, like its 896, are not a multiple of 256;
// ffn_down's rows of 512, like its 4864, are), with 8 layers so that
// llama.cpp's choice of layers for Q6_K is not trivial.
var mixRefSpec = synth.Spec{Arch: "qwen2", Dim: 192, Layers: 8, Heads: 6, KVHeads: 2, FFN: 512, Vocab: 512, Ctx: 512, Type: quant.F32, Seed: 7}

// TestMixFallbackAgrees quantises a model whose rows do not fit Q4_K's
// blocks to Q4_K_M (and Q5_K_M) and compares it with what llama.cpp made
// of the same F32 file: every tensor's type (Q5_0 and Q8_0 fallbacks, Q6_K
// and Q4_K on ffn_down; Q5_1 for Q5_K_M) and bytes must be llama.cpp's,
// and the engine, running the
// file, must agree with llama-server's greedy run teacher-forced: the
// argmax and the top-10 log-probabilities at every generated position.
func TestMixFallbackAgrees(t *testing.T) {
	var ref mixRef
	raw, err := os.ReadFile("testdata/mix-qwen2-192x8-Q4_K_M.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	src := synthFile(t, mixRefSpec)
	for _, ti := range openGGUF(t, src).Tensors {
		if got := sha(ti.Data); got != ref.SourceSHA[ti.Name] {
			t.Fatalf("synth wrote %s differently from the file llama.cpp quantised (sha256 %s, want %s): the reference no longer applies", ti.Name, got, ref.SourceSHA[ti.Name])
		}
	}
	mix, _ := LookupMix("Q4_K_M")
	out, res := quantizeTo(t, src, Options{Mix: mix})
	f := openGGUF(t, out)
	if len(f.Tensors) != len(ref.TensorTypes) {
		t.Fatalf("%d tensors, llama.cpp wrote %d", len(f.Tensors), len(ref.TensorTypes))
	}
	count := map[quant.Type]int{}
	for _, ti := range f.Tensors {
		count[ti.Type]++
		if want := ref.TensorTypes[ti.Name]; ti.Type.String() != want {
			t.Errorf("%s: %v, llama.cpp made %s", ti.Name, ti.Type, want)
		} else if sha(ti.Data) != ref.TensorSHA[ti.Name] {
			t.Errorf("%s (%v): bytes differ from llama.cpp's", ti.Name, ti.Type)
		}
	}
	// output and attn_v of layers 0, 3, 6, 7 are Q8_0 (Q6_K fallbacks);
	// ffn_down of the same layers Q6_K, of the others Q4_K.
	if want := map[quant.Type]int{quant.Q8_0: 5, quant.Q6_K: 4, quant.Q4_K: 4, quant.Q5_0: 45, quant.F32: 41}; !reflect.DeepEqual(count, want) {
		t.Errorf("types %v, want %v", count, want)
	}
	if uint64(res.Plan.FileType) != ref.FileType {
		t.Errorf("general.file_type %d, llama.cpp wrote %d", res.Plan.FileType, ref.FileType)
	}

	// Q5_K_M: Q5_K falls back to Q5_1.
	mix5, _ := LookupMix("Q5_K_M")
	out5, res5 := quantizeTo(t, src, Options{Mix: mix5})
	n5 := 0
	for _, ti := range openGGUF(t, out5).Tensors {
		if want := ref.Q5KM.TensorTypes[ti.Name]; ti.Type.String() != want {
			t.Errorf("Q5_K_M %s: %v, llama.cpp made %s", ti.Name, ti.Type, want)
		} else if sha(ti.Data) != ref.Q5KM.TensorSHA[ti.Name] {
			t.Errorf("Q5_K_M %s (%v): bytes differ from llama.cpp's", ti.Name, ti.Type)
		}
		if ti.Type == quant.Q5_1 {
			n5++
		}
	}
	if n5 != 45 || uint64(res5.Plan.FileType) != ref.Q5KM.FileType || len(ref.Q5KM.TensorTypes) != len(f.Tensors) {
		t.Errorf("Q5_K_M: %d Q5_1 tensors (want 45), file type %d (llama.cpp %d)", n5, res5.Plan.FileType, ref.Q5KM.FileType)
	}

	m := loadModel(t, out, engine.Options{Ctx: 512})
	agree, positions, worst := 0, 0, 0.0
	for _, p := range ref.Prompts {
		if got := m.Tokenizer().Encode(p.Prompt, true, false); !slices.Equal(got, p.PromptTokens) {
			t.Fatalf("%q tokenizes to %v, llama.cpp %v", p.Prompt, got, p.PromptTokens)
		}
		seq := append(slices.Clone(p.PromptTokens), p.OutputTokens...)
		logits, err := m.NewSession().Logits(seq[:len(seq)-1])
		if err != nil {
			t.Fatal(err)
		}
		for i, tok := range p.OutputTokens {
			l := logits[len(p.PromptTokens)-1+i]
			positions++
			if argmax(l) == tok {
				agree++
			} else {
				lp := logSoftmax(l)
				t.Logf("%q position %d: argmax %d, llama.cpp %d (here %.3f apart in log-probability)", p.Prompt, i, argmax(l), tok, lp[argmax(l)]-lp[tok])
			}
			lp := logSoftmax(l)
			for _, e := range p.TopProbs[i] {
				worst = max(worst, math.Abs(lp[e.ID]-e.Logprob))
			}
		}
	}
	t.Logf("argmax agrees at %d/%d positions; max |Δ logprob| over the top 10 = %.3g", agree, positions, worst)
	// Measured: 47/48 and 0.374, then 46/48 and 0.381 after main's
	// prefill kernels; the misses are near ties (here 0.053 and 0.017
	// apart; llama.cpp's top two 0.138 apart at the first). The F32
	// source, unquantised, gives 36/48 and 3.29 against the same
	// reference, so the bounds still tell the mixture from its source.
	if agree < positions-3 {
		t.Errorf("argmax agrees at %d/%d positions, want at least %d", agree, positions, positions-3)
	}
	if worst > 0.45 {
		t.Errorf("max |Δ logprob| = %g, want at most 0.45", worst)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// logSoftmax returns the log-probabilities of logits, in float64.
func logSoftmax(logits []float32) []float64 {
	mx := math.Inf(-1)
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

// TestMixTied: with tied embeddings (no output.weight), llama.cpp treats
// token_embd as the output projection: Q6_K in Q4_K_M, Q8_0 when its rows
// do not fit 256.
func TestMixTied(t *testing.T) {
	mix, _ := LookupMix("Q4_K_M")
	for _, c := range []struct {
		dim  int
		want quant.Type
	}{{256, quant.Q6_K}, {192, quant.Q8_0}} {
		sp := synth.Spec{Arch: "llama", Dim: c.dim, Layers: 1, Heads: 4, FFN: 256, Vocab: 300, Ctx: 16, Type: quant.F32, Tied: true}
		_, res := quantizeTo(t, synthFile(t, sp), Options{Mix: mix})
		for _, p := range res.Plan.Tensors {
			if p.Name == "token_embd.weight" && p.To != c.want {
				t.Errorf("dim %d: tied token_embd is %v, want %v", c.dim, p.To, c.want)
			}
		}
	}
}

// TestFileContextCancelled: a cancelled quantisation returns the
// context's error and leaves neither the output nor its temporary file.
func TestFileContextCancelled(t *testing.T) {
	in := synthFile(t, quantSpec)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := FileContext(ctx, in, filepath.Join(dir, "out.gguf"), Options{Type: quant.Q4_K})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v in the output directory", entries)
	}
}
