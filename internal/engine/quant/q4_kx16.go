package quant

import (
	"encoding/binary"
	"math"
)

// Q4_K rearranged in groups of 16 rows: an in-memory layout of Q4_K
// weights, made at load by Repack and never written to a file, in the
// manner of Q4_0's 16-row groups (q4_0vnni.go): one VPDPBUSD computes a
// 4-element piece of a sub-block's integer sum for 16 rows at once
// against 4 activation bytes broadcast to every lane, and a super-block's
// weights, unpacked once, serve a tile of tokens. Each group of 16 rows
// of nb super-blocks keeps the file's size (16·144·nb bytes); super-block
// k of the group:
//
//	qs   [4][8][16][4]uint8  chunk c, piece p, row i: the file's
//	                         qs[32c+4p : 32c+4p+4] of row i (low nibbles:
//	                         elements 64c+4p.., sub-block 2c; high
//	                         nibbles: 64c+32+4p.., sub-block 2c+1)
//	d    [16]uint16          the rows' binary16 scales
//	dmin [16]uint16          the rows' binary16 minimum scales
//	sm   [3][16]uint32       the rows' sixteen 6-bit values (scales
//	                         sc_0..7 then minimums m_0..7) five to a
//	                         word: value n at bit 6·(n%5) of word n/5,
//	                         but the last (m_7), whose bits 2w..2w+1 are
//	                         bits 30..31 of word w
//
// so that a scale is one shift and one mask of one register for 16 rows.
// Its activations are Q8_K's, as for Q4_K's own kernel. Per super-block
// and row, the kernel forms Q4_K's integer sums exactly, is = Σ_j sc_j ·
// Σ q·x over sub-block j and ms = Σ_j m_j · (bsum_2j + bsum_2j+1), and
// adds (d·dy)·is, then −(dmin·dy)·ms, into the row's float32 sum.

// q4kx16Bytes is the size of one super-block of a group of 16 rows.
const q4kx16Bytes = x16Rows * q4_KBytes

var q4_Kx16Repacker = Repacker{
	Name: x16Name,
	Rows: x16Rows,
	Kernel: &Kernel{
		BlockSize: qkK, BlockBytes: q4_KBytes, RowGroup: x16Rows,
		ActType: Q8_K, QuantizeAct: quantizeActQ8_K,
		DotQ: func(xq, w []byte) float32 {
			panic("quant: DotQ on one row of an interleaved layout")
		},
		DotQRows: func(out []float32, xq, w []byte) {
			matMulQ4_Kx16(out, len(out), xq, len(xq), 1, w)
		},
		MatMulQ: matMulQ4_Kx16,
	},
	Repack: repackQ4_Kx16,
}

// q4kx16Packed returns the three words of the sixteen 6-bit values of one
// row's packed scales s (see the layout).
func q4kx16Packed(s *[12]byte) (w [3]uint32) {
	var v [16]uint32
	for j := 0; j < 8; j++ {
		sc, m := scaleMinK4(j, s)
		v[j], v[8+j] = uint32(sc), uint32(m)
	}
	for n := 0; n < 15; n++ {
		w[n/5] |= v[n] << (6 * (n % 5))
	}
	for k := 0; k < 3; k++ {
		w[k] |= (v[15] >> (2 * k) & 3) << 30
	}
	return w
}

// q4kx16Value returns value n (0..15) of the words w (q4kx16Packed).
func q4kx16Value(w [3]uint32, n int) uint32 {
	if n == 15 {
		return w[0]>>30 | (w[1]>>30)<<2 | (w[2]>>30)<<4
	}
	return w[n/5] >> (6 * (n % 5)) & 63
}

