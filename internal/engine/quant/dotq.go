package quant

import (
	"encoding/binary"
	"math"
)

// The integer dot products of quantised weights with quantised
// activations, in pure Go: int8×int8 products summed in int32 within a
// block (as ggml's generic vec_dot_*_q8_* do), then scaled by the two
// block scales and summed in float32. These are the reference for the
// SIMD versions and the implementation on every other architecture.

// le16 reads a little-endian uint16 at the start of b.
func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

// dot32 returns Σ a[j]*b[j] over 32 signed bytes.
func dot32(a, b *[32]byte) int32 {
	var s0, s1, s2, s3 int32
	for j := 0; j < 32; j += 4 {
		aa, bb := (*[4]byte)(a[j:]), (*[4]byte)(b[j:])
		s0 += int32(int8(aa[0])) * int32(int8(bb[0]))
		s1 += int32(int8(aa[1])) * int32(int8(bb[1]))
		s2 += int32(int8(aa[2])) * int32(int8(bb[2]))
		s3 += int32(int8(aa[3])) * int32(int8(bb[3]))
	}
	return (s0 + s1) + (s2 + s3)
}

// dotQ8_0Go is Q8_0 weights × Q8_0 activations.
func dotQ8_0Go(xq, w []byte) float32 {
	nb := len(xq) / q8_0Bytes
	w = w[:nb*q8_0Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[q8_0Bytes]byte)(xq[i*q8_0Bytes:])
		b := (*[q8_0Bytes]byte)(w[i*q8_0Bytes:])
		s := dot32((*[32]byte)(a[2:]), (*[32]byte)(b[2:]))
		sum += float32(s) * (t[le16(b[:])] * t[le16(a[:])])
	}
	return sum
}

// dotQ4_0Go is Q4_0 weights × Q8_0 activations.
func dotQ4_0Go(xq, w []byte) float32 {
	nb := len(xq) / q8_0Bytes
	w = w[:nb*q4_0Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[q8_0Bytes]byte)(xq[i*q8_0Bytes:])
		b := (*[q4_0Bytes]byte)(w[i*q4_0Bytes:])
		lo, hi := (*[16]byte)(a[2:]), (*[16]byte)(a[18:])
		q := (*[16]byte)(b[2:])
		var s0, s1, s2, s3 int32
		for j := 0; j < 16; j += 2 {
			s0 += (int32(q[j]&0x0f) - 8) * int32(int8(lo[j]))
			s1 += (int32(q[j]>>4) - 8) * int32(int8(hi[j]))
			s2 += (int32(q[j+1]&0x0f) - 8) * int32(int8(lo[j+1]))
			s3 += (int32(q[j+1]>>4) - 8) * int32(int8(hi[j+1]))
		}
		sum += float32((s0+s1)+(s2+s3)) * (t[le16(b[:])] * t[le16(a[:])])
	}
	return sum
}

// dotQ5_0Go is Q5_0 weights × Q8_0 activations.
func dotQ5_0Go(xq, w []byte) float32 {
	nb := len(xq) / q8_0Bytes
	w = w[:nb*q5_0Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[q8_0Bytes]byte)(xq[i*q8_0Bytes:])
		b := (*[q5_0Bytes]byte)(w[i*q5_0Bytes:])
		lo, hi := (*[16]byte)(a[2:]), (*[16]byte)(a[18:])
		qh := binary.LittleEndian.Uint32(b[2:])
		q := (*[16]byte)(b[6:])
		var s0, s1 int32
		hl, hh := qh, qh>>16 // fifth bits, consumed from the bottom
		for j := 0; j < 16; j++ {
			v0 := int32(q[j]&0x0f) | int32(hl&1)<<4
			v1 := int32(q[j]>>4) | int32(hh&1)<<4
			hl, hh = hl>>1, hh>>1
			s0 += (v0 - 16) * int32(int8(lo[j]))
			s1 += (v1 - 16) * int32(int8(hi[j]))
		}
		sum += float32(s0+s1) * (t[le16(b[:])] * t[le16(a[:])])
	}
	return sum
}

