package synth

import (
	"bytes"
	"testing"

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
