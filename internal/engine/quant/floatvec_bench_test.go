package quant

import (
	"fmt"
	"testing"
)

// BenchmarkAttentionHead runs one head's attention kernels (scores against
// pos cached keys of 64 floats, then the weighted sum of as many values,
// rows 768 floats apart as in a 125M model's cache) through the dispatched
// kernels and through the plain Go ones (what -tags purego runs), in one
// run: compare the ns/op.
func BenchmarkAttentionHead(b *testing.B) {
	const hd, stride = 64, 768
	for _, pos := range []int{128, 1024} {
		q, out, sc := make([]float32, hd), make([]float32, hd), make([]float32, pos)
		k, v := make([]float32, pos*stride), make([]float32, pos*stride)
		k16, v16 := make([]uint16, pos*stride), make([]uint16, pos*stride)
		for i := range k {
			k[i], v[i] = float32(i%13)/13, float32(i%7)/7
			k16[i], v16[i] = f32ToF16(k[i]), f32ToF16(v[i])
		}
		for i := range q {
			q[i] = float32(i%5) / 5
		}
		for _, c := range []struct {
			name string
			run  func()
		}{
			{"f32", func() { Scores(sc, q, k, stride); WeightedSum(out, sc, v, stride) }},
			{"f32-plain", func() { scoresPlain(sc, q, k, stride); weightedSumPlain(out, sc, v, stride) }},
			{"f16", func() { ScoresF16(sc, q, k16, stride); WeightedSumF16(out, sc, v16, stride) }},
			{"f16-plain", func() { scoresF16Plain(sc, q, k16, stride); weightedSumF16Plain(out, sc, v16, stride) }},
		} {
			b.Run(fmt.Sprintf("pos=%d/%s", pos, c.name), func(b *testing.B) {
				for b.Loop() {
					c.run()
				}
			})
		}
	}
}
