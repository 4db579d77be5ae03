package quant

import (
	"encoding/binary"
	"math"
)

// Q6_K rearranged in groups of 16 rows: an in-memory layout of Q6_K
// weights, made at load by Repack and never written to a file, in the
// manner of Q4_K's 16-row groups (q4_kx16.go): one VPDPBUSD computes a
// 4-element piece of a sub-block's integer sum for 16 rows at once
// against 4 activation bytes broadcast to every lane, and a super-block's
// weights, unpacked once, serve a tile of tokens. Each group of 16 rows
// of nb super-blocks keeps the file's size (16·210·nb bytes); super-block
// k of the group:
//
//	ql [2][2][8][16][4]uint8  half h, n, piece p, row i: the file's
//	                          ql[64h+32n+4p : 64h+32n+4p+4] of row i
//	qh [2][8][16][4]uint8     half h, piece p, row i: the file's
//	                          qh[32h+4p : 32h+4p+4] of row i
//	sc [8][16][2]int8         pair q, row i: the row's scales of
//	                          sub-blocks 2q and 2q+1
//	d  [16]uint16             the rows' binary16 scales
//
// Element 128h+32m+4p+l (m = 0..3, l = 0..3) of row i, in sub-block
// 8h+2m+p/4, is the unsigned u = (nibble m/2 of ql[h][m%2][p][i][l]) |
// (bits 2m, 2m+1 of qh[h][p][i][l]) << 4, 0..63 for the weight u−32, so a
// piece of 16 rows is a shift, a mask and a merge of two 64-byte loads.
// Its activations are Q8_K's, as for Q6_K's own kernel. Per super-block
// and row, the kernel forms Q6_K's integer sum exactly, is = Σ_j sc_j ·
// Σ u·x over sub-block j − 32 · Σ_j sc_j · bsum_j, and adds (d·dy)·is
// into the row's float32 sum.

// q6kx16Bytes is the size of one super-block of a group of 16 rows.
const q6kx16Bytes = x16Rows * q6_KBytes

// Offsets of the parts of a rearranged super-block (see the layout).
const (
	q6kx16QH = 2048
	q6kx16SC = 3072
	q6kx16D  = 3328
)

var q6_Kx16Repacker = Repacker{
	Name: x16Name,
	Rows: x16Rows,
	Kernel: &Kernel{
		BlockSize: qkK, BlockBytes: q6_KBytes, RowGroup: x16Rows,
		ActType: Q8_K, QuantizeAct: quantizeActQ8_K,
		DotQ: func(xq, w []byte) float32 {
			panic("quant: DotQ on one row of an interleaved layout")
		},
		DotQRows: func(out []float32, xq, w []byte) {
			matMulQ6_Kx16(out, len(out), xq, len(xq), 1, w)
		},
		MatMulQ: matMulQ6_Kx16,
	},
	Repack: repackQ6_Kx16,
}

// repackQ6_Kx16 rearranges whole groups of 16 Q6_K rows of cols elements.
func repackQ6_Kx16(dst, src []byte, cols int) {
	nb := cols / qkK
	gb := nb * q6kx16Bytes
	if gb == 0 {
		return
	}
	rb := nb * q6_KBytes
	dst = dst[:len(src)]
	for g := 0; g+gb <= len(src); g += gb {
		s, d := src[g:g+gb], dst[g:g+gb]
		for k := 0; k < nb; k++ {
			o := (*[q6kx16Bytes]byte)(d[k*q6kx16Bytes:])
			for i := 0; i < x16Rows; i++ {
				b := (*[q6_KBytes]byte)(s[i*rb+k*q6_KBytes:])
				q6kx16Move(o, b, i, true)
			}
		}
	}
}

// unpackQ6_Kx16 is the inverse of repackQ6_Kx16 on one group: row i of
// the file's layout (for tests and for checking a repack).
func unpackQ6_Kx16(row []byte, group []byte, i, nb int) {
	for k := 0; k < nb; k++ {
		o := (*[q6kx16Bytes]byte)(group[k*q6kx16Bytes:])
		b := (*[q6_KBytes]byte)(row[k*q6_KBytes:])
		q6kx16Move(o, b, i, false)
	}
}

