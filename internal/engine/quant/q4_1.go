package quant

import "encoding/binary"

// Q4_1: blocks of 32 elements, 20 bytes (ggml block_q4_1):
//
//	d  uint16    binary16 scale
//	m  uint16    binary16 minimum
//	qs [16]byte  4-bit quants, nibbles as in Q4_0; value = d*q + m

const (
	q4_1Block = 32
	q4_1Bytes = 4 + 16
)

func init() {
	register(Q4_1, Kernel{BlockSize: q4_1Block, BlockBytes: q4_1Bytes, Dequant: dequantQ4_1, Dot: dotQ4_1, Quantize: quantizeQ4_1, ActType: Q8_1, DotQ: dotQ4_1Impl, DotQRows: rowsQ4_1Impl})
}

func dequantQ4_1(dst []float32, src []byte) {
	nb := len(dst) / q4_1Block
	for i := 0; i < nb; i++ {
		b := src[i*q4_1Bytes : (i+1)*q4_1Bytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b))
		m := f16ToF32(binary.LittleEndian.Uint16(b[2:]))
		y := dst[i*q4_1Block : (i+1)*q4_1Block]
		for j := 0; j < 16; j++ {
			y[j] = float32(float32(b[4+j]&0x0f)*d) + m
			y[j+16] = float32(float32(b[4+j]>>4)*d) + m
		}
	}
}

// quantizeQ4_1 follows quantize_row_q4_1_ref: d = (max-min)/15, m = min,
// q = min(15, trunc((x-min)/d + 0.5)).
func quantizeQ4_1(dst []byte, src []float32) {
	nb := len(src) / q4_1Block
	for i := 0; i < nb; i++ {
		x := src[i*q4_1Block : (i+1)*q4_1Block]
		b := dst[i*q4_1Bytes : (i+1)*q4_1Bytes]
		lo, hi := minMax(x)
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(b, f32ToF16(d))
		binary.LittleEndian.PutUint16(b[2:], f32ToF16(lo))
		for j := 0; j < 16; j++ {
			q0 := min(15, truncInt8(float32((x[j]-lo)*id)+0.5))
			q1 := min(15, truncInt8(float32((x[j+16]-lo)*id)+0.5))
			b[4+j] = byte(q0) | byte(q1)<<4
		}
	}
}

func dotQ4_1(x []float32, w []byte) float32 {
	nb := len(x) / q4_1Block
	w = w[:nb*q4_1Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q4_1Bytes]byte)(w[i*q4_1Bytes:])
		xb := (*[q4_1Block]float32)(x[i*q4_1Block:])
		var s0, s1, s2, s3, xs0, xs1 float32
		for j := 0; j < 16; j += 4 {
			q := (*[4]byte)(b[4+j:])
			lo := (*[4]float32)(xb[j:])
			hi := (*[4]float32)(xb[16+j:])
			s0 += lo[0]*float32(q[0]&0x0f) + hi[0]*float32(q[0]>>4)
			s1 += lo[1]*float32(q[1]&0x0f) + hi[1]*float32(q[1]>>4)
			s2 += lo[2]*float32(q[2]&0x0f) + hi[2]*float32(q[2]>>4)
			s3 += lo[3]*float32(q[3]&0x0f) + hi[3]*float32(q[3]>>4)
			xs0 += (lo[0] + lo[1]) + (lo[2] + lo[3])
			xs1 += (hi[0] + hi[1]) + (hi[2] + hi[3])
		}
		d := t[uint16(b[0])|uint16(b[1])<<8]
		m := t[uint16(b[2])|uint16(b[3])<<8]
		sum += d*((s0+s1)+(s2+s3)) + m*(xs0+xs1)
	}
	return sum
}

// minMax returns the smallest and largest of x as ggml's reference
// quantisers find them (starting from ±FLT_MAX, NaNs ignored).
func minMax(x []float32) (lo, hi float32) {
	lo, hi = maxFloat32, -maxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

const maxFloat32 = 3.40282346638528859811704183484516925440e+38