// repackQ4_Kx16 rearranges whole groups of 16 Q4_K rows of cols elements.
func repackQ4_Kx16(dst, src []byte, cols int) {
	nb := cols / qkK
	gb := nb * q4kx16Bytes
	if gb == 0 {
		return
	}
	rb := nb * q4_KBytes
	dst = dst[:len(src)]
	le := binary.LittleEndian
	for g := 0; g+gb <= len(src); g += gb {
		s, d := src[g:g+gb], dst[g:g+gb]
		for k := 0; k < nb; k++ {
			o := (*[q4kx16Bytes]byte)(d[k*q4kx16Bytes:])
			for i := 0; i < x16Rows; i++ {
				b := (*[q4_KBytes]byte)(s[i*rb+k*q4_KBytes:])
				for c := 0; c < 4; c++ {
					for p := 0; p < 8; p++ {
						copy(o[512*c+64*p+4*i:][:4], b[16+32*c+4*p:])
					}
				}
				o[2048+2*i], o[2048+2*i+1] = b[0], b[1]
				o[2080+2*i], o[2080+2*i+1] = b[2], b[3]
				w := q4kx16Packed((*[12]byte)(b[4:16]))
				for n := 0; n < 3; n++ {
					le.PutUint32(o[2112+64*n+4*i:], w[n])
				}
			}
		}
	}
}

// q4kx16Words returns the packed scale words of row i of super-block o.
func q4kx16Words(o []byte, i int) (w [3]uint32) {
	for n := 0; n < 3; n++ {
		w[n] = binary.LittleEndian.Uint32(o[2112+64*n+4*i:])
	}
	return w
}

// matMulQ4_Kx16 is MatMulQ of the rearranged layout (matMulX16, on
// Q8_K activations).
func matMulQ4_Kx16(out []float32, ldo int, xq []byte, ldx, batch int, w []byte) {
	matMulX16(out, ldo, xq, ldx, batch, w, q8_KBytes, q4kx16Bytes, q4_Kx16Asm, matMulQ4_Kx16Go)
}

// q4kx16Sums returns the integer sums is and ms of row i of the
// rearranged super-block o against the Q8_K block a, as the kernels form
// them.
func q4kx16Sums(o, a []byte, i int) (is, ms int32) {
	w := q4kx16Words(o, i)
	for j := 0; j < 8; j++ {
		c, hi := j/2, j%2
		var s int32
		for p := 0; p < 8; p++ {
			u := o[512*c+64*p+4*i : 512*c+64*p+4*i+4]
			for l := 0; l < 4; l++ {
				q := int32(u[l] & 0x0f)
				if hi == 1 {
					q = int32(u[l] >> 4)
				}
				s += q * int32(int8(a[4+64*c+32*hi+4*p+l]))
			}
		}
		is += int32(q4kx16Value(w, j)) * s
		bs := int32(int16(le16(a[260+4*j:]))) + int32(int16(le16(a[262+4*j:])))
		ms += int32(q4kx16Value(w, 8+j)) * bs
	}
	return is, ms
}

// matMulQ4_Kx16Go is the pure-Go twin of the assembly: for each row and
// token, each super-block's integer sums (q4kx16Sums), then
// acc += (d·dy)·is and acc −= (dmin·dy)·ms in float32.
func matMulQ4_Kx16Go(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
	gb := nb * q4kx16Bytes
	t := f16Table
	for g := 0; g+gb <= len(w); g += gb {
		r0 := g / gb * x16Rows
		for b := 0; b < batch; b++ {
			x := xq[b*ldx : b*ldx+nb*q8_KBytes]
			for i := 0; i < x16Rows; i++ {
				var acc float32
				for k := 0; k < nb; k++ {
					o := w[g+k*q4kx16Bytes : g+(k+1)*q4kx16Bytes]
					a := x[k*q8_KBytes : (k+1)*q8_KBytes]
					is, ms := q4kx16Sums(o, a, i)
					dy := math.Float32frombits(binary.LittleEndian.Uint32(a))
					acc += t[le16(o[2048+2*i:])] * dy * float32(is)
					acc -= t[le16(o[2080+2*i:])] * dy * float32(ms)
				}
				out[b*ldo+r0+i] = acc
			}
		}
	}
}
