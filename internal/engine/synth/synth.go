// Package synth writes synthetic llama-family GGUF models of any shape
// (tokenpulse model synth): seeded random weights of one type and a
// byte-level SentencePiece vocabulary, for benchmarks and tests that need
// a model of a given size without downloading one. It writes files; the
// engine, which loads them, does not import it.
package synth

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/limits"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// Spec is the shape of a synthesised model.
type Spec struct {
	Arch    string     // "llama" or "qwen2" (adds q/k/v biases, NEOX rope)
	Dim     int        // embedding width
	Layers  int        // transformer blocks
	Heads   int        // query heads
	KVHeads int        // key/value heads; 0 means Heads
	FFN     int        // SwiGLU hidden width
	Vocab   int        // vocabulary size, at least 259 (3 control + 256 byte tokens)
	Ctx     int        // context length written to the file
	Type    quant.Type // type of every 2-D weight; norms and biases stay F32
	Seed    uint64     // the same seed gives the same file
	// Tied leaves out output.weight: the output projection is token_embd,
	// as in Llama 3.2 1B and Qwen2 0.5B.
	Tied bool
}

// Presets are named shapes of real models (with Type and Seed left for
// the caller): "125m" (llama, GPT-2 small's size), "0.5b" (Qwen2 0.5B:
// rows of 896, not a multiple of 256, and 2 KV heads) and "1b" (Llama 3.2
// 1B: dim 2048, 16 layers, GQA 32/8, ffn 8192, 128256-token vocabulary,
// tied embeddings; 1.24 billion parameters).
var Presets = map[string]Spec{
	"125m": {Arch: "llama", Dim: 768, Layers: 12, Heads: 12, KVHeads: 12, FFN: 3072, Vocab: 32000, Ctx: 2048},
	"0.5b": {Arch: "qwen2", Dim: 896, Layers: 24, Heads: 14, KVHeads: 2, FFN: 4864, Vocab: 151936, Ctx: 4096},
	"1b":   {Arch: "llama", Dim: 2048, Layers: 16, Heads: 32, KVHeads: 8, FFN: 8192, Vocab: 128256, Ctx: 4096, Tied: true},
}

// PresetNames lists the presets' names, smallest first.
func PresetNames() []string { return []string{"125m", "0.5b", "1b"} }

// Params returns the number of weights (every tensor's elements) a model
// of this shape has.
func (sp Spec) Params() int64 {
	kv := sp.KVHeads
	if kv == 0 {
		kv = sp.Heads
	}
	hd := int64(sp.Dim / max(sp.Heads, 1))
	d, qd, kvd, ffn := int64(sp.Dim), int64(sp.Heads)*hd, int64(kv)*hd, int64(sp.FFN)
	layer := 2*d + d*qd + 2*d*kvd + qd*d + 3*d*ffn
	if sp.Arch == "qwen2" {
		layer += qd + 2*kvd
	}
	n := int64(sp.Layers)*layer + int64(sp.Vocab)*d + d
	if !sp.Tied {
		n += int64(sp.Vocab) * d
	}
	return n
}

// MinVocab is the smallest vocabulary: <unk>, <s>, </s> and 256 bytes.
const MinVocab = 3 + 256

