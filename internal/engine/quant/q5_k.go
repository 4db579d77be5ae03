package quant

import "encoding/binary"

// Q5_K: super-blocks of 256 elements, 176 bytes (ggml block_q5_K):
//
//	d      uint16     binary16 scale of the sub-block scales
//	dmin   uint16     binary16 scale of the sub-block minimums
//	scales [12]byte   8 six-bit scales and minimums, packed as in Q4_K
//	qh     [32]byte   fifth bits
//	qs     [128]byte  low 4 bits, nibbles as in Q4_K
//
// Element 64*c+l (l < 32) has its fifth bit in bit 2c of qh[l], element
// 64*c+32+l in bit 2c+1; value = d*sc*q - dmin*m as in Q4_K.

const q5_KBytes = 2 + 2 + 12 + 32 + 128

func init() {
	register(Q5_K, Kernel{BlockSize: qkK, BlockBytes: q5_KBytes, Dequant: dequantQ5_K, Dot: dotQ5_K, Quantize: quantizeQ5_K, ActType: Q8_K, DotQ: dotQ5_KImpl, DotQRows: rowsQ5_KImpl})
}

func dequantQ5_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	for i := 0; i < nb; i++ {
		b := src[i*q5_KBytes : (i+1)*q5_KBytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b))
		dmin := f16ToF32(binary.LittleEndian.Uint16(b[2:]))
		s := (*[12]byte)(b[4:16])
		qh := b[16:48]
		qs := b[48:]
		y := dst[i*qkK : (i+1)*qkK]
		for c := 0; c < 4; c++ {
			sc1, m1 := scaleMinK4(2*c, s)
			sc2, m2 := scaleMinK4(2*c+1, s)
			d1, min1 := d*float32(sc1), dmin*float32(m1)
			d2, min2 := d*float32(sc2), dmin*float32(m2)
			q := qs[32*c : 32*c+32]
			for l := 0; l < 32; l++ {
				lo := int(q[l]&0x0f) | int(qh[l]>>(2*c)&1)<<4
				hi := int(q[l]>>4) | int(qh[l]>>(2*c+1)&1)<<4
				y[64*c+l] = float32(d1*float32(lo)) - min1
				y[64*c+32+l] = float32(d2*float32(hi)) - min2
			}
		}
	}
}

func dotQ5_K(x []float32, w []byte) float32 {
	nb := len(x) / qkK
	w = w[:nb*q5_KBytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q5_KBytes]byte)(w[i*q5_KBytes:])
		xb := (*[qkK]float32)(x[i*qkK:])
		s := (*[12]byte)(b[4:16])
		qh := (*[32]byte)(b[16:48])
		var sumq, summ float32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[48+32*c:])
			xx := (*[64]float32)(xb[64*c:])
			sh := uint(2 * c)
			var l0, l1, h0, h1, xl, xh float32
			for l := 0; l < 32; l += 4 {
				q4 := (*[4]byte)(q[l:])
				h4 := (*[4]byte)(qh[l:])
				lo := (*[4]float32)(xx[l:])
				hi := (*[4]float32)(xx[32+l:])
				// (h>>sh)<<4 & 0x10 is the fifth bit of the low element,
				// (h>>sh)<<3 & 0x10 that of the high one.
				hb0, hb1, hb2, hb3 := h4[0]>>sh, h4[1]>>sh, h4[2]>>sh, h4[3]>>sh
				l0 += lo[0]*float32(q4[0]&0x0f|hb0<<4&0x10) + lo[1]*float32(q4[1]&0x0f|hb1<<4&0x10)
				l1 += lo[2]*float32(q4[2]&0x0f|hb2<<4&0x10) + lo[3]*float32(q4[3]&0x0f|hb3<<4&0x10)
				h0 += hi[0]*float32(q4[0]>>4|hb0<<3&0x10) + hi[1]*float32(q4[1]>>4|hb1<<3&0x10)
				h1 += hi[2]*float32(q4[2]>>4|hb2<<3&0x10) + hi[3]*float32(q4[3]>>4|hb3<<3&0x10)
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
