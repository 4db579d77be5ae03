package quant

import "encoding/binary"

// Q4_K: super-blocks of 256 elements, 144 bytes (ggml block_q4_K):
//
//	d      uint16     binary16 scale of the sub-block scales
//	dmin   uint16     binary16 scale of the sub-block minimums
//	scales [12]byte   8 six-bit scales and 8 six-bit minimums (scaleMinK4)
//	qs     [128]byte  4-bit quants
//
// The 256 elements form 8 sub-blocks of 32; sub-block j has scale
// d*sc[j] and minimum dmin*m[j], and element value = d*sc*q - dmin*m.
// Byte qs[32*c+l] holds element 64*c+l in its low nibble and 64*c+32+l in
// its high nibble (c = 0..3).

const (
	qkK       = 256 // elements per K-quant super-block (QK_K)
	q4_KBytes = 2 + 2 + 12 + 128
)

func init() {
	register(Q4_K, Kernel{BlockSize: qkK, BlockBytes: q4_KBytes, Dequant: dequantQ4_K, Dot: dotQ4_K, Quantize: quantizeQ4_K, ActType: Q8_K, DotQ: dotQ4_KImpl, DotQRows: rowsQ4_KImpl})
}

// scaleMinK4 unpacks the six-bit scale and minimum of sub-block j (0..7)
// from the 12 packed bytes shared by Q4_K and Q5_K: sub-blocks 0..3 use the
// low six bits of s[j] and s[j+4]; sub-blocks 4..7 take their low four bits
// from s[j+4] and their top two bits from the spare top bits of s[j-4] and
// s[j].
func scaleMinK4(j int, s *[12]byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0x0f | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

func dequantQ4_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	for i := 0; i < nb; i++ {
		b := src[i*q4_KBytes : (i+1)*q4_KBytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b))
		dmin := f16ToF32(binary.LittleEndian.Uint16(b[2:]))
		s := (*[12]byte)(b[4:16])
		qs := b[16:]
		y := dst[i*qkK : (i+1)*qkK]
		for c := 0; c < 4; c++ {
			sc1, m1 := scaleMinK4(2*c, s)
			sc2, m2 := scaleMinK4(2*c+1, s)
			d1, min1 := d*float32(sc1), dmin*float32(m1)
			d2, min2 := d*float32(sc2), dmin*float32(m2)
			q := qs[32*c : 32*c+32]
			for l := 0; l < 32; l++ {
				y[64*c+l] = float32(d1*float32(q[l]&0x0f)) - min1
				y[64*c+32+l] = float32(d2*float32(q[l]>>4)) - min2
			}
		}
	}
}

func dotQ4_K(x []float32, w []byte) float32 {
	nb := len(x) / qkK
	w = w[:nb*q4_KBytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q4_KBytes]byte)(w[i*q4_KBytes:])
		xb := (*[qkK]float32)(x[i*qkK:])
		s := (*[12]byte)(b[4:16])
		var sumq, summ float32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[16+32*c:])
			xx := (*[64]float32)(xb[64*c:])
			var l0, l1, h0, h1, xl, xh float32
			for l := 0; l < 32; l += 4 {
				q4 := (*[4]byte)(q[l:])
				lo := (*[4]float32)(xx[l:])
				hi := (*[4]float32)(xx[32+l:])
				l0 += lo[0]*float32(q4[0]&0x0f) + lo[1]*float32(q4[1]&0x0f)
				l1 += lo[2]*float32(q4[2]&0x0f) + lo[3]*float32(q4[3]&0x0f)
				h0 += hi[0]*float32(q4[0]>>4) + hi[1]*float32(q4[1]>>4)
				h1 += hi[2]*float32(q4[2]>>4) + hi[3]*float32(q4[3]>>4)
				xl += (lo[0] + lo[1]) + (lo[2] + lo[3])
				xh += (hi[0] + hi[1]) + (hi[2] + hi[3])
			}
			sc1, m1 := scaleMinK4(2*c, s)
			sc2, m2 := scaleMinK4(2*c+1, s)
			sumq += float32(sc1)*(l0+l1) + float32(sc2)*(h0+h1)
			summ += float32(m1)*xl + float32(m2)*xh
		}
		d := t[uint16(b[0])|uint16(b[1])<<8]
		dmin := t[uint16(b[2])|uint16(b[3])<<8]
		sum += d*sumq - dmin*summ
	}
	return sum
}
