package quant

import "math"

// This file holds the float vector kernels of attention and of the float
// weight types: dot products and "y += a·x" over float32 and binary16
// vectors. Each has a pure-Go twin (the ...Go functions) that sums in the
// same order as the assembly (eight lanes, four accumulators, the same
// final reduction), so the two agree to a rounding or two; the AVX2 ones
// are chosen at start-up where the CPU has AVX2, FMA and F16C, plain Go
// ones (floatvec_plain.go) otherwise.

// DotF32 returns the dot product of a and b[:len(a)].
func DotF32(a, b []float32) float32 {
	b = b[:len(a)]
	return dotF32Impl(a, b)
}

// AxpyF32 adds a·x[i] to y[i] for every i < len(y) (the product rounded
// to float32 before the addition, never fused).
func AxpyF32(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	axpyF32Impl(y, a, x)
}

// DotF16 returns the dot product of a and the binary16 vector b[:len(a)].
func DotF16(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	return dotF16Impl(a, b)
}

// AxpyF16 adds a·x[i] to y[i] for every i < len(y), x in binary16 (the
// product rounded to float32 before the addition, never fused).
func AxpyF16(y []float32, a float32, x []uint16) {
	x = x[:len(y)]
	axpyF16Impl(y, a, x)
}

// ToF16 rounds src to binary16 into dst[:len(src)], ties to even (NaNs
// stay NaNs, their payload not kept exactly).
func ToF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	toF16Impl(dst, src)
}

// FromF16 writes the float32 value of each of src into dst[:len(src)].
func FromF16(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = f16Table[h]
	}
}

// fma32 is a·b + c rounded once (to within the double rounding through
// float64, which the fuzz tests allow for), as VFMADD231PS computes it.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// reduce8x4 adds up four eight-lane accumulators in the order the
// assembly does: lane-wise (a0+a1)+(a2+a3), then the upper four lanes onto
// the lower, then lanes 2,3 onto 0,1, then lane 1 onto lane 0.
func reduce8x4(acc *[4][8]float32) float32 {
	var s [8]float32
	for l := range s {
		s[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l])
	}
	var h [4]float32
	for l := range h {
		h[l] = s[l] + s[l+4]
	}
	return (h[0] + h[2]) + (h[1] + h[3])
}

// dotF32Go is DotF32 in Go, in the assembly's order.
func dotF32Go(a, b []float32) float32 {
	var acc [4][8]float32
	n := len(a)
	i := 0
	for ; i+32 <= n; i += 32 {
		for k := range 4 {
			for l := range 8 {
				acc[k][l] = fma32(a[i+8*k+l], b[i+8*k+l], acc[k][l])
			}
		}
	}
	for ; i+8 <= n; i += 8 {
		for l := range 8 {
			acc[0][l] = fma32(a[i+l], b[i+l], acc[0][l])
		}
	}
	s := reduce8x4(&acc)
	for ; i < n; i++ {
		s = fma32(a[i], b[i], s)
	}
	return s
}

// dotF16Go is DotF16 in Go, in the assembly's order.
func dotF16Go(a []float32, b []uint16) float32 {
	t := f16Table
	var acc [4][8]float32
	n := len(a)
	i := 0
	for ; i+32 <= n; i += 32 {
		for k := range 4 {
			for l := range 8 {
				acc[k][l] = fma32(a[i+8*k+l], t[b[i+8*k+l]], acc[k][l])
			}
		}
	}
	for ; i+8 <= n; i += 8 {
		for l := range 8 {
			acc[0][l] = fma32(a[i+l], t[b[i+l]], acc[0][l])
		}
	}
	s := reduce8x4(&acc)
	for ; i < n; i++ {
		s = fma32(a[i], t[b[i]], s)
	}
	return s
}

// axpyF32Go is AxpyF32 in Go.
func axpyF32Go(y []float32, a float32, x []float32) {
	for i := range y {
		y[i] += float32(a * x[i]) // the conversion forbids fusing
	}
}