func (sp *Spec) validate() (*quant.Kernel, error) {
	if sp.KVHeads == 0 {
		sp.KVHeads = sp.Heads
	}
	if sp.Arch != "llama" && sp.Arch != "qwen2" {
		return nil, fmt.Errorf("engine: synth: architecture %q, want llama or qwen2", sp.Arch)
	}
	switch {
	case sp.Dim <= 0 || sp.Dim > limits.MaxDim, sp.Layers <= 0 || sp.Layers > limits.MaxLayers,
		sp.Heads <= 0 || sp.Heads > limits.MaxHeads, sp.KVHeads <= 0, sp.FFN <= 0 || sp.FFN > limits.MaxFFN,
		sp.Ctx <= 0 || sp.Ctx > limits.MaxCtx:
		return nil, fmt.Errorf("engine: synth: dimensions out of range: %+v", *sp)
	case sp.Vocab < MinVocab || sp.Vocab > limits.MaxVocab:
		return nil, fmt.Errorf("engine: synth: vocabulary %d, want %d..%d", sp.Vocab, MinVocab, limits.MaxVocab)
	case sp.Dim%sp.Heads != 0 || sp.Heads%sp.KVHeads != 0 || (sp.Dim/sp.Heads)%2 != 0:
		return nil, fmt.Errorf("engine: synth: %d dims, %d heads, %d KV heads do not divide evenly into even-sized heads", sp.Dim, sp.Heads, sp.KVHeads)
	}
	k, err := quant.Lookup(sp.Type)
	if err != nil {
		return nil, fmt.Errorf("engine: synth: %w", err)
	}
	if k.Quantize == nil {
		return nil, fmt.Errorf("engine: synth: type %v cannot be quantised: %w", sp.Type, quant.ErrUnsupported)
	}
	if sp.Dim%k.BlockSize != 0 || sp.FFN%k.BlockSize != 0 {
		return nil, fmt.Errorf("engine: synth: dim %d and ffn %d must be multiples of %v's block of %d", sp.Dim, sp.FFN, sp.Type, k.BlockSize)
	}
	return k, nil
}

// Synth writes to w a GGUF model of the given shape with seeded random
// weights and a byte-level SentencePiece vocabulary (control tokens, the
// 256 byte tokens, then letter pieces), so any text tokenizes. Its output
// is gibberish, but it has the size, memory traffic and arithmetic of a
// real model of that shape, which is what benchmarks need.
func Write(w io.Writer, sp Spec) error {
	k, err := sp.validate()
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(sp.Seed, 0x5eed))
	var g gguf.Writer
	a := sp.Arch
	g.Add("general.architecture", a)
	g.Add("general.name", fmt.Sprintf("synth-%s-%d", a, sp.Dim))
	g.Add(a+".context_length", uint32(sp.Ctx))
	g.Add(a+".embedding_length", uint32(sp.Dim))
	g.Add(a+".block_count", uint32(sp.Layers))
	g.Add(a+".feed_forward_length", uint32(sp.FFN))
	g.Add(a+".attention.head_count", uint32(sp.Heads))
	g.Add(a+".attention.head_count_kv", uint32(sp.KVHeads))
	g.Add(a+".rope.dimension_count", uint32(sp.Dim/sp.Heads))
	g.Add(a+".rope.freq_base", float32(10000))
	g.Add(a+".attention.layer_norm_rms_epsilon", float32(1e-5))
	g.Add(a+".vocab_size", uint32(sp.Vocab))
	tokens, scores, types := Vocab(sp.Vocab)
	g.Add("tokenizer.ggml.model", "llama")
	g.Add("tokenizer.ggml.tokens", tokens)
	g.Add("tokenizer.ggml.scores", scores)
	g.Add("tokenizer.ggml.token_type", types)
	g.Add("tokenizer.ggml.unknown_token_id", uint32(0))
	g.Add("tokenizer.ggml.bos_token_id", uint32(1))
	g.Add("tokenizer.ggml.eos_token_id", uint32(2))
	g.Add("tokenizer.ggml.add_bos_token", true)

	hd := sp.Dim / sp.Heads
	qd, kvd := sp.Heads*hd, sp.KVHeads*hd
	mat := func(name string, rows, cols int, scale float64) {
		g.AddTensorFunc(name, sp.Type, []uint64{uint64(cols), uint64(rows)}, func() ([]byte, error) {
			rb, err := quant.RowBytes(sp.Type, cols)
			if err != nil {
				return nil, err
			}
			out := make([]byte, rows*rb)
			row := make([]float32, cols)
			for r := 0; r < rows; r++ {
				for i := range row {
					row[i] = float32(rng.NormFloat64() * scale)
				}
				k.Quantize(out[r*rb:(r+1)*rb], row)
			}
			return out, nil
		})
	}
	vec := func(name string, n int, scale float64) {
		g.AddTensorFunc(name, quant.F32, []uint64{uint64(n)}, func() ([]byte, error) {
			v := make([]float32, n)
			for i := range v {
				v[i] = 1
				if scale != 0 {
					v[i] = float32(rng.NormFloat64() * scale)
				}
			}
			out := make([]byte, 4*n)
			for i, x := range v {
				putF32(out[4*i:], x)
			}
			return out, nil
		})
	}
	mat("token_embd.weight", sp.Vocab, sp.Dim, 0.05)
	for l := 0; l < sp.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		vec(p+"attn_norm.weight", sp.Dim, 0)
		mat(p+"attn_q.weight", qd, sp.Dim, 1.4/math.Sqrt(float64(sp.Dim)))
		mat(p+"attn_k.weight", kvd, sp.Dim, 1.4/math.Sqrt(float64(sp.Dim)))
		mat(p+"attn_v.weight", kvd, sp.Dim, 1/math.Sqrt(float64(sp.Dim)))
		if a == "qwen2" {
			vec(p+"attn_q.bias", qd, 0.2)
			vec(p+"attn_k.bias", kvd, 0.2)
			vec(p+"attn_v.bias", kvd, 0.2)
		}
		mat(p+"attn_output.weight", sp.Dim, qd, 0.5/math.Sqrt(float64(qd)))
		vec(p+"ffn_norm.weight", sp.Dim, 0)
		mat(p+"ffn_gate.weight", sp.FFN, sp.Dim, 1/math.Sqrt(float64(sp.Dim)))
		mat(p+"ffn_up.weight", sp.FFN, sp.Dim, 1/math.Sqrt(float64(sp.Dim)))
		mat(p+"ffn_down.weight", sp.Dim, sp.FFN, 0.5/math.Sqrt(float64(sp.FFN)))
	}
	vec("output_norm.weight", sp.Dim, 0)
	if !sp.Tied {
		mat("output.weight", sp.Vocab, sp.Dim, 4/math.Sqrt(float64(sp.Dim)))
	}
	if _, err := g.WriteTo(w); err != nil {
		return fmt.Errorf("engine: synth: %w", err)
	}
	return nil
}

