package quant

import (
	"encoding/binary"
	"math"
)

// Q8_0 rearranged for VNNI: an in-memory layout of Q8_0 weights, made at
// load by Repack and never written to a file, for CPUs whose integer dot
// product instruction (AVX-512 VNNI's VPDPBUSD) multiplies unsigned bytes
// by signed bytes. A row of nb blocks keeps the file row's size
// (34·nb bytes):
//
//	d  [nb]uint16     the blocks' binary16 scales, together
//	qs [nb][32]uint8  the quants stored as u = q + 128 (q XOR 0x80)
//
// so one load brings sixteen scales and the quants of two blocks sit in
// one 64-byte line. Its activations (Q8_0VNNIAct) are ggml's Q8_0
// activation quants laid out to match, 68·nb bytes a row:
//
//	qs   [nb][32]int8   q = round-half-even(x · 127/max|x|), as Q8_0's
//	corr [nb][8]int32   −128 × the sum of each 4 consecutive quants
//	d    [nb]float32    the binary16 scale max|x|/127, widened
//
// The instruction adds Σ u·q over each 4 bytes into an int32 lane; the
// lane starting from its correction gives Σ (u−128)·q = Σ w·q exactly, so
// each block's integer sum equals Q8_0's and, with d the same binary16
// value Q8_0 activations store, DotQ agrees with Q8_0's DotQ to within
// float32 summation order.

// Q8_0VNNIAct is the activation type of the rearranged Q8_0 kernel (see
// Repacked): an in-memory layout, not a GGUF type, so Lookup does not
// know it.
const Q8_0VNNIAct Type = 1<<16 | Q8_0

// q8_0VNNIActBytes is the size of one block of Q8_0VNNIAct activations.
const q8_0VNNIActBytes = 32 + 32 + 4

// Repacker rearranges the rows of one weight type at load into the layout
// of a faster kernel.
type Repacker struct {
	// Name names the kernel ("avx512-vnni").
	Name string
	// Rows is the number of rows the layout interleaves: Repack takes
	// whole groups of Rows rows, and a matrix whose row count is not a
	// multiple of it keeps the file's layout. 1 for row-by-row layouts.
	Rows int
	// Kernel works on rows rearranged by Repack: same BlockSize and
	// BlockBytes as the file's type, so a matrix keeps its row size;
	// Quantize is nil.
	Kernel *Kernel
	// Repack writes into dst the rows of cols elements in src (the file's
	// layout), rearranged; len(dst) == len(src), a whole number of rows.
	Repack func(dst, src []byte, cols int)
}

// Repacked returns the repacker for a matrix of rows rows of type t when
// this CPU has a kernel on rearranged rows faster than the one on the
// file's layout, else nil. On amd64 and arm64 (not with -tags purego),
// Q4_0 and Q8_0 matrices whose rows are a whole number of 16-row groups
// get the 16-row layouts, whose matrix products serve tiles of tokens:
// AVX-512 VNNI kernels on CPUs with AVX-512 F, BW, VL and VNNI, AVX2 ones
// on CPUs with AVX2, FMA and F16C, NEON ones with SDOT on arm64 CPUs with
// the dot-product extension; on amd64, so do Q5_0 matrices. With AVX-512
// VNNI or SDOT, Q4_K matrices of whole groups get the 16-row layout too;
// with AVX-512 VNNI, Q6_K matrices of whole groups get theirs, and other
// Q8_0 matrices the row-by-row layout.
func Repacked(t Type, rows int) *Repacker {
	switch {
	case t == Q8_0 && q8_0x16Asm != nil && rows%x16Rows == 0:
		return &q8_0x16Repacker
	case t == Q8_0 && q8_0VNNIRows != nil:
		return &q8_0VNNIRepacker
	case t == Q4_0 && q4_0x16Asm != nil && rows%x16Rows == 0:
		return &q4_0VNNIRepacker
	case t == Q5_0 && q5_0x16Asm != nil && rows%x16Rows == 0:
		return &q5_0x16Repacker
	case t == Q4_K && q4_Kx16Asm != nil && rows%x16Rows == 0:
		return &q4_Kx16Repacker
	case t == Q6_K && q6_Kx16Asm != nil && rows%x16Rows == 0:
		return &q6_Kx16Repacker
	}
	return nil
}

var q8_0VNNIRepacker = Repacker{
	Name: "avx512-vnni",
	Rows: 1,
	Kernel: &Kernel{
		BlockSize: q8_0Block, BlockBytes: q8_0Bytes,
		Dequant: dequantQ8_0VNNI, Dot: dotQ8_0VNNIFloat,
		ActType: Q8_0VNNIAct, QuantizeAct: quantizeActQ8_0VNNIImpl,
		DotQ: func(xq, w []byte) float32 {
			var out [1]float32
			rowsQ8_0VNNI(out[:], xq, w)
			return out[0]
		},
		DotQRows: rowsQ8_0VNNI,
	},
	Repack: repackQ8_0VNNI,
}

