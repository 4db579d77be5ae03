//go:build !purego

package quant

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether the AVX2 kernels may run: AVX2 and FMA, with the
// OS saving the YMM registers (x/sys/cpu checks that).
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// The integer dot products: AVX2 where the CPU has it, pure Go otherwise.
var (
	dotQ8_0Impl = pick(dotQ8_0AVX2, dotQ8_0Go)
	dotQ4_0Impl = pick(avx2Blocks(q4_0DotAVX2, q8_0Bytes, q4_0Bytes), dotQ4_0Go)
	dotQ5_0Impl = pick(avx2Blocks(q5_0DotAVX2, q8_0Bytes, q5_0Bytes), dotQ5_0Go)
	dotQ4_1Impl = pick(avx2Blocks(q4_1DotAVX2, q8_1Bytes, q4_1Bytes), dotQ4_1Go)
	dotQ5_1Impl = pick(avx2Blocks(q5_1DotAVX2, q8_1Bytes, q5_1Bytes), dotQ5_1Go)
	dotQ5_KImpl = pick(avx2Blocks(q5_KDotAVX2, q8_KBytes, q5_KBytes), dotQ5_KGo)
	dotQ4_KImpl = pick(dotQ4_KAVX2, dotQ4_KGo)
	dotQ6_KImpl = pick(dotQ6_KAVX2, dotQ6_KGo)
)

func pick(simd, generic func(xq, w []byte) float32) func(xq, w []byte) float32 {
	if hasAVX2 {
		return simd
	}
	return generic
}

// simdName names the instruction set the integer dot products use.
var simdName = map[bool]string{true: "avx2", false: "go"}[hasAVX2]

// q8_0DotAVX2 returns Σ over nb blocks of d_x*d_w*Σ x.qs*w.qs for Q8_0
// blocks at x and w (dotq_amd64.s), with tab the binary16 table.
//
//go:noescape
func q8_0DotAVX2(x, w *byte, nb int, tab *[1 << 16]float32) float32

func dotQ8_0AVX2(xq, w []byte) float32 {
	nb := len(xq) / q8_0Bytes
	if nb == 0 {
		return 0
	}
	_ = w[nb*q8_0Bytes-1]
	return q8_0DotAVX2(&xq[0], &w[0], nb, f16Table)
}

// q4_KDotAVX2 and q6_KDotAVX2 return the dot product of nb Q8_K blocks at
// x with nb Q4_K (Q6_K) blocks at w (dotq_amd64.s).
//
//go:noescape
func q4_KDotAVX2(x, w *byte, nb int, tab *[1 << 16]float32) float32

//go:noescape
func q6_KDotAVX2(x, w *byte, nb int, tab *[1 << 16]float32) float32

func dotQ4_KAVX2(xq, w []byte) float32 {
	nb := len(xq) / q8_KBytes
	if nb == 0 {
		return 0
	}
	_ = w[nb*q4_KBytes-1]
	return q4_KDotAVX2(&xq[0], &w[0], nb, f16Table)
}

func dotQ6_KAVX2(xq, w []byte) float32 {
	nb := len(xq) / q8_KBytes
	if nb == 0 {
		return 0
	}
	_ = w[nb*q6_KBytes-1]
	return q6_KDotAVX2(&xq[0], &w[0], nb, f16Table)
}

// blockKernel is the signature of the assembly kernels: nb blocks of
// activations at x and of weights at w, with the binary16 table.
type blockKernel func(x, w *byte, nb int, tab *[1 << 16]float32) float32

// avx2Blocks wraps an assembly kernel as a DotQ: the number of blocks from
// the activation row (actBytes each), the weight row checked to hold as
// many blocks of wBytes.
func avx2Blocks(k blockKernel, actBytes, wBytes int) func(xq, w []byte) float32 {
	return func(xq, w []byte) float32 {
		nb := len(xq) / actBytes
		if nb == 0 {
			return 0
		}
		_ = w[nb*wBytes-1]
		return k(&xq[0], &w[0], nb, f16Table)
	}
}

// The kernels of dotq_legacy_amd64.s.
//
//go:noescape
func q4_0DotAVX2(x, w *byte, nb int, tab *[1 << 16]float32) float32

//go:noescape
func q5_0DotAVX2(x, w *byte, nb int, tab *[1 << 16]float32) float32

//go:noescape
func q4_1DotAVX2(x, w *byte, nb int, tab *[1 << 16]float32) float32

//go:noescape
func q5_1DotAVX2(x, w *byte, nb int, tab *[1 << 16]float32) float32

//go:noescape
func q5_KDotAVX2(x, w *byte, nb int, tab *[1 << 16]float32) float32
