package quant

import (
	"encoding/binary"
	"math"
)

// Q8_0: blocks of 32 elements, 34 bytes (ggml block_q8_0):
//
//	d  uint16    binary16 scale
//	qs [32]int8  quants; element i = d * qs[i]

const (
	q8_0Block = 32
	q8_0Bytes = 2 + 32
)

func init() {
	register(Q8_0, Kernel{BlockSize: q8_0Block, BlockBytes: q8_0Bytes, Dequant: dequantQ8_0, Dot: dotQ8_0, Quantize: quantizeQ8_0, ActType: Q8_0, DotQ: dotQ8_0Impl, DotQRows: rowsQ8_0Impl})
}

func dequantQ8_0(dst []float32, src []byte) {
	nb := len(dst) / q8_0Block
	for i := 0; i < nb; i++ {
		b := src[i*q8_0Bytes : (i+1)*q8_0Bytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b))
		y := dst[i*q8_0Block : (i+1)*q8_0Block]
		for j := range y {
			y[j] = float32(int8(b[2+j])) * d
		}
	}
}

// quantizeQ8_0 follows quantize_row_q8_0_ref: d = max|x|/127, q = round(x/d).
func quantizeQ8_0(dst []byte, src []float32) {
	nb := len(src) / q8_0Block
	for i := 0; i < nb; i++ {
		x := src[i*q8_0Block : (i+1)*q8_0Block]
		b := dst[i*q8_0Bytes : (i+1)*q8_0Bytes]
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(b, f32ToF16(d))
		for j, v := range x {
			b[2+j] = byte(int8(roundf(v * id)))
		}
	}
}

func dotQ8_0(x []float32, w []byte) float32 {
	nb := len(x) / q8_0Block
	w = w[:nb*q8_0Bytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q8_0Bytes]byte)(w[i*q8_0Bytes:])
		xb := (*[q8_0Block]float32)(x[i*q8_0Block:])
		q := (*[32]byte)(b[2:])
		var s0, s1, s2, s3 float32
		for j := 0; j < 32; j += 8 {
			qq := (*[8]byte)(q[j:])
			xx := (*[8]float32)(xb[j:])
			s0 += xx[0]*float32(int8(qq[0])) + xx[4]*float32(int8(qq[4]))
			s1 += xx[1]*float32(int8(qq[1])) + xx[5]*float32(int8(qq[5]))
			s2 += xx[2]*float32(int8(qq[2])) + xx[6]*float32(int8(qq[6]))
			s3 += xx[3]*float32(int8(qq[3])) + xx[7]*float32(int8(qq[7]))
		}
		sum += t[uint16(b[0])|uint16(b[1])<<8] * ((s0 + s1) + (s2 + s3))
	}
	return sum
}

// abs32 is |v| for float32.
func abs32(v float32) float32 {
	return math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
}

// roundf rounds half away from zero, as C's roundf.
func roundf(v float32) float32 {
	return float32(math.Round(float64(v)))
}
