package quant

import "encoding/binary"

// Q2_K: super-blocks of 256 elements, 84 bytes (ggml block_q2_K):
//
//	scales [16]byte  per 16-element sub-block: low nibble scale, high
//	                 nibble minimum
//	qs     [64]byte  2-bit quants
//	d      uint16    binary16 scale of the scales
//	dmin   uint16    binary16 scale of the minimums
//
// For half h (0, 1), shift s = 2j (j = 0..3) and l < 16, with Q = qs[32h:]:
// element 128h+32j+l    = (Q[l]>>s)&3    in sub-block 8h+2j,
// element 128h+32j+16+l = (Q[16+l]>>s)&3 in sub-block 8h+2j+1;
// value = d*(sc&15)*q - dmin*(sc>>4).

const q2_KBytes = 16 + 64 + 2 + 2

func init() {
	register(Q2_K, Kernel{BlockSize: qkK, BlockBytes: q2_KBytes, Dequant: dequantQ2_K, Dot: dotQ2_K, Quantize: quantizeQ2_K})
}

func dequantQ2_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	for i := 0; i < nb; i++ {
		b := src[i*q2_KBytes : (i+1)*q2_KBytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b[80:]))
		dmin := f16ToF32(binary.LittleEndian.Uint16(b[82:]))
		y := dst[i*qkK : (i+1)*qkK]
		k := 0
		for h := 0; h < 2; h++ {
			q := b[16+32*h : 16+32*h+32]
			for j := 0; j < 4; j++ {
				shift := 2 * j
				for half := 0; half < 2; half++ {
					sc := b[8*h+2*j+half]
					dl, ml := d*float32(sc&0x0f), dmin*float32(sc>>4)
					for l := 0; l < 16; l++ {
						y[k] = float32(dl*float32(q[16*half+l]>>shift&3)) - ml
						k++
					}
				}
			}
		}
	}
}

func dotQ2_K(x []float32, w []byte) float32 {
	nb := len(x) / qkK
	w = w[:nb*q2_KBytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q2_KBytes]byte)(w[i*q2_KBytes:])
		xb := (*[qkK]float32)(x[i*qkK:])
		var sumq, summ float32
		for h := 0; h < 2; h++ {
			q := (*[32]byte)(b[16+32*h:])
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				xx := (*[32]float32)(xb[128*h+32*j:])
				var a0, a1, b0, b1, xa, xc float32
				for l := 0; l < 16; l += 4 {
					qa := (*[4]byte)(q[l:])
					qb := (*[4]byte)(q[16+l:])
					xs := (*[4]float32)(xx[l:])
					ys := (*[4]float32)(xx[16+l:])
					a0 += xs[0]*float32(qa[0]>>shift&3) + xs[1]*float32(qa[1]>>shift&3)
					a1 += xs[2]*float32(qa[2]>>shift&3) + xs[3]*float32(qa[3]>>shift&3)
					b0 += ys[0]*float32(qb[0]>>shift&3) + ys[1]*float32(qb[1]>>shift&3)
					b1 += ys[2]*float32(qb[2]>>shift&3) + ys[3]*float32(qb[3]>>shift&3)
					xa += (xs[0] + xs[1]) + (xs[2] + xs[3])
					xc += (ys[0] + ys[1]) + (ys[2] + ys[3])
				}
				s1, s2 := b[8*h+2*j], b[8*h+2*j+1]
				sumq += float32(s1&0x0f)*(a0+a1) + float32(s2&0x0f)*(b0+b1)
				summ += float32(s1>>4)*xa + float32(s2>>4)*xc
			}
		}
		d := t[uint16(b[80])|uint16(b[81])<<8]
		dmin := t[uint16(b[82])|uint16(b[83])<<8]
		sum += d*sumq - dmin*summ
	}
	return sum
}