// dotQ4_1Go is Q4_1 weights × Q8_1 activations: d_w*d_x*Σq*q8 + m_w*s_x.
func dotQ4_1Go(xq, w []byte) float32 {
	nb := len(xq) / q8_1Bytes
	w = w[:nb*q4_1Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[q8_1Bytes]byte)(xq[i*q8_1Bytes:])
		b := (*[q4_1Bytes]byte)(w[i*q4_1Bytes:])
		lo, hi := (*[16]byte)(a[4:]), (*[16]byte)(a[20:])
		q := (*[16]byte)(b[4:])
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			s0 += int32(q[j]&0x0f) * int32(int8(lo[j]))
			s1 += int32(q[j]>>4) * int32(int8(hi[j]))
		}
		sum += float32(s0+s1)*(t[le16(b[:])]*t[le16(a[:])]) + t[le16(b[2:])]*t[le16(a[2:])]
	}
	return sum
}

// dotQ5_1Go is Q5_1 weights × Q8_1 activations.
func dotQ5_1Go(xq, w []byte) float32 {
	nb := len(xq) / q8_1Bytes
	w = w[:nb*q5_1Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[q8_1Bytes]byte)(xq[i*q8_1Bytes:])
		b := (*[q5_1Bytes]byte)(w[i*q5_1Bytes:])
		lo, hi := (*[16]byte)(a[4:]), (*[16]byte)(a[20:])
		qh := binary.LittleEndian.Uint32(b[4:])
		q := (*[16]byte)(b[8:])
		var s0, s1 int32
		hl, hh := qh, qh>>16
		for j := 0; j < 16; j++ {
			v0 := int32(q[j]&0x0f) | int32(hl&1)<<4
			v1 := int32(q[j]>>4) | int32(hh&1)<<4
			hl, hh = hl>>1, hh>>1
			s0 += v0 * int32(int8(lo[j]))
			s1 += v1 * int32(int8(hi[j]))
		}
		sum += float32(s0+s1)*(t[le16(b[:])]*t[le16(a[:])]) + t[le16(b[2:])]*t[le16(a[2:])]
	}
	return sum
}

// q8KScale returns the float32 scale of a Q8_K activation block.
func q8KScale(a *[q8_KBytes]byte) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(a[:]))
}

// q8KMinSum returns Σ_j m_j * (bsum[2j] + bsum[2j+1]) over the eight
// 32-element sub-blocks of a Q8_K block, with the six-bit minimums of a
// Q4_K/Q5_K block.
func q8KMinSum(a *[q8_KBytes]byte, s *[12]byte) int32 {
	var ms int32
	for j := 0; j < 8; j++ {
		_, m := scaleMinK4(j, s)
		bs := int32(int16(le16(a[260+4*j:]))) + int32(int16(le16(a[262+4*j:])))
		ms += int32(m) * bs
	}
	return ms
}

// dotQ4_KGo is Q4_K weights × Q8_K activations.
func dotQ4_KGo(xq, w []byte) float32 {
	nb := len(xq) / q8_KBytes
	w = w[:nb*q4_KBytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[q8_KBytes]byte)(xq[i*q8_KBytes:])
		b := (*[q4_KBytes]byte)(w[i*q4_KBytes:])
		s := (*[12]byte)(b[4:16])
		var is int32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[16+32*c:])
			lo := (*[32]byte)(a[4+64*c:])
			hi := (*[32]byte)(a[36+64*c:])
			var l0, l1, h0, h1 int32
			for l := 0; l < 32; l += 2 {
				l0 += int32(q[l]&0x0f) * int32(int8(lo[l]))
				l1 += int32(q[l+1]&0x0f) * int32(int8(lo[l+1]))
				h0 += int32(q[l]>>4) * int32(int8(hi[l]))
				h1 += int32(q[l+1]>>4) * int32(int8(hi[l+1]))
			}
			sc1, _ := scaleMinK4(2*c, s)
			sc2, _ := scaleMinK4(2*c+1, s)
			is += int32(sc1)*(l0+l1) + int32(sc2)*(h0+h1)
		}
		ms := q8KMinSum(a, s)
		dy := q8KScale(a)
		// The conversions keep each product rounded on its own (no
		// fused multiply-add, whatever the compiler): the AVX2 kernel
		// takes these steps and gets these bits.
		sum += float32(t[le16(b[:])]*dy*float32(is)) - float32(t[le16(b[2:])]*dy*float32(ms))
	}
	return sum
}

