package quant

import (
	"encoding/binary"
	"math"
)

// Q5_0 rearranged in groups of 16 rows: an in-memory layout of Q5_0
// weights, made at load by Repack and never written to a file, built on
// Q4_0's 16-row groups (q4_0vnni.go): one VPDPBUSD computes a 4-element
// piece of a block's dot product for all 16 rows at once against 4
// activation bytes broadcast to every lane, and a block's weights,
// unpacked once, serve a tile of tokens. Each group of 16 rows of nb
// blocks keeps the file's size (16·22·nb bytes):
//
//	qs [nb][4][16][4]uint8  block k, piece p, row i: the file's
//	                        qs[4p:4p+4] of row i, as Q4_0's groups
//	qh [nb][16]uint32       block k, row i: the file's fifth bits
//	                        rearranged, bit 4e+j of qh at bit 8j+e
//	d  [nb][16]uint16       block k, row i: the binary16 scale
//
// Register e (0..7) of a block's unsigned weights holds elements
// 4e..4e+3 of every row (the low nibbles of piece e for e < 4, the high
// nibbles of piece e−4 otherwise), one row per int32 lane; the fifth
// bits of its 4 bytes sit at bits e, 8+e, 16+e, 24+e of the row's qh
// word, so one shift of the qh line by 4−e bits (left, or right by e−4)
// puts each at bit 4 of its byte, and one VPTERNLOGD with a mask of bit
// 4 ORs it onto the nibbles: u = q5 in 0..31. A block's 16 rows are
// five aligned 64-byte lines of quants, then the scales of the group's
// blocks together.
//
// Its activations (Q5_0x16Act) have Q4_0VNNIAct's layout with the
// correction −16·Σq: a lane starting from it and adding Σ u·q gives
// Σ (u−16)·q, Q5_0's integer block sum exactly, scaled by d_w·d_x into
// the row's float32 sum, so the results agree with Q5_0's DotQ to
// within float32 summation order. As with Q4_0's groups, one row alone
// has no bytes of its own: the kernel is used only through DotQRows and
// MatMulQ on whole groups.

// Q5_0x16Act is the activation type of the 16-row Q5_0 kernel: an
// in-memory layout, not a GGUF type, so Lookup does not know it.
const Q5_0x16Act Type = 2<<16 | Q5_0

// q5x16Quants is the size of one block of quants (qs and qh) of a group.
const q5x16Quants = 256 + 64

// q5x16Bytes is the size of one block of a group of 16 rearranged rows.
const q5x16Bytes = x16Rows * q5_0Bytes

var q5_0x16Repacker = Repacker{
	Name: x16Name,
	Rows: x16Rows,
	Kernel: &Kernel{
		BlockSize: q5_0Block, BlockBytes: q5_0Bytes, RowGroup: x16Rows,
		ActType: Q5_0x16Act, QuantizeAct: quantizeActQ5_0x16,
		DotQ: func(xq, w []byte) float32 {
			panic("quant: DotQ on one row of an interleaved layout")
		},
		DotQRows: func(out []float32, xq, w []byte) {
			matMulQ5_0x16(out, len(out), xq, len(xq), 1, w)
		},
		MatMulQ: matMulQ5_0x16,
	},
	Repack: repackQ5_0x16,
}

// q5x16High rearranges a file block's fifth bits qh into the layout's
// word: bit 4e+j at bit 8j+e.
func q5x16High(qh uint32) (h uint32) {
	for e := 0; e < 8; e++ {
		for j := 0; j < 4; j++ {
			h |= (qh >> (4*e + j) & 1) << (8*j + e)
		}
	}
	return h
}

// q5x16FileHigh is the inverse of q5x16High.
func q5x16FileHigh(h uint32) (qh uint32) {
	for e := 0; e < 8; e++ {
		for j := 0; j < 4; j++ {
			qh |= (h >> (8*j + e) & 1) << (4*e + j)
		}
	}
	return qh
}