func putF32(b []byte, v float32) {
	u := math.Float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

// Vocab builds a SentencePiece vocabulary of n tokens: <unk>, <s>,
// </s>, the 256 byte tokens, then printable characters, "▁"-prefixed
// letters and ever longer lowercase pieces, each reachable by merging two
// shorter ones. Types follow llama.cpp: 1 normal, 2 unknown, 3 control,
// 6 byte.
func Vocab(n int) (tokens []string, scores []float32, types []int32) {
	add := func(s string, typ int32) bool {
		if len(tokens) >= n {
			return false
		}
		tokens = append(tokens, s)
		scores = append(scores, -float32(len(tokens)))
		types = append(types, typ)
		return true
	}
	add("<unk>", 2)
	add("<s>", 3)
	add("</s>", 3)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), 6)
	}
	seen := map[string]bool{}
	piece := func(s string) bool {
		if seen[s] {
			return len(tokens) < n
		}
		seen[s] = true
		return add(s, 1)
	}
	const space = "\u2581"
	letters := "abcdefghijklmnopqrstuvwxyz"
	if !piece(space) {
		return
	}
	for c := byte('!'); c <= '~'; c++ {
		if !piece(string(c)) {
			return
		}
	}
	for _, c := range letters + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" {
		if !piece(space + string(c)) {
			return
		}
	}
	// Longer pieces: every lowercase piece of the previous length extended
	// by one letter, then the same with the "▁" prefix.
	prev := []string{""}
	for len(tokens) < n {
		var next []string
		for _, p := range prev {
			for _, c := range letters {
				next = append(next, p+string(c))
			}
		}
		for _, p := range next {
			if len(p) > 1 && !piece(p) {
				return
			}
		}
		for _, p := range next {
			if len(p) > 1 && !piece(space+p) {
				return
			}
		}
		prev = next
	}
	return
}
