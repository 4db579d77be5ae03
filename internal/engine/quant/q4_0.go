package quant

import "encoding/binary"

// Q4_0: blocks of 32 elements, 18 bytes (ggml block_q4_0):
//
//	d  uint16    binary16 scale
//	qs [16]byte  4-bit quants; element j is the low nibble of qs[j],
//	             element j+16 the high nibble; value = d * (q - 8)

const (
	q4_0Block = 32
	q4_0Bytes = 2 + 16
)

func init() {
	register(Q4_0, Kernel{BlockSize: q4_0Block, BlockBytes: q4_0Bytes, Dequant: dequantQ4_0, Dot: dotQ4_0, Quantize: quantizeQ4_0, ActType: Q8_0, DotQ: dotQ4_0Impl, DotQRows: rowsQ4_0Impl})
}

func dequantQ4_0(dst []float32, src []byte) {
	nb := len(dst) / q4_0Block
	for i := 0; i < nb; i++ {
		b := src[i*q4_0Bytes : (i+1)*q4_0Bytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b))
		y := dst[i*q4_0Block : (i+1)*q4_0Block]
		for j := 0; j < 16; j++ {
			y[j] = float32(int(b[2+j]&0x0f)-8) * d
			y[j+16] = float32(int(b[2+j]>>4)-8) * d
		}
	}
}

// quantizeQ4_0 follows quantize_row_q4_0_ref: the element of largest
// magnitude maps to -8, d = max/-8, q = min(15, trunc(x/d + 8.5)).
func quantizeQ4_0(dst []byte, src []float32) {
	nb := len(src) / q4_0Block
	for i := 0; i < nb; i++ {
		x := src[i*q4_0Block : (i+1)*q4_0Block]
		b := dst[i*q4_0Bytes : (i+1)*q4_0Bytes]
		var amax, vmax float32
		for _, v := range x {
			if amax < abs32(v) {
				amax, vmax = abs32(v), v
			}
		}
		d := vmax / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(b, f32ToF16(d))
		for j := 0; j < 16; j++ {
			q0 := min(15, truncInt8(float32(x[j]*id)+8.5))
			q1 := min(15, truncInt8(float32(x[j+16]*id)+8.5))
			b[2+j] = byte(q0) | byte(q1)<<4
		}
	}
}

func dotQ4_0(x []float32, w []byte) float32 {
	nb := len(x) / q4_0Block
	w = w[:nb*q4_0Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q4_0Bytes]byte)(w[i*q4_0Bytes:])
		xb := (*[q4_0Block]float32)(x[i*q4_0Block:])
		var s0, s1, s2, s3 float32
		for j := 0; j < 16; j += 4 {
			q := (*[4]byte)(b[2+j:])
			lo := (*[4]float32)(xb[j:])
			hi := (*[4]float32)(xb[16+j:])
			s0 += lo[0]*float32(int8(q[0]&0x0f)-8) + hi[0]*float32(int8(q[0]>>4)-8)
			s1 += lo[1]*float32(int8(q[1]&0x0f)-8) + hi[1]*float32(int8(q[1]>>4)-8)
			s2 += lo[2]*float32(int8(q[2]&0x0f)-8) + hi[2]*float32(int8(q[2]>>4)-8)
			s3 += lo[3]*float32(int8(q[3]&0x0f)-8) + hi[3]*float32(int8(q[3]>>4)-8)
		}
		sum += t[uint16(b[0])|uint16(b[1])<<8] * ((s0 + s1) + (s2 + s3))
	}
	return sum
}

// truncInt8 converts v to int8 truncating toward zero, as C's (int8_t)v for
// in-range values. Out-of-range values (only from NaN or infinite input)
// saturate instead of being undefined.
func truncInt8(v float32) int8 {
	switch {
	case v != v:
		return 0
	case v >= 127:
		return 127
	case v <= -128:
		return -128
	}
	return int8(v)
}
