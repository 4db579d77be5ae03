package quant

import (
	"encoding/binary"
	"math"
)

// The unquantised types: F32, F16 and BF16 are one element per "block".

func init() {
	register(F32, Kernel{BlockSize: 1, BlockBytes: 4, Dequant: dequantF32, Dot: dotF32WImpl, Quantize: quantizeF32})
	register(F16, Kernel{BlockSize: 1, BlockBytes: 2, Dequant: dequantF16, Dot: dotF16WImpl, Quantize: quantizeF16})
	register(BF16, Kernel{BlockSize: 1, BlockBytes: 2, Dequant: dequantBF16, Dot: dotBF16, Quantize: quantizeBF16})
}

func dequantF32(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func quantizeF32(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func dotF32(x []float32, w []byte) float32 {
	n := len(x)
	w = w[:4*n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		xx := (*[4]float32)(x[i:])
		ww := (*[16]byte)(w[4*i:])
		s0 += xx[0] * math.Float32frombits(binary.LittleEndian.Uint32(ww[0:4]))
		s1 += xx[1] * math.Float32frombits(binary.LittleEndian.Uint32(ww[4:8]))
		s2 += xx[2] * math.Float32frombits(binary.LittleEndian.Uint32(ww[8:12]))
		s3 += xx[3] * math.Float32frombits(binary.LittleEndian.Uint32(ww[12:16]))
	}
	for ; i < n; i++ {
		s0 += x[i] * math.Float32frombits(binary.LittleEndian.Uint32(w[4*i:]))
	}
	return (s0 + s1) + (s2 + s3)
}

func dequantF16(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = f16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func quantizeF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], f32ToF16(v))
	}
}

func dotF16(x []float32, w []byte) float32 {
	n := len(x)
	w = w[:2*n]
	t := f16Table
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		xx := (*[4]float32)(x[i:])
		ww := (*[8]byte)(w[2*i:])
		s0 += xx[0] * t[uint16(ww[0])|uint16(ww[1])<<8]
		s1 += xx[1] * t[uint16(ww[2])|uint16(ww[3])<<8]
		s2 += xx[2] * t[uint16(ww[4])|uint16(ww[5])<<8]
		s3 += xx[3] * t[uint16(ww[6])|uint16(ww[7])<<8]
	}
	for ; i < n; i++ {
		s0 += x[i] * t[binary.LittleEndian.Uint16(w[2*i:])]
	}
	return (s0 + s1) + (s2 + s3)
}

func dequantBF16(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = bf16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func quantizeBF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], f32ToBF16(v))
	}
}

func dotBF16(x []float32, w []byte) float32 {
	n := len(x)
	w = w[:2*n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		xx := (*[4]float32)(x[i:])
		ww := (*[8]byte)(w[2*i:])
		s0 += xx[0] * math.Float32frombits(uint32(ww[0])<<16|uint32(ww[1])<<24)
		s1 += xx[1] * math.Float32frombits(uint32(ww[2])<<16|uint32(ww[3])<<24)
		s2 += xx[2] * math.Float32frombits(uint32(ww[4])<<16|uint32(ww[5])<<24)
		s3 += xx[3] * math.Float32frombits(uint32(ww[6])<<16|uint32(ww[7])<<24)
	}
	for ; i < n; i++ {
		s0 += x[i] * bf16ToF32(binary.LittleEndian.Uint16(w[2*i:]))
	}
	return (s0 + s1) + (s2 + s3)
}
