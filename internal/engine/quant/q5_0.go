package quant

import "encoding/binary"

// Q5_0: blocks of 32 elements, 22 bytes (ggml block_q5_0):
//
//	d  uint16    binary16 scale
//	qh uint32    fifth bits: bit j for element j (j < 32)
//	qs [16]byte  low 4 bits, nibbles as in Q4_0; value = d * (q - 16)

const (
	q5_0Block = 32
	q5_0Bytes = 2 + 4 + 16
)

func init() {
	register(Q5_0, Kernel{BlockSize: q5_0Block, BlockBytes: q5_0Bytes, Dequant: dequantQ5_0, Dot: dotQ5_0, Quantize: quantizeQ5_0, ActType: Q8_0, DotQ: dotQ5_0Impl, DotQRows: rowsQ5_0Impl})
}

func dequantQ5_0(dst []float32, src []byte) {
	nb := len(dst) / q5_0Block
	for i := 0; i < nb; i++ {
		b := src[i*q5_0Bytes : (i+1)*q5_0Bytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b))
		qh := binary.LittleEndian.Uint32(b[2:])
		y := dst[i*q5_0Block : (i+1)*q5_0Block]
		for j := 0; j < 16; j++ {
			h0 := int(qh>>j&1) << 4
			h1 := int(qh>>(j+16)&1) << 4
			y[j] = float32(int(b[6+j]&0x0f)|h0-16) * d
			y[j+16] = float32(int(b[6+j]>>4)|h1-16) * d
		}
	}
}

// quantizeQ5_0 follows quantize_row_q5_0_ref: d = max/-16,
// q = min(31, trunc(x/d + 16.5)).
func quantizeQ5_0(dst []byte, src []float32) {
	nb := len(src) / q5_0Block
	for i := 0; i < nb; i++ {
		x := src[i*q5_0Block : (i+1)*q5_0Block]
		b := dst[i*q5_0Bytes : (i+1)*q5_0Bytes]
		var amax, vmax float32
		for _, v := range x {
			if amax < abs32(v) {
				amax, vmax = abs32(v), v
			}
		}
		d := vmax / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(b, f32ToF16(d))
		var qh uint32
		for j := 0; j < 16; j++ {
			q0 := uint8(min(31, truncInt8(float32(x[j]*id)+16.5)))
			q1 := uint8(min(31, truncInt8(float32(x[j+16]*id)+16.5)))
			b[6+j] = q0&0x0f | (q1&0x0f)<<4
			qh |= uint32(q0>>4&1) << j
			qh |= uint32(q1>>4&1) << (j + 16)
		}
		binary.LittleEndian.PutUint32(b[2:], qh)
	}
}

func dotQ5_0(x []float32, w []byte) float32 {
	nb := len(x) / q5_0Block
	w = w[:nb*q5_0Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q5_0Bytes]byte)(w[i*q5_0Bytes:])
		xb := (*[q5_0Block]float32)(x[i*q5_0Block:])
		qh := uint32(b[2]) | uint32(b[3])<<8 | uint32(b[4])<<16 | uint32(b[5])<<24
		var s0, s1, s2, s3 float32
		for j := 0; j < 16; j += 4 {
			q := (*[4]byte)(b[6+j:])
			lo := (*[4]float32)(xb[j:])
			hi := (*[4]float32)(xb[16+j:])
			hl := qh >> j << 4        // bit j+k of qh at bit 4+k
			hh := qh >> (j + 16) << 4 // bit j+16+k at bit 4+k
			s0 += lo[0]*float32(int32(uint32(q[0]&0x0f)|hl&0x10)-16) + hi[0]*float32(int32(uint32(q[0]>>4)|hh&0x10)-16)
			s1 += lo[1]*float32(int32(uint32(q[1]&0x0f)|hl>>1&0x10)-16) + hi[1]*float32(int32(uint32(q[1]>>4)|hh>>1&0x10)-16)
			s2 += lo[2]*float32(int32(uint32(q[2]&0x0f)|hl>>2&0x10)-16) + hi[2]*float32(int32(uint32(q[2]>>4)|hh>>2&0x10)-16)
			s3 += lo[3]*float32(int32(uint32(q[3]&0x0f)|hl>>3&0x10)-16) + hi[3]*float32(int32(uint32(q[3]>>4)|hh>>3&0x10)-16)
		}
		sum += t[uint16(b[0])|uint16(b[1])<<8] * ((s0 + s1) + (s2 + s3))
	}
	return sum
}