// axpyF16Go is AxpyF16 in Go.
func axpyF16Go(y []float32, a float32, x []uint16) {
	t := f16Table
	for i := range y {
		y[i] += float32(a * t[x[i]])
	}
}

// toF16Go is ToF16 in Go.
func toF16Go(dst []uint16, src []float32) {
	for i, v := range src {
		dst[i] = f32ToF16(v)
	}
}

// RoundF16 rounds every element of x to the nearest binary16 value (ties
// to even), in place.
func RoundF16(x []float32) {
	var h [64]uint16
	for len(x) > 0 {
		n := min(len(x), len(h))
		toF16Impl(h[:n], x[:n])
		FromF16(x[:n], h[:n])
		x = x[n:]
	}
}

// Scores sets dst[t] to the dot product of q with the row k[t·stride:],
// for every t < len(dst): the attention scores of one head against its
// cached keys, in one call. Each is summed in eight lanes over groups of
// eight, then (l0+l4 + l2+l6) + (l1+l5 + l3+l7) as reduce8 does.
func Scores(dst, q, k []float32, stride int) {
	if len(dst) == 0 {
		return
	}
	if len(q) > 0 {
		_ = k[(len(dst)-1)*stride+len(q)-1]
	}
	scoresImpl(dst, q, k, stride)
}

// ScoresF16 is Scores over binary16 keys.
func ScoresF16(dst, q []float32, k []uint16, stride int) {
	if len(dst) == 0 {
		return
	}
	if len(q) > 0 {
		_ = k[(len(dst)-1)*stride+len(q)-1]
	}
	scoresF16Impl(dst, q, k, stride)
}

// WeightedSum adds w[t]·v[t·stride+j] to out[j] for every t < len(w) and
// j < len(out): the attention output of one head from its cached values,
// in one call. Each out[j] takes the terms in order of t, fused.
func WeightedSum(out, w, v []float32, stride int) {
	if len(w) == 0 {
		return
	}
	if len(out) > 0 {
		_ = v[(len(w)-1)*stride+len(out)-1]
	}
	weightedSumImpl(out, w, v, stride)
}

// WeightedSumF16 is WeightedSum over binary16 values.
func WeightedSumF16(out, w []float32, v []uint16, stride int) {
	if len(w) == 0 {
		return
	}
	if len(out) > 0 {
		_ = v[(len(w)-1)*stride+len(out)-1]
	}
	weightedSumF16Impl(out, w, v, stride)
}

// reduce8 adds up the lanes of one eight-lane accumulator as the
// assembly does.
func reduce8(s *[8]float32) float32 {
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
}

// dot8 is one score: lanes over groups of eight, then the tail in order.
func dot8[E float32 | uint16](q []float32, k []E, conv func(E) float32) float32 {
	var acc [8]float32
	n := len(q)
	i := 0
	for ; i+8 <= n; i += 8 {
		for l := range 8 {
			acc[l] = fma32(q[i+l], conv(k[i+l]), acc[l])
		}
	}
	s := reduce8(&acc)
	for ; i < n; i++ {
		s = fma32(q[i], conv(k[i]), s)
	}
	return s
}

func id32(x float32) float32   { return x }
func fromF16(h uint16) float32 { return f16Table[h] }

func scoresGo(dst, q, k []float32, stride int) {
	for t := range dst {
		dst[t] = dot8(q, k[t*stride:t*stride+len(q)], id32)
	}
}

func scoresF16Go(dst, q []float32, k []uint16, stride int) {
	for t := range dst {
		dst[t] = dot8(q, k[t*stride:t*stride+len(q)], fromF16)
	}
}

func weightedSumGo(out, w, v []float32, stride int) {
	for j := range out {
		acc := out[j]
		for t, a := range w {
			acc = fma32(a, v[t*stride+j], acc)
		}
		out[j] = acc
	}
}

func weightedSumF16Go(out, w []float32, v []uint16, stride int) {
	for j := range out {
		acc := out[j]
		for t, a := range w {
			acc = fma32(a, f16Table[v[t*stride+j]], acc)
		}
		out[j] = acc
	}
}
