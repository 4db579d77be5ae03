package quant

import "math"

// This file converts between float32 and the two 16-bit float formats of
// GGUF: IEEE 754 binary16 ("F16", ggml_fp16_t) and bfloat16 ("BF16").

// f16ToF32 returns the exact float32 value of the binary16 number h.
// Subnormals are normalised, infinities kept, and a NaN keeps its sign and
// payload (shifted into the top of the float32 mantissa), so that
// f32ToF16(f16ToF32(h)) == h for all 65536 values of h.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch exp {
	case 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: mant * 2^-24. Shift the leading one into the implicit
		// bit position and lower the exponent to match.
		e := uint32(127 - 14)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// f32ToF16 rounds f to the nearest binary16 value, ties to even, as ggml's
// GGML_FP32_TO_FP16 does. Values too large become infinities; a NaN stays a
// NaN with the top ten bits of its payload (quietened if they are all zero).
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant == 0 {
			return sign | 0x7c00
		}
		m := uint16(mant >> 13)
		if m == 0 {
			m = 0x200
		}
		return sign | 0x7c00 | m
	}
	e := exp - 127 + 15 // biased binary16 exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Result is subnormal (or zero): count in units of 2^-24.
		if e < -10 {
			return sign // below half the smallest subnormal
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		r := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++ // may carry into the smallest normal, which is correct
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, up to infinity: correct
	}
	return sign | uint16(r)
}

// f16Table holds f16ToF32 for every binary16 bit pattern (256 KiB), the
// lookup the fast kernels use, as ggml's ggml_table_f32_f16 does.
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = f16ToF32(uint16(i))
	}
	return &t
}()

// bf16ToF32 returns the float32 value of the bfloat16 number h (exact: the
// top half of a float32).
func bf16ToF32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// f32ToBF16 rounds f to bfloat16, ties to even, as ggml's
// ggml_compute_fp32_to_bf16 does: a NaN becomes a quiet NaN keeping its
// sign and the top of its payload.
func f32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + (u>>16)&1)) >> 16)
}
