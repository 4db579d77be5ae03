package quant

import (
	"encoding/binary"
	"math"
)

// Q4_0 rearranged for VNNI: an in-memory layout of Q4_0 weights, made at
// load by Repack and never written to a file, in which 16 rows are
// interleaved so that one VPDPBUSD computes a 4-element piece of the
// block's dot product for all 16 rows at once (one int32 lane per row),
// against 4 activation bytes broadcast to every lane. Each group of 16
// rows of nb blocks keeps the file's size (16·18·nb bytes):
//
//	qs [nb][4][16][4]uint8  block k, piece p, row i: the file's
//	                        qs[4p:4p+4] of row i (low nibbles: elements
//	                        4p..4p+3; high nibbles: 16+4p..16+4p+3)
//	d  [nb][16]uint16       block k, row i: the binary16 scale
//
// so a block's 16 rows of quants are four aligned 64-byte lines; masked
// and shifted they become the eight registers of unsigned weights
// (0..15) that serve every token of a tile. Its activations
// (Q4_0VNNIAct) are ggml's Q8_0 activation quants, a block of 40 bytes
// for each 32 elements:
//
//	qs   [32]int8  q = round-half-even(x · 127/max|x|), as Q8_0's
//	corr int32     −8·Σq
//	d    float32   the binary16 scale max|x|/127, widened
//
// A lane starting from corr and adding Σ u·q gives Σ (u−8)·q, Q4_0's
// integer block sum exactly; it is scaled by d_w·d_x into the row's
// float32 sum, so the results agree with Q4_0's DotQ to within float32
// summation order.
//
// The rows of a group share their blocks' lines, so one row alone has no
// bytes of its own: the kernel's Dot and Dequant are nil, and it is used
// only through DotQRows and MatMulQ on whole groups (RowGroup).

// Q4_0VNNIAct is the activation type of the rearranged Q4_0 kernel: an
// in-memory layout, not a GGUF type, so Lookup does not know it.
const Q4_0VNNIAct Type = 1<<16 | Q4_0

// x16ActBytes is the size of one block of activations of a 16-row
// layout (Q4_0VNNIAct, Q8_0x16Act): 32 quants, the correction, the scale.
const x16ActBytes = 32 + 8

// x16Rows is the number of rows the 16-row layouts (Q4_0's, Q8_0's)
// interleave.
const x16Rows = 16

// q4x16Bytes is the size of one block of a group of 16 rearranged rows.
const q4x16Bytes = x16Rows * q4_0Bytes

var q4_0VNNIRepacker = Repacker{
	Name: x16Name,
	Rows: x16Rows,
	Kernel: &Kernel{
		BlockSize: q4_0Block, BlockBytes: q4_0Bytes, RowGroup: x16Rows,
		ActType: Q4_0VNNIAct, QuantizeAct: quantizeActQ4_0VNNI,
		DotQ: func(xq, w []byte) float32 {
			panic("quant: DotQ on one row of an interleaved layout")
		},
		DotQRows: func(out []float32, xq, w []byte) {
			matMulQ4_0x16(out, len(out), xq, len(xq), 1, w)
		},
		MatMulQ: matMulQ4_0x16,
	},
	Repack: repackQ4_0x16,
}

// repackQ4_0x16 rearranges whole groups of 16 Q4_0 rows of cols elements.
func repackQ4_0x16(dst, src []byte, cols int) {
	nb := cols / q4_0Block
	gb := nb * q4x16Bytes // a group's bytes
	if gb == 0 {
		return
	}
	rb := nb * q4_0Bytes
	dst = dst[:len(src)]
	for g := 0; g+gb <= len(src); g += gb {
		s, d := src[g:g+gb], dst[g:g+gb]
		qs, ds := d[:256*nb], d[256*nb:]
		for k := 0; k < nb; k++ {
			q := (*[256]byte)(qs[256*k:])
			dk := (*[32]byte)(ds[32*k:])
			for i := 0; i < x16Rows; i++ {
				b := (*[q4_0Bytes]byte)(s[i*rb+k*q4_0Bytes:])
				dk[2*i], dk[2*i+1] = b[0], b[1]
				le := binary.LittleEndian
				le.PutUint32(q[4*i:], le.Uint32(b[2:]))
				le.PutUint32(q[64+4*i:], le.Uint32(b[6:]))
				le.PutUint32(q[128+4*i:], le.Uint32(b[10:]))
				le.PutUint32(q[192+4*i:], le.Uint32(b[14:]))
			}
		}
	}
}

