package quant

// The float vector kernels in plain Go for the builds without assembly
// (other architectures, -tags purego): several accumulators, products
// and sums rounded separately. They sum in another order than the
// assembly and its twins (which fuse through math.FMA, slow where the
// compiler cannot use the instruction), so they agree with those to
// float32 rounding, not bit for bit.

func dotF32Plain(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := (*[4]float32)(a[i:]), (*[4]float32)(b[i:])
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func dotF16Plain(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	t := f16Table
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := (*[4]float32)(a[i:]), (*[4]uint16)(b[i:])
		s0 += x[0] * t[y[0]]
		s1 += x[1] * t[y[1]]
		s2 += x[2] * t[y[2]]
		s3 += x[3] * t[y[3]]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * t[b[i]]
	}
	return (s0 + s1) + (s2 + s3)
}

func scoresPlain(dst, q, k []float32, stride int) { scoresBy(dotF32Plain, dst, q, k, stride) }

func scoresF16Plain(dst, q []float32, k []uint16, stride int) {
	scoresBy(dotF16Plain, dst, q, k, stride)
}

func weightedSumPlain(out, w, v []float32, stride int) { weightedSumBy(axpyF32Go, out, w, v, stride) }

func weightedSumF16Plain(out, w []float32, v []uint16, stride int) {
	weightedSumBy(axpyF16Go, out, w, v, stride)
}

// scoresBy is Scores with dot for each cached key: dst[t] = dot(q, key t)
// for keys stride elements apart in k.
func scoresBy[K float32 | uint16](dot func([]float32, []K) float32, dst, q []float32, k []K, stride int) {
	for t := range dst {
		dst[t] = dot(q, k[t*stride:t*stride+len(q)])
	}
}

// weightedSumBy is WeightedSum with axpy for each cached value, in order
// of t.
func weightedSumBy[V float32 | uint16](axpy func([]float32, float32, []V), out, w []float32, v []V, stride int) {
	for t, a := range w {
		axpy(out, a, v[t*stride:t*stride+len(out)])
	}
}
