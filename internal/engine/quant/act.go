package quant

import (
	"encoding/binary"
	"math"
)

// Activation quantisation. Like ggml's CPU backend, a matrix-vector product
// over quantised weights first quantises the float32 input vector once, to
// the kernel's ActType (ggml's vec_dot_type), and then takes integer dot
// products row by row (Kernel.DotQ). The activation block layouts:
//
//	Q8_0: 34 bytes per 32 elements: d binary16, qs [32]int8; x ≈ d*q.
//	Q8_1: 36 bytes per 32 elements: d binary16, s binary16 (= d*Σq),
//	      qs [32]int8.
//	Q8_K: 292 bytes per 256 elements: d float32, qs [256]int8,
//	      bsums [16]int16 (the sum of each 16 consecutive quants).

const (
	q8_1Bytes = 2 + 2 + 32
	q8_KBytes = 4 + 256 + 32
)

// actLayout gives the block size and block bytes of each activation type.
func actLayout(t Type) (block, bytes int) {
	switch t {
	case Q8_0:
		return q8_0Block, q8_0Bytes
	case Q8_1:
		return 32, q8_1Bytes
	case Q8_K:
		return qkK, q8_KBytes
	case Q8_0VNNIAct:
		return q8_0Block, q8_0VNNIActBytes
	case Q4_0VNNIAct, Q5_0x16Act, Q8_0x16Act:
		return q4_0Block, x16ActBytes
	}
	return 1, 4
}

// ActRowBytes returns the size in bytes of n activations quantised to the
// kernel's ActType (n a multiple of BlockSize), or 0 when the kernel has no
// integer path (DotQ is nil).
func (k *Kernel) ActRowBytes(n int) int {
	if k.DotQ == nil {
		return 0
	}
	b, by := actLayout(k.ActType)
	return n / b * by
}

// quantizeActQ8_0 quantises x to Q8_0 as ggml's quantize_row_q8_0 does
// on x86: d = max|x|/127, q = x * (127/max|x|) rounded half to even.
func quantizeActQ8_0(dst []byte, x []float32) {
	nb := len(x) / 32
	dst = dst[:nb*q8_0Bytes]
	for i := 0; i < nb; i++ {
		xb := (*[32]float32)(x[i*32:])
		b := (*[q8_0Bytes]byte)(dst[i*q8_0Bytes:])
		_, d := quantize32(xb, (*[32]byte)(b[2:]))
		binary.LittleEndian.PutUint16(b[:], f32ToF16(d))
	}
}

// quantizeActQ8_1 quantises x to Q8_1 as ggml's quantize_row_q8_1 does:
// Q8_0's quants plus s = d * Σq.
func quantizeActQ8_1(dst []byte, x []float32) {
	nb := len(x) / 32
	dst = dst[:nb*q8_1Bytes]
	for i := 0; i < nb; i++ {
		xb := (*[32]float32)(x[i*32:])
		b := (*[q8_1Bytes]byte)(dst[i*q8_1Bytes:])
		sum, d := quantize32(xb, (*[32]byte)(b[4:]))
		binary.LittleEndian.PutUint16(b[:], f32ToF16(d))
		binary.LittleEndian.PutUint16(b[2:], f32ToF16(float32(sum)*d))
	}
}

// quantize32Go writes the 32 quants of x with scale max|x|/127 to q and
// returns their sum and the scale (quantize32 is it, in assembly where
// there is some).
func quantize32Go(x *[32]float32, q *[32]byte) (sum int, d float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	d = amax / 127
	var id float32
	if amax != 0 {
		id = 127 / amax
	}
	for j, v := range x {
		n := int(int8(math.RoundToEven(float64(v * id))))
		q[j] = byte(int8(n))
		sum += n
	}
	return sum, d
}

// quantizeActQ8_K quantises x to Q8_K as ggml's quantize_row_q8_K_ref
// does: the element of largest magnitude maps to -127, d = -max/127,
// q = min(127, nearest(x * -127/max)), and the sums of each 16 quants.
func quantizeActQ8_K(dst []byte, x []float32) {
	nb := len(x) / qkK
	dst = dst[:nb*q8_KBytes]
	for i := 0; i < nb; i++ {
		quantizeQ8KBlock((*[qkK]float32)(x[i*qkK:]), (*[q8_KBytes]byte)(dst[i*q8_KBytes:]))
	}
}

// quantizeQ8KBlockGo writes one Q8_K block of x to b (quantizeQ8KBlock is
// it, in assembly where there is some).
func quantizeQ8KBlockGo(xb *[qkK]float32, b *[q8_KBytes]byte) {
	var amax, vmax float32
	for _, v := range xb {
		if a := abs32(v); a > amax {
			amax, vmax = a, v
		}
	}
	if amax == 0 {
		clear(b[:])
		return
	}
	iscale := -127 / vmax
	binary.LittleEndian.PutUint32(b[:], math.Float32bits(1/iscale))
	q := (*[qkK]byte)(b[4:])
	for g := 0; g < 16; g++ {
		var s int
		for l := 0; l < 16; l++ {
			n := min(127, nearestInt(iscale*xb[16*g+l]))
			q[16*g+l] = byte(int8(n))
			s += n
		}
		binary.LittleEndian.PutUint16(b[260+2*g:], uint16(int16(s)))
	}
}

// dequantAct decodes activations quantised to t (tests only need it, but
// it documents the layouts): len(dst) elements from src.
func dequantAct(t Type, dst []float32, src []byte) {
	switch t {
	case Q8_0:
		dequantQ8_0(dst, src)
	case Q8_1:
		for i := 0; i < len(dst)/32; i++ {
			b := src[i*q8_1Bytes:]
			d := f16ToF32(binary.LittleEndian.Uint16(b))
			for j := 0; j < 32; j++ {
				dst[32*i+j] = d * float32(int8(b[4+j]))
			}
		}
	case Q8_K:
		for i := 0; i < len(dst)/qkK; i++ {
			b := src[i*q8_KBytes:]
			d := math.Float32frombits(binary.LittleEndian.Uint32(b))
			for j := 0; j < qkK; j++ {
				dst[qkK*i+j] = d * float32(int8(b[4+j]))
			}
		}
	}
}

// Accel names the instruction set the integer dot products (DotQ) run on
// this machine: "avx2" on amd64 CPUs with AVX2 and FMA, "neon+sdot" on
// arm64 CPUs with the dot-product extension and "neon" on other arm64
// CPUs (for Q8_0, Q4_0, Q4_K and Q6_K; the other types in pure Go
// there), "go" (pure Go) elsewhere and with -tags purego.
func Accel() string { return simdName }