// repackQ5_0x16 rearranges whole groups of 16 Q5_0 rows of cols elements.
func repackQ5_0x16(dst, src []byte, cols int) {
	nb := cols / q5_0Block
	gb := nb * q5x16Bytes // a group's bytes
	if gb == 0 {
		return
	}
	rb := nb * q5_0Bytes
	dst = dst[:len(src)]
	le := binary.LittleEndian
	for g := 0; g+gb <= len(src); g += gb {
		s, d := src[g:g+gb], dst[g:g+gb]
		qs, ds := d[:q5x16Quants*nb], d[q5x16Quants*nb:]
		for k := 0; k < nb; k++ {
			q := (*[q5x16Quants]byte)(qs[q5x16Quants*k:])
			dk := (*[32]byte)(ds[32*k:])
			for i := 0; i < x16Rows; i++ {
				b := (*[q5_0Bytes]byte)(s[i*rb+k*q5_0Bytes:])
				dk[2*i], dk[2*i+1] = b[0], b[1]
				for p := 0; p < 4; p++ {
					le.PutUint32(q[64*p+4*i:], le.Uint32(b[6+4*p:]))
				}
				le.PutUint32(q[256+4*i:], q5x16High(le.Uint32(b[2:])))
			}
		}
	}
}

// unpackQ5_0x16 is the inverse of repackQ5_0x16 on one group: row i of
// the file's layout (for tests).
func unpackQ5_0x16(row []byte, group []byte, i, nb int) {
	qs, ds := group[:q5x16Quants*nb], group[q5x16Quants*nb:]
	le := binary.LittleEndian
	for k := 0; k < nb; k++ {
		b := row[k*q5_0Bytes : (k+1)*q5_0Bytes]
		q := qs[q5x16Quants*k:]
		b[0], b[1] = ds[32*k+2*i], ds[32*k+2*i+1]
		le.PutUint32(b[2:], q5x16FileHigh(le.Uint32(q[256+4*i:])))
		for p := 0; p < 4; p++ {
			copy(b[6+4*p:10+4*p], q[64*p+4*i:])
		}
	}
}

// quantizeActQ5_0x16 quantises x to Q5_0x16Act: Q8_0's quants and scale
// and −16 × each block's sum of quants.
func quantizeActQ5_0x16(dst []byte, x []float32) { quantizeActX16(dst, x, -16) }

// matMulQ5_0x16 is MatMulQ of the rearranged layout (matMulX16).
func matMulQ5_0x16(out []float32, ldo int, xq []byte, ldx, batch int, w []byte) {
	matMulX16(out, ldo, xq, ldx, batch, w, x16ActBytes, q5x16Bytes, q5_0x16Asm, matMulQ5_0x16Go)
}

// q5x16Weight returns the unsigned weight (0..31) of element 4e+j of row
// i in the block of quants q, as the kernels unpack it.
func q5x16Weight(q []byte, i, e, j int) int32 {
	b := q[64*(e%4)+4*i+j]
	if e >= 4 {
		b >>= 4
	}
	h := binary.LittleEndian.Uint32(q[256+4*i:])
	return int32(b&0x0f) | int32(h>>(8*j+e)&1)<<4
}

// matMulQ5_0x16Go is the pure-Go twin of the assembly: for each row and
// token, each block's integer sum exactly as the instruction forms it
// (from the correction, Σ u·q), scaled by d_w·d_x and summed in float32
// block by block.
func matMulQ5_0x16Go(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
	gb := nb * q5x16Bytes
	t := f16Table
	for g := 0; g+gb <= len(w); g += gb {
		qs, ds := w[g:g+q5x16Quants*nb], w[g+q5x16Quants*nb:g+gb]
		r0 := g / gb * x16Rows
		for b := 0; b < batch; b++ {
			x := xq[b*ldx : b*ldx+nb*x16ActBytes]
			for i := 0; i < x16Rows; i++ {
				var acc float32
				for k := 0; k < nb; k++ {
					xb := x[x16ActBytes*k : x16ActBytes*(k+1)]
					q := qs[q5x16Quants*k : q5x16Quants*(k+1)]
					s := int32(binary.LittleEndian.Uint32(xb[32:]))
					for e := 0; e < 8; e++ {
						for j := 0; j < 4; j++ {
							s += q5x16Weight(q, i, e, j) * int32(int8(xb[4*e+j]))
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