// rowsQ8_0VNNI is the DotQRows of the rearranged layout: the assembly
// where there is one, else the Go twin row by row.
func rowsQ8_0VNNI(out []float32, xq, w []byte) {
	nb := len(xq) / q8_0VNNIActBytes
	if nb == 0 || len(out) == 0 {
		clear(out)
		return
	}
	_ = w[len(out)*nb*q8_0Bytes-1] // every row is there
	if q8_0VNNIRows != nil {
		q8_0VNNIRows(out, xq[:nb*q8_0VNNIActBytes], w)
		return
	}
	rb := nb * q8_0Bytes
	for r := range out {
		out[r] = dotQ8_0VNNIGo(xq, w[r*rb:(r+1)*rb])
	}
}

// repackQ8_0VNNI rearranges whole Q8_0 rows of cols elements.
func repackQ8_0VNNI(dst, src []byte, cols int) {
	nb := cols / q8_0Block
	rb := nb * q8_0Bytes
	if rb == 0 {
		return
	}
	dst = dst[:len(src)]
	for r := 0; r+rb <= len(src); r += rb {
		s, d := src[r:r+rb], dst[r:r+rb]
		qs := d[2*nb:]
		for i := 0; i < nb; i++ {
			b := s[i*q8_0Bytes : (i+1)*q8_0Bytes]
			d[2*i], d[2*i+1] = b[0], b[1]
			q := qs[32*i : 32*i+32]
			for j := 0; j < 32; j += 8 {
				binary.LittleEndian.PutUint64(q[j:], binary.LittleEndian.Uint64(b[2+j:])^0x8080808080808080)
			}
		}
	}
}

// dequantQ8_0VNNI decodes one rearranged row of len(dst) elements.
func dequantQ8_0VNNI(dst []float32, src []byte) {
	nb := len(dst) / q8_0Block
	qs := src[2*nb : 34*nb]
	for i := 0; i < nb; i++ {
		d := f16ToF32(le16(src[2*i:]))
		for j := 0; j < 32; j++ {
			dst[32*i+j] = float32(int8(qs[32*i+j]^0x80)) * d
		}
	}
}

// dotQ8_0VNNIFloat is the float dot product of x with one rearranged row.
func dotQ8_0VNNIFloat(x []float32, w []byte) float32 {
	nb := len(x) / q8_0Block
	qs := w[2*nb : 34*nb]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		var s float32
		for j := 0; j < 32; j++ {
			s += x[32*i+j] * float32(int8(qs[32*i+j]^0x80))
		}
		sum += t[le16(w[2*i:])] * s
	}
	return sum
}

// quantizeActQ8_0VNNIGo quantises x to Q8_0VNNIAct: the quants and
// binary16 scale of quantizeActQ8_0 (ggml's x86 quantize_row_q8_0:
// q = x·(127/max|x|) rounded half to even), the scale widened to float32,
// and each 4 quants' correction.
func quantizeActQ8_0VNNIGo(dst []byte, x []float32) {
	nb := len(x) / 32
	dst = dst[:nb*q8_0VNNIActBytes]
	corr, ds := dst[32*nb:64*nb], dst[64*nb:]
	for i := 0; i < nb; i++ {
		q := (*[32]byte)(dst[32*i:])
		_, d := quantize32((*[32]float32)(x[32*i:]), q)
		binary.LittleEndian.PutUint32(ds[4*i:], math.Float32bits(f16ToF32(f32ToF16(d))))
		for l := 0; l < 8; l++ {
			s := int32(int8(q[4*l])) + int32(int8(q[4*l+1])) + int32(int8(q[4*l+2])) + int32(int8(q[4*l+3]))
			binary.LittleEndian.PutUint32(corr[32*i+4*l:], uint32(-128*s))
		}
	}
}

// dotQ8_0VNNIGo is the pure-Go twin of the assembly on one rearranged row:
// each block's integer sum exactly as the instruction forms it (Σ u·q
// from the correction), scaled and summed in float32 as dotQ8_0Go does.
func dotQ8_0VNNIGo(xq, w []byte) float32 {
	nb := len(xq) / q8_0VNNIActBytes
	qs, corr, ds := xq[:32*nb], xq[32*nb:64*nb], xq[64*nb:68*nb]
	wq := w[2*nb : 34*nb]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		var s int32
		for l := 0; l < 8; l++ {
			s += int32(binary.LittleEndian.Uint32(corr[32*i+4*l:]))
		}
		for j := 0; j < 32; j++ {
			s += int32(wq[32*i+j]) * int32(int8(qs[32*i+j]))
		}
		d := math.Float32frombits(binary.LittleEndian.Uint32(ds[4*i:]))
		sum += float32(s) * (t[le16(w[2*i:])] * d)
	}
	return sum
}