// unpackQ4_0x16 is the inverse of repackQ4_0x16 on one group: row i of
// the file's layout (for tests and for checking a repack).
func unpackQ4_0x16(row []byte, group []byte, i, nb int) {
	qs, ds := group[:256*nb], group[256*nb:]
	for k := 0; k < nb; k++ {
		b := row[k*q4_0Bytes : (k+1)*q4_0Bytes]
		b[0], b[1] = ds[32*k+2*i], ds[32*k+2*i+1]
		for p := 0; p < 4; p++ {
			copy(b[2+4*p:6+4*p], qs[256*k+64*p+4*i:256*k+64*p+4*i+4])
		}
	}
}

// quantizeActQ4_0VNNI quantises x to Q4_0VNNIAct: the quants and
// binary16 scale of quantizeActQ8_0, the scale widened to float32, and
// −8 × each block's sum of quants.
func quantizeActQ4_0VNNI(dst []byte, x []float32) { quantizeActX16(dst, x, -8) }

// quantizeActX16 quantises x to the activations of a 16-row layout: each
// block's quants and binary16 scale as quantizeActQ8_0 makes them, the
// scale widened to float32, and c × the block's sum of quants (the
// correction that takes the weights' offset back out).
func quantizeActX16(dst []byte, x []float32, c int32) {
	nb := len(x) / 32
	dst = dst[:nb*x16ActBytes]
	for i := 0; i < nb; i++ {
		b := dst[x16ActBytes*i : x16ActBytes*(i+1)]
		sum, d := quantize32((*[32]float32)(x[32*i:]), (*[32]byte)(b))
		binary.LittleEndian.PutUint32(b[32:], uint32(c*int32(sum)))
		binary.LittleEndian.PutUint32(b[36:], math.Float32bits(f16ToF32(f32ToF16(d))))
	}
}

// x16Func is the MatMulQ of a 16-row layout on nb blocks a row; the
// caller has checked the lengths, nb > 0.
type x16Func func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int)

// matMulX16 is MatMulQ of a 16-row layout whose activation blocks are
// actBytes and whose groups take groupBytes a block: the lengths checked
// once, then the assembly where there is one (asm non-nil), else the Go
// twin.
func matMulX16(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, actBytes, groupBytes int, asm, twin x16Func) {
	nb := ldx / actBytes
	if batch <= 0 || nb == 0 {
		return
	}
	groups := len(w) / (nb * groupBytes)
	rows := groups * x16Rows
	_ = out[(batch-1)*ldo+rows-1]
	_ = xq[(batch-1)*ldx+nb*actBytes-1]
	if asm != nil {
		asm(out, ldo, xq, ldx, batch, w[:groups*nb*groupBytes], nb)
		return
	}
	twin(out, ldo, xq, ldx, batch, w, nb)
}

// matMulQ4_0x16 is MatMulQ of the rearranged layout (matMulX16).
func matMulQ4_0x16(out []float32, ldo int, xq []byte, ldx, batch int, w []byte) {
	matMulX16(out, ldo, xq, ldx, batch, w, x16ActBytes, q4x16Bytes, q4_0x16Asm, matMulQ4_0x16Go)
}

// matMulQ4_0x16Go is the pure-Go twin of the assembly: for each row and
// token, each block's integer sum exactly as the instruction forms it
// (from the correction, Σ u·q), scaled by d_w·d_x and summed in float32
// block by block.
func matMulQ4_0x16Go(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
	gb := nb * q4x16Bytes
	t := f16Table
	for g := 0; g+gb <= len(w); g += gb {
		qs, ds := w[g:g+256*nb], w[g+256*nb:g+gb]
		r0 := g / gb * x16Rows
		for b := 0; b < batch; b++ {
			x := xq[b*ldx : b*ldx+nb*x16ActBytes]
			for i := 0; i < x16Rows; i++ {
				var acc float32
				for k := 0; k < nb; k++ {
					xb := x[x16ActBytes*k : x16ActBytes*(k+1)]
					s := int32(binary.LittleEndian.Uint32(xb[32:]))
					for p := 0; p < 4; p++ {
						u := qs[256*k+64*p+4*i : 256*k+64*p+4*i+4]
						for j := 0; j < 4; j++ {
							s += int32(u[j]&0x0f)*int32(int8(xb[4*p+j])) +
								int32(u[j]>>4)*int32(int8(xb[16+4*p+j]))
						}
					}
					dx := math.Float32frombits(binary.LittleEndian.Uint32(xb[36:]))
					acc += float32(s) * (t[le16(ds[32*k+2*i:])] * dx)
				}
				out[b*ldo+r0+i] = acc
			}
		}
	}
}
