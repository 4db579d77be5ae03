package quant

import (
	"encoding/binary"
	"math"
)

// Q8_0 rearranged in groups of 16 rows: an in-memory layout of Q8_0
// weights, made at load by Repack and never written to a file, laid out
// as Q4_0's 16-row groups are (q4_0vnni.go) so that one VPDPBUSD computes
// a 4-element piece of a block's dot product for all 16 rows at once
// against 4 activation bytes broadcast to every lane, and the weights of
// a block, loaded once, serve a tile of 8 tokens. Each group of 16 rows of
// nb blocks keeps the file's size (16·34·nb bytes):
//
//	qs [nb][8][16][4]uint8  block k, piece p, row i: the file's
//	                        qs[4p:4p+4] of row i stored as u = q + 128
//	d  [nb][16]uint16       block k, row i: the binary16 scale
//
// Its activations (Q8_0x16Act) have Q4_0VNNIAct's layout, 40 bytes a
// block of 32 — the quants, an int32 correction, the float32 scale — with
// the correction −128·Σq: a lane starting from it and adding Σ u·q gives
// Σ (u−128)·q, Q8_0's integer block sum exactly, scaled by d_w·d_x into
// the row's float32 sum.
//
// As with Q4_0's groups, one row alone has no bytes of its own: the
// kernel is used only through DotQRows and MatMulQ on whole groups.

// Q8_0x16Act is the activation type of the 16-row Q8_0 kernel: an
// in-memory layout, not a GGUF type, so Lookup does not know it.
const Q8_0x16Act Type = 2<<16 | Q8_0

// q8x16Bytes is the size of one block of a group of 16 rearranged rows.
const q8x16Bytes = x16Rows * q8_0Bytes

var q8_0x16Repacker = Repacker{
	Name: q8x16Name,
	Rows: x16Rows,
	Kernel: &Kernel{
		BlockSize: q8_0Block, BlockBytes: q8_0Bytes, RowGroup: x16Rows,
		ActType: Q8_0x16Act, QuantizeAct: quantizeActQ8_0x16,
		DotQ: func(xq, w []byte) float32 {
			panic("quant: DotQ on one row of an interleaved layout")
		},
		DotQRows: func(out []float32, xq, w []byte) {
			matMulQ8_0x16(out, len(out), xq, len(xq), 1, w)
		},
		MatMulQ: matMulQ8_0x16,
	},
	Repack: repackQ8_0x16,
}

// repackQ8_0x16 rearranges whole groups of 16 Q8_0 rows of cols elements.
func repackQ8_0x16(dst, src []byte, cols int) {
	nb := cols / q8_0Block
	gb := nb * q8x16Bytes // a group's bytes
	if gb == 0 {
		return
	}
	rb := nb * q8_0Bytes
	dst = dst[:len(src)]
	le := binary.LittleEndian
	for g := 0; g+gb <= len(src); g += gb {
		s, d := src[g:g+gb], dst[g:g+gb]
		qs, ds := d[:512*nb], d[512*nb:]
		for k := 0; k < nb; k++ {
			q := (*[512]byte)(qs[512*k:])
			dk := (*[32]byte)(ds[32*k:])
			for i := 0; i < x16Rows; i++ {
				b := (*[q8_0Bytes]byte)(s[i*rb+k*q8_0Bytes:])
				dk[2*i], dk[2*i+1] = b[0], b[1]
				for p := 0; p < 8; p++ {
					le.PutUint32(q[64*p+4*i:], le.Uint32(b[2+4*p:])^0x80808080)
				}
			}
		}
	}
}

// unpackQ8_0x16 is the inverse of repackQ8_0x16 on one group: row i of
// the file's layout (for tests).
func unpackQ8_0x16(row []byte, group []byte, i, nb int) {
	qs, ds := group[:512*nb], group[512*nb:]
	le := binary.LittleEndian
	for k := 0; k < nb; k++ {
		b := row[k*q8_0Bytes : (k+1)*q8_0Bytes]
		b[0], b[1] = ds[32*k+2*i], ds[32*k+2*i+1]
		for p := 0; p < 8; p++ {
			le.PutUint32(b[2+4*p:], le.Uint32(qs[512*k+64*p+4*i:])^0x80808080)
		}
	}
}

// quantizeActQ8_0x16 quantises x to Q8_0x16Act: Q8_0's quants and scale
// and −128 × each block's sum of quants.
func quantizeActQ8_0x16(dst []byte, x []float32) { quantizeActX16(dst, x, -128) }

// matMulQ8_0x16 is MatMulQ of the rearranged layout (matMulX16).
func matMulQ8_0x16(out []float32, ldo int, xq []byte, ldx, batch int, w []byte) {
	matMulX16(out, ldo, xq, ldx, batch, w, x16ActBytes, q8x16Bytes, q8_0x16Asm, matMulQ8_0x16Go)
}

// matMulQ8_0x16Go is the pure-Go twin of the assembly: for each row and
// token, each block's integer sum exactly as the instruction forms it
// (from the correction, Σ u·q), scaled by d_w·d_x and summed in float32
// block by block.
func matMulQ8_0x16Go(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
	gb := nb * q8x16Bytes
	t := f16Table
	for g := 0; g+gb <= len(w); g += gb {
		qs, ds := w[g:g+512*nb], w[g+512*nb:g+gb]
		r0 := g / gb * x16Rows
		for b := 0; b < batch; b++ {
			x := xq[b*ldx : b*ldx+nb*x16ActBytes]
			for i := 0; i < x16Rows; i++ {
				var acc float32
				for k := 0; k < nb; k++ {
					xb := x[x16ActBytes*k : x16ActBytes*(k+1)]
					s := int32(binary.LittleEndian.Uint32(xb[32:]))
					for p := 0; p < 8; p++ {
						u := qs[512*k+64*p+4*i : 512*k+64*p+4*i+4]
						for j := 0; j < 4; j++ {
							s += int32(u[j]) * int32(int8(xb[4*p+j]))
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
