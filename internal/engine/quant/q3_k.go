package quant

import "encoding/binary"

// Q3_K: super-blocks of 256 elements, 110 bytes (ggml block_q3_K):
//
//	hmask  [32]byte  third (high) bits
//	qs     [64]byte  low 2 bits
//	scales [12]byte  16 six-bit sub-block scales, offset by 32 (q3KScales)
//	d      uint16    binary16 super-block scale
//
// The low bits are laid out as in Q2_K. Element 128h+32j+l (l < 16) has
// its high bit in bit 4h+j of hmask[l], element 128h+32j+16+l in the same
// bit of hmask[16+l]; q = low | high<<2, value = d*(scale-32)*(q-4).

const q3_KBytes = 32 + 64 + 12 + 2

func init() {
	register(Q3_K, Kernel{BlockSize: qkK, BlockBytes: q3_KBytes, Dequant: dequantQ3_K, Dot: dotQ3_K, Quantize: quantizeQ3_K})
}

// q3KScales unpacks the 16 six-bit scales of a Q3_K block, minus 32:
// scale k has its low four bits in byte k%8 (low nibble for k < 8, high
// nibble otherwise) and its top two bits in bits 2*(k/4) of byte 8+k%4.
func q3KScales(s *[12]byte) [16]int8 {
	var out [16]int8
	for k := 0; k < 16; k++ {
		lo := s[k%8] & 0x0f
		if k >= 8 {
			lo = s[k%8] >> 4
		}
		hi := s[8+k%4] >> (2 * (k / 4)) & 3
		out[k] = int8(lo|hi<<4) - 32
	}
	return out
}

func dequantQ3_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	for i := 0; i < nb; i++ {
		b := src[i*q3_KBytes : (i+1)*q3_KBytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b[108:]))
		sc := q3KScales((*[12]byte)(b[96:108]))
		hm := b[0:32]
		y := dst[i*qkK : (i+1)*qkK]
		k := 0
		for h := 0; h < 2; h++ {
			q := b[32+32*h : 32+32*h+32]
			for j := 0; j < 4; j++ {
				shift := 2 * j
				m := byte(1) << (4*h + j)
				for half := 0; half < 2; half++ {
					dl := d * float32(sc[8*h+2*j+half])
					for l := 16 * half; l < 16*half+16; l++ {
						v := int(q[l]>>shift&3) - 4
						if hm[l]&m != 0 {
							v += 4
						}
						y[k] = dl * float32(v)
						k++
					}
				}
			}
		}
	}
}

func dotQ3_K(x []float32, w []byte) float32 {
	nb := len(x) / qkK
	w = w[:nb*q3_KBytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q3_KBytes]byte)(w[i*q3_KBytes:])
		xb := (*[qkK]float32)(x[i*qkK:])
		sc := q3KScales((*[12]byte)(b[96:108]))
		hm := (*[32]byte)(b[0:32])
		var bs float32
		for h := 0; h < 2; h++ {
			q := (*[32]byte)(b[32+32*h:])
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				hs := uint(4*h + j) // hmask bit; (hm>>hs&1)<<2 adds 4
				xx := (*[32]float32)(xb[128*h+32*j:])
				var a0, a1, c0, c1 float32
				for l := 0; l < 16; l += 2 {
					qa := (*[2]byte)(q[l:])
					qb := (*[2]byte)(q[16+l:])
					ha := (*[2]byte)(hm[l:])
					hb := (*[2]byte)(hm[16+l:])
					xs := (*[2]float32)(xx[l:])
					ys := (*[2]float32)(xx[16+l:])
					a0 += xs[0] * float32(int8(qa[0]>>shift&3|(ha[0]>>hs&1)<<2)-4)
					a1 += xs[1] * float32(int8(qa[1]>>shift&3|(ha[1]>>hs&1)<<2)-4)
					c0 += ys[0] * float32(int8(qb[0]>>shift&3|(hb[0]>>hs&1)<<2)-4)
					c1 += ys[1] * float32(int8(qb[1]>>shift&3|(hb[1]>>hs&1)<<2)-4)
				}
				bs += float32(sc[8*h+2*j])*(a0+a1) + float32(sc[8*h+2*j+1])*(c0+c1)
			}
		}
		sum += t[uint16(b[108])|uint16(b[109])<<8] * bs
	}
	return sum
}