// q6kx16Move copies row i's bytes of one super-block between the file's
// block b and the rearranged super-block o: into o when in, else back.
// The one map both directions share.
func q6kx16Move(o *[q6kx16Bytes]byte, b *[q6_KBytes]byte, i int, in bool) {
	mv := func(oo, bo, n int) {
		if in {
			copy(o[oo:oo+n], b[bo:bo+n])
		} else {
			copy(b[bo:bo+n], o[oo:oo+n])
		}
	}
	for h := 0; h < 2; h++ {
		for p := 0; p < 8; p++ {
			for n := 0; n < 2; n++ {
				mv(1024*h+512*n+64*p+4*i, 64*h+32*n+4*p, 4)
			}
			mv(q6kx16QH+512*h+64*p+4*i, 128+32*h+4*p, 4)
		}
	}
	for q := 0; q < 8; q++ {
		mv(q6kx16SC+32*q+2*i, 192+2*q, 2)
	}
	mv(q6kx16D+2*i, 208, 2)
}

// q6kx16Weight returns the unsigned weight u (0..63) of element e of row
// i of the rearranged super-block o (see the layout).
func q6kx16Weight(o []byte, i, e int) int32 {
	h, m, p, l := e/128, e/32%4, e/4%8, e%4
	lo := o[1024*h+512*(m%2)+64*p+4*i+l] >> (4 * (m / 2)) & 0x0f
	hi := o[q6kx16QH+512*h+64*p+4*i+l] >> (2 * m) & 3
	return int32(lo | hi<<4)
}

// q6kx16Scale returns the scale of sub-block j of row i of the
// rearranged super-block o.
func q6kx16Scale(o []byte, i, j int) int32 {
	return int32(int8(o[q6kx16SC+32*(j/2)+2*i+j%2]))
}

// q6kx16Sum returns the integer sum is of row i of the rearranged
// super-block o against the Q8_K block a, as the kernels form it: Σ_j
// sc_j · Σ u·x − 32 · Σ_j sc_j · bsum_j.
func q6kx16Sum(o, a []byte, i int) (is int32) {
	for j := 0; j < 16; j++ {
		var s int32
		for e := 16 * j; e < 16*j+16; e++ {
			s += q6kx16Weight(o, i, e) * int32(int8(a[4+e]))
		}
		sc := q6kx16Scale(o, i, j)
		is += sc*s - 32*sc*int32(int16(le16(a[260+2*j:])))
	}
	return is
}

// matMulQ6_Kx16 is MatMulQ of the rearranged layout (matMulX16, on
// Q8_K activations).
func matMulQ6_Kx16(out []float32, ldo int, xq []byte, ldx, batch int, w []byte) {
	matMulX16(out, ldo, xq, ldx, batch, w, q8_KBytes, q6kx16Bytes, q6_Kx16Asm, matMulQ6_Kx16Go)
}

// matMulQ6_Kx16Go is the pure-Go twin of the assembly: for each row and
// token, each super-block's integer sum (q6kx16Sum), then acc += (d·dy)·is
// in float32.
func matMulQ6_Kx16Go(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
	gb := nb * q6kx16Bytes
	t := f16Table
	for g := 0; g+gb <= len(w); g += gb {
		r0 := g / gb * x16Rows
		for b := 0; b < batch; b++ {
			x := xq[b*ldx : b*ldx+nb*q8_KBytes]
			for i := 0; i < x16Rows; i++ {
				var acc float32
				for k := 0; k < nb; k++ {
					o := w[g+k*q6kx16Bytes : g+(k+1)*q6kx16Bytes]
					a := x[k*q8_KBytes : (k+1)*q8_KBytes]
					dy := math.Float32frombits(binary.LittleEndian.Uint32(a))
					acc += t[le16(o[q6kx16D+2*i:])] * dy * float32(q6kx16Sum(o, a, i))
				}
				out[b*ldo+r0+i] = acc
			}
		}
	}
}
