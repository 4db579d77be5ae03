package synth

import (
	"bytes"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

func TestSynthDeterministic(t *testing.T) {
	spec := Spec{Arch: "llama", Dim: 32, Layers: 1, Heads: 2, FFN: 64, Vocab: 270, Ctx: 16, Type: quant.Q8_0, Seed: 5}
	var a, b, c bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		if err := Write(buf, spec); err != nil {
			t.Fatal(err)
		}
	}
	spec.Seed = 6
	if err := Write(&c, spec); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same seed gave different files")
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) || a.Len() != c.Len() {
		t.Errorf("seeds 5 and 6: equal %v, sizes %d and %d; want different content of the same size", bytes.Equal(a.Bytes(), c.Bytes()), a.Len(), c.Len())
	}
}

func TestSynthRejects(t *testing.T) {
	good := Spec{Arch: "llama", Dim: 64, Layers: 1, Heads: 4, FFN: 64, Vocab: 300, Ctx: 16, Type: quant.F32}
	cases := []struct {
		name   string
		change func(*Spec)
	}{
		{"arch", func(s *Spec) { s.Arch = "gpt2" }},
		{"small vocab", func(s *Spec) { s.Vocab = 100 }},
		{"uneven heads", func(s *Spec) { s.Heads = 5 }},
		{"kv heads", func(s *Spec) { s.KVHeads = 3 }},
		{"block size", func(s *Spec) { s.Type = quant.Q4_K }},
		{"zero layers", func(s *Spec) { s.Layers = 0 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sp := good
			c.change(&sp)
			if err := Write(&bytes.Buffer{}, sp); err == nil {
				t.Errorf("Write(%+v) succeeded", sp)
			}
		})
	}
	if err := Write(&bytes.Buffer{}, good); err != nil {
		t.Errorf("good spec: %v", err)
	}
}

// TestPreset1B: the 1b preset is Llama 3.2 1B's shape, with its
// parameter count, and a one-layer cut of it writes a file with GQA
// shapes (K and V of 8 heads × 64), no output.weight (tied), and as many
// weights as Params counts.
func TestPreset1B(t *testing.T) {
	sp, ok := Presets["1b"]
	if !ok {
		t.Fatal("no 1b preset")
	}
	want := Spec{Arch: "llama", Dim: 2048, Layers: 16, Heads: 32, KVHeads: 8, FFN: 8192, Vocab: 128256, Ctx: 4096, Tied: true}
	if sp != want {
		t.Errorf("1b preset %+v, want %+v", sp, want)
	}
	if n := sp.Params(); n != 1_235_814_400 {
		t.Errorf("1b preset has %d parameters, want Llama 3.2 1B's 1235814400", n)
	}
	for _, name := range PresetNames() {
		if _, ok := Presets[name]; !ok {
			t.Errorf("PresetNames lists %q, which is not a preset", name)
		}
	}
	if len(PresetNames()) != len(Presets) {
		t.Errorf("PresetNames lists %d of %d presets", len(PresetNames()), len(Presets))
	}
	sp.Layers, sp.Vocab, sp.FFN, sp.Type = 1, 300, 256, quant.Q4_K // small enough to write in a test
	var buf bytes.Buffer
	if err := Write(&buf, sp); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Tensor("output.weight"); ok {
		t.Error("tied model has output.weight")
	}
	var params uint64
	for _, ti := range f.Tensors {
		params += ti.Elements()
	}
	if params != uint64(sp.Params()) {
		t.Errorf("file holds %d parameters, Params says %d", params, sp.Params())
	}
	for name, dims := range map[string][]uint64{
		"blk.0.attn_q.weight": {2048, 2048}, "blk.0.attn_k.weight": {2048, 512}, "blk.0.attn_v.weight": {2048, 512},
		"blk.0.ffn_up.weight": {2048, 256}, "blk.0.ffn_down.weight": {256, 2048}, "token_embd.weight": {2048, 300},
	} {
		ti, ok := f.Tensor(name)
		if !ok || !slices.Equal(ti.Dims, dims) || ti.Type != quant.Q4_K {
			t.Errorf("%s: %v, want %v Q4_K", name, ti, dims)
		}
	}
	if n, _ := f.Uint("llama.attention.head_count_kv"); n != 8 {
		t.Errorf("head_count_kv %d, want 8", n)
	}
}
