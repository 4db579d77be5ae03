package quant

import "encoding/binary"

// Q5_1: blocks of 32 elements, 24 bytes (ggml block_q5_1):
//
//	d  uint16    binary16 scale
//	m  uint16    binary16 minimum
//	qh uint32    fifth bits: bit j for element j
//	qs [16]byte  low 4 bits, nibbles as in Q4_0; value = d*q + m

const (
	q5_1Block = 32
	q5_1Bytes = 4 + 4 + 16
)

func init() {
	register(Q5_1, Kernel{BlockSize: q5_1Block, BlockBytes: q5_1Bytes, Dequant: dequantQ5_1, Dot: dotQ5_1, Quantize: quantizeQ5_1, ActType: Q8_1, DotQ: dotQ5_1Impl, DotQRows: rowsQ5_1Impl})
}

func dequantQ5_1(dst []float32, src []byte) {
	nb := len(dst) / q5_1Block
	for i := 0; i < nb; i++ {
		b := src[i*q5_1Bytes : (i+1)*q5_1Bytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b))
		m := f16ToF32(binary.LittleEndian.Uint16(b[2:]))
		qh := binary.LittleEndian.Uint32(b[4:])
		y := dst[i*q5_1Block : (i+1)*q5_1Block]
		for j := 0; j < 16; j++ {
			h0 := int(qh>>j&1) << 4
			h1 := int(qh>>(j+16)&1) << 4
			y[j] = float32(float32(int(b[8+j]&0x0f)|h0)*d) + m
			y[j+16] = float32(float32(int(b[8+j]>>4)|h1)*d) + m
		}
	}
}

// quantizeQ5_1 follows quantize_row_q5_1_ref: d = (max-min)/31, m = min,
// q = trunc((x-min)/d + 0.5).
func quantizeQ5_1(dst []byte, src []float32) {
	nb := len(src) / q5_1Block
	for i := 0; i < nb; i++ {
		x := src[i*q5_1Block : (i+1)*q5_1Block]
		b := dst[i*q5_1Bytes : (i+1)*q5_1Bytes]
		lo, hi := minMax(x)
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(b, f32ToF16(d))
		binary.LittleEndian.PutUint16(b[2:], f32ToF16(lo))
		var qh uint32
		for j := 0; j < 16; j++ {
			q0 := uint8(truncInt8(float32((x[j]-lo)*id) + 0.5))
			q1 := uint8(truncInt8(float32((x[j+16]-lo)*id) + 0.5))
			b[8+j] = q0&0x0f | (q1&0x0f)<<4
			qh |= uint32(q0>>4&1) << j
			qh |= uint32(q1>>4&1) << (j + 16)
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
	}
}

func dotQ5_1(x []float32, w []byte) float32 {
	nb := len(x) / q5_1Block
	w = w[:nb*q5_1Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q5_1Bytes]byte)(w[i*q5_1Bytes:])
		xb := (*[q5_1Block]float32)(x[i*q5_1Block:])
		qh := uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24
		var s0, s1, s2, s3, xs0, xs1 float32
		for j := 0; j < 16; j += 4 {
			q := (*[4]byte)(b[8+j:])
			lo := (*[4]float32)(xb[j:])
			hi := (*[4]float32)(xb[16+j:])
			hl := qh >> j << 4
			hh := qh >> (j + 16) << 4
			s0 += lo[0]*float32(uint32(q[0]&0x0f)|hl&0x10) + hi[0]*float32(uint32(q[0]>>4)|hh&0x10)
			s1 += lo[1]*float32(uint32(q[1]&0x0f)|hl>>1&0x10) + hi[1]*float32(uint32(q[1]>>4)|hh>>1&0x10)
			s2 += lo[2]*float32(uint32(q[2]&0x0f)|hl>>2&0x10) + hi[2]*float32(uint32(q[2]>>4)|hh>>2&0x10)
			s3 += lo[3]*float32(uint32(q[3]&0x0f)|hl>>3&0x10) + hi[3]*float32(uint32(q[3]>>4)|hh>>3&0x10)
			xs0 += (lo[0] + lo[1]) + (lo[2] + lo[3])
			xs1 += (hi[0] + hi[1]) + (hi[2] + hi[3])
		}
		d := t[uint16(b[0])|uint16(b[1])<<8]
		m := t[uint16(b[2])|uint16(b[3])<<8]
		sum += d*((s0+s1)+(s2+s3)) + m*(xs0+xs1)
	}
	return sum
}