// dotQ5_KGo is Q5_K weights × Q8_K activations.
func dotQ5_KGo(xq, w []byte) float32 {
	nb := len(xq) / q8_KBytes
	w = w[:nb*q5_KBytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[q8_KBytes]byte)(xq[i*q8_KBytes:])
		b := (*[q5_KBytes]byte)(w[i*q5_KBytes:])
		s := (*[12]byte)(b[4:16])
		qh := (*[32]byte)(b[16:48])
		var is int32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[48+32*c:])
			lo := (*[32]byte)(a[4+64*c:])
			hi := (*[32]byte)(a[36+64*c:])
			var l0, h0 int32
			sl, sh := uint(2*c)&7, uint(2*c+1)&7
			for l := 0; l < 32; l++ {
				vl := int32(q[l]&0x0f) | int32(qh[l]>>sl&1)<<4
				vh := int32(q[l]>>4) | int32(qh[l]>>sh&1)<<4
				l0 += vl * int32(int8(lo[l]))
				h0 += vh * int32(int8(hi[l]))
			}
			sc1, _ := scaleMinK4(2*c, s)
			sc2, _ := scaleMinK4(2*c+1, s)
			is += int32(sc1)*l0 + int32(sc2)*h0
		}
		ms := q8KMinSum(a, s)
		dy := q8KScale(a)
		sum += t[le16(b[:])]*dy*float32(is) - t[le16(b[2:])]*dy*float32(ms)
	}
	return sum
}

// dotQ6_KGo is Q6_K weights × Q8_K activations.
func dotQ6_KGo(xq, w []byte) float32 {
	nb := len(xq) / q8_KBytes
	w = w[:nb*q6_KBytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		a := (*[q8_KBytes]byte)(xq[i*q8_KBytes:])
		b := (*[q6_KBytes]byte)(w[i*q6_KBytes:])
		var is int32
		for h := 0; h < 2; h++ {
			ql := (*[64]byte)(b[64*h:])
			qh := (*[32]byte)(b[128+32*h:])
			sc := (*[8]byte)(b[192+8*h:])
			y := (*[128]byte)(a[4+128*h:])
			for g := 0; g < 2; g++ {
				lA := (*[16]byte)(ql[16*g:])
				lB := (*[16]byte)(ql[32+16*g:])
				hh := (*[16]byte)(qh[16*g:])
				y1 := (*[16]byte)(y[16*g:])
				y2 := (*[16]byte)(y[32+16*g:])
				y3 := (*[16]byte)(y[64+16*g:])
				y4 := (*[16]byte)(y[96+16*g:])
				var a1, a2, a3, a4 int32
				for l := 0; l < 16; l++ {
					p, c, e := lA[l], lB[l], hh[l]
					a1 += (int32(p&0x0f|e<<4&0x30) - 32) * int32(int8(y1[l]))
					a2 += (int32(c&0x0f|e<<2&0x30) - 32) * int32(int8(y2[l]))
					a3 += (int32(p>>4|e&0x30) - 32) * int32(int8(y3[l]))
					a4 += (int32(c>>4|e>>2&0x30) - 32) * int32(int8(y4[l]))
				}
				is += int32(int8(sc[g]))*a1 + int32(int8(sc[g+2]))*a2 +
					int32(int8(sc[g+4]))*a3 + int32(int8(sc[g+6]))*a4
			}
		}
		sum += float32(t[le16(b[208:])] * q8KScale(a) * float32(is)) // rounded as dotQ4_KGo's
	}
	return sum
}
