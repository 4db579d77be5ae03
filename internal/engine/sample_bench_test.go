package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchLogits are logits shaped like a language model's next-token output:
// a Gaussian bulk (σ 2) and a few tokens well above it (+8 to +14), so
// the most likely token holds a sizeable share but the tail still matters:
// top-p 0.9 needs a few thousand tokens at these vocabularies.
func benchLogits(vocab int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	l := make([]float32, vocab)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 2)
	}
	for j := 0; j < 10; j++ {
		l[r.IntN(vocab)] = 8 + float32(r.Float64()*6)
	}
	return l
}

// BenchmarkSample is one token's sampling at the vocabularies of
// LLaMA 2 (32000) and Qwen2 (151936), for the server's default (temperature
// 1, nothing else), top-k 40 and top-p 0.9.
func BenchmarkSample(b *testing.B) {
	modes := []struct {
		name string
		p    Params
	}{
		{"default", Params{Temperature: 1}},
		{"top-k=40", Params{Temperature: 1, TopK: 40}},
		{"top-p=0.9", Params{Temperature: 1, TopP: 0.9}},
		{"top-k=40,top-p=0.9", Params{Temperature: 1, TopK: 40, TopP: 0.9}},
	}
	for _, vocab := range []int{32000, 151936} {
		logits := benchLogits(vocab)
		for _, m := range modes {
			b.Run(fmt.Sprintf("vocab=%d/%s", vocab, m.name), func(b *testing.B) {
				smp := newSampler(vocab)
				smp.seed(1)
				b.ReportAllocs()
				for b.Loop() {
					smp.sample(logits, &m.p, nil)
				}
			})
		}
	}
}
