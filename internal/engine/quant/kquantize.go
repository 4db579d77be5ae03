package quant

import (
	"encoding/binary"
	"math"
)

// The K-quant encoders. They follow llama.cpp's reference quantisers
// (quantize_row_q{2..6}_K_ref, the ones llama-quantize uses when no
// importance matrix is given) operation for operation in float32, so that
// they produce the same bytes: every product that feeds a sum is rounded
// explicitly with float32(...) so that no platform fuses it into an FMA.

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it is encoded as all zeros.
const groupMaxEps = 1e-15

// nearestInt rounds v to the nearest integer, ties to even, by ggml's
// trick of adding 1.5*2^23 and reading the mantissa. Valid for
// |v| <= 4194303.
func nearestInt(v float32) int {
	f := float32(v + 12582912)
	return int(math.Float32bits(f)&0x007fffff) - 0x00400000
}

func sqrtf(v float32) float32 { return float32(math.Sqrt(float64(v))) }

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

// makeQxQuants finds a scale for signed quants in [-nmax, nmax) weighted by
// x², trying 18 scales around -nmax/max (make_qx_quants with rmse_type 1
// and no importance weights). It writes L[i] = q + nmax and returns the
// scale.
func makeQxQuants(nmax int, x []float32, L []int8) float32 {
	var vmax, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	fn := float32(nmax)
	sums := func(iscale float32, store bool) (sumlx, suml2 float32) {
		for i, v := range x {
			l := clampInt(nearestInt(float32(iscale*v)), -nmax, nmax-1)
			if store {
				L[i] = int8(l + nmax)
			}
			w := float32(v * v)
			fl := float32(l)
			sumlx += float32(float32(w*v) * fl)
			suml2 += float32(float32(w*fl) * fl)
		}
		return sumlx, suml2
	}
	iscale := -fn / vmax
	sumlx, suml2 := sums(iscale, true)
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := float32(scale * sumlx)
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -float32(fn+float32(0.1*float32(is))) / vmax
		sumlx, suml2 = sums(iscale, false)
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			sums(iscale, true)
			scale = sumlx / suml2
			best = float32(scale * sumlx)
		}
	}
	return scale
}

// makeQ3Quants finds a scale for signed quants in [-nmax, nmax) by
// iterative refinement weighted by x² (make_q3_quants with do_rmse). It
// writes L[i] = q + nmax and returns the scale.
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	var vmax, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	iscale := -float32(nmax) / vmax
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(float32(iscale*v)), -nmax, nmax-1)
		L[i] = int8(l)
		w := float32(v * v)
		sumlx += float32(float32(w*v) * float32(l))
		suml2 += float32(float32(w*float32(l)) * float32(l))
	}
	for try := 0; try < 5; try++ {
		changed := 0
		for i, v := range x {
			w := float32(v * v)
			li := float32(L[i])
			slx := sumlx - float32(float32(w*v)*li)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w*li)*li)
				nl := clampInt(nearestInt(float32(v*sl2)/slx), -nmax, nmax-1)
				if nl != int(L[i]) {
					fl := float32(nl)
					slx += float32(float32(w*v) * fl)
					sl2 += float32(float32(w*fl) * fl)
					if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						L[i] = int8(nl)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQkx2Quants finds a scale and a (non-positive) minimum for unsigned
// quants in [0, nmax] minimising the weighted error, trying nstep+1 scales
// (make_qkx2_quants). It writes L and returns the scale and -min.
func makeQkx2Quants(nmax int, x, weights []float32, L, aux []uint8, rmin, rdelta float32, nstep int, useMAD bool) (scale, negMin float32) {
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < len(x); i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		for i := range x {
			L[i] = 0
		}
		return 0, -lo
	}
	fn := float32(nmax)
	errOf := func(diff float32) float32 {
		if useMAD {
			return abs32(diff)
		}
		return float32(diff * diff)
	}
	iscale := fn / (hi - lo)
	scale = 1 / iscale
	var bestErr float32
	for i, v := range x {
		l := clampInt(nearestInt(float32(iscale*(v-lo))), 0, nmax)
		L[i] = uint8(l)
		diff := float32(float32(scale*float32(l))+lo) - v
		bestErr += float32(weights[i] * errOf(diff))
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(float32(rmin+float32(rdelta*float32(is)))+fn) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(float32(iscale*(v-lo))), 0, nmax)
			aux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(float32(w*fl) * fl)
			sumXL += float32(float32(w*fl) * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var cur float32
			for i, v := range x {
				diff := float32(float32(thisScale*float32(aux[i]))+thisMin) - v
				cur += float32(weights[i] * errOf(diff))
			}
			if cur < bestErr {
				copy(L, aux[:len(x)])
				bestErr = cur
				scale = thisScale
				lo = thisMin
			}
		}
	}
	return scale, -lo
}

// packScaleMinK4 stores the six-bit scale ls and minimum lm of sub-block j
// in the 12-byte layout read by scaleMinK4. s must start zeroed.
func packScaleMinK4(j int, ls, lm uint8, s *[12]byte) {
	if j < 4 {
		s[j] = ls
		s[j+4] = lm
		return
	}
	s[j+4] = ls&0x0f | (lm&0x0f)<<4
	s[j-4] |= (ls >> 4) << 6
	s[j] |= (lm >> 4) << 6
}

// quantizeQ4_K and quantizeQ5_K share this: per 32-element sub-block a
// scale and minimum from makeQkx2Quants, both quantised to six bits
// against the block maxima, then the elements requantised with the stored
// scales. L receives quants in [0, nmax].
func quantizeKMin(x []float32, nmax int, rmin, rdelta float32, nstep int, s *[12]byte, L *[qkK]uint8) (d, dmin uint16) {
	var scales, mins [8]float32
	var weights [32]float32
	var aux [32]uint8
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		av := sqrtf(sumX2 / 32)
		for l, v := range xs {
			weights[l] = av + abs32(v)
		}
		scales[j], mins[j] = makeQkx2Quants(nmax, xs, weights[:], L[32*j:32*j+32], aux[:], rmin, rdelta, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	*s = [12]byte{}
	for j := 0; j < 8; j++ {
		ls := min(63, uint8(nearestInt(float32(invScale*scales[j]))))
		lm := min(63, uint8(nearestInt(float32(invMin*mins[j]))))
		packScaleMinK4(j, ls, lm, s)
	}
	d, dmin = f32ToF16(maxScale/63), f32ToF16(maxMin/63)
	fd, fmin := f16ToF32(d), f16ToF32(dmin)
	for j := 0; j < 8; j++ {
		sc, m := scaleMinK4(j, s)
		dd := fd * float32(sc)
		if dd == 0 {
			continue
		}
		dm := fmin * float32(m)
		for l := 0; l < 32; l++ {
			L[32*j+l] = uint8(clampInt(nearestInt((x[32*j+l]+dm)/dd), 0, nmax))
		}
	}
	return d, dmin
}

// quantizeQ4_K follows quantize_row_q4_K_ref.
func quantizeQ4_K(dst []byte, src []float32) {
	var L [qkK]uint8
	for i := 0; i < len(src)/qkK; i++ {
		b := dst[i*q4_KBytes : (i+1)*q4_KBytes]
		d, dmin := quantizeKMin(src[i*qkK:(i+1)*qkK], 15, -1, 0.1, 20, (*[12]byte)(b[4:16]), &L)
		binary.LittleEndian.PutUint16(b, d)
		binary.LittleEndian.PutUint16(b[2:], dmin)
		q := b[16:]
		for c := 0; c < 4; c++ {
			for l := 0; l < 32; l++ {
				q[32*c+l] = L[64*c+l] | L[64*c+32+l]<<4
			}
		}
	}
}

// quantizeQ5_K follows quantize_row_q5_K_ref.
func quantizeQ5_K(dst []byte, src []float32) {
	var L [qkK]uint8
	for i := 0; i < len(src)/qkK; i++ {
		b := dst[i*q5_KBytes : (i+1)*q5_KBytes]
		d, dmin := quantizeKMin(src[i*qkK:(i+1)*qkK], 31, -0.5, 0.1, 15, (*[12]byte)(b[4:16]), &L)
		binary.LittleEndian.PutUint16(b, d)
		binary.LittleEndian.PutUint16(b[2:], dmin)
		qh, q := b[16:48], b[48:]
		clear(qh)
		for c := 0; c < 4; c++ {
			for l := 0; l < 32; l++ {
				l1, l2 := L[64*c+l], L[64*c+32+l]
				qh[l] |= (l1>>4)<<(2*c) | (l2>>4)<<(2*c+1)
				q[32*c+l] = l1&0x0f | (l2&0x0f)<<4
			}
		}
	}
}

// quantizeQ6_K follows quantize_row_q6_K_ref.
func quantizeQ6_K(dst []byte, src []float32) {
	var L [qkK]int8
	var scales [16]float32
	for i := 0; i < len(src)/qkK; i++ {
		x := src[i*qkK : (i+1)*qkK]
		b := dst[i*q6_KBytes : (i+1)*q6_KBytes]
		var maxScale, maxAbs float32
		for ib := 0; ib < 16; ib++ {
			scales[ib] = makeQxQuants(32, x[16*ib:16*ib+16], L[16*ib:16*ib+16])
			if a := abs32(scales[ib]); a > maxAbs {
				maxAbs, maxScale = a, scales[ib]
			}
		}
		if maxAbs < groupMaxEps {
			clear(b)
			continue
		}
		iscale := -128 / maxScale
		d := f32ToF16(1 / iscale)
		binary.LittleEndian.PutUint16(b[208:], d)
		sc := b[192:208]
		for ib := 0; ib < 16; ib++ {
			sc[ib] = byte(int8(min(127, nearestInt(float32(iscale*scales[ib])))))
		}
		fd := f16ToF32(d)
		for j := 0; j < 16; j++ {
			dd := fd * float32(int8(sc[j]))
			if dd == 0 {
				continue
			}
			for l := 0; l < 16; l++ {
				L[16*j+l] = int8(clampInt(nearestInt(x[16*j+l]/dd), -32, 31) + 32)
			}
		}
		for h := 0; h < 2; h++ {
			ql := b[64*h : 64*h+64]
			qh := b[128+32*h : 128+32*h+32]
			e := L[128*h : 128*h+128]
			for l := 0; l < 32; l++ {
				q1, q2, q3, q4 := uint8(e[l]), uint8(e[l+32]), uint8(e[l+64]), uint8(e[l+96])
				ql[l] = q1&0x0f | (q3&0x0f)<<4
				ql[l+32] = q2&0x0f | (q4&0x0f)<<4
				qh[l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}

// packLow2 stores 256 two-bit quants in the 64-byte layout shared by Q2_K
// and Q3_K: byte 32h+l holds elements 128h+l+32s at bits 2s.
func packLow2(q []byte, L *[qkK]uint8) {
	for h := 0; h < 2; h++ {
		for l := 0; l < 32; l++ {
			e := 128*h + l
			q[32*h+l] = L[e] | L[e+32]<<2 | L[e+64]<<4 | L[e+96]<<6
		}
	}
}

// quantizeQ2_K follows quantize_row_q2_K_ref.
func quantizeQ2_K(dst []byte, src []float32) {
	var L [qkK]uint8
	var aux [16]uint8
	var weights [16]float32
	var scales, mins [16]float32
	for i := 0; i < len(src)/qkK; i++ {
		x := src[i*qkK : (i+1)*qkK]
		b := dst[i*q2_KBytes : (i+1)*q2_KBytes]
		var maxScale, maxMin float32
		for j := 0; j < 16; j++ {
			xs := x[16*j : 16*j+16]
			for l, v := range xs {
				weights[l] = abs32(v)
			}
			scales[j], mins[j] = makeQkx2Quants(3, xs, weights[:], L[16*j:16*j+16], aux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		sc := b[0:16]
		var d, dmin uint16
		if maxScale > 0 {
			iscale := 15 / maxScale
			for j := range sc {
				sc[j] = uint8(nearestInt(float32(iscale * scales[j])))
			}
			d = f32ToF16(maxScale / 15)
		} else {
			clear(sc)
		}
		if maxMin > 0 {
			iscale := 15 / maxMin
			for j := range sc {
				sc[j] |= uint8(nearestInt(float32(iscale*mins[j]))) << 4
			}
			dmin = f32ToF16(maxMin / 15)
		}
		binary.LittleEndian.PutUint16(b[80:], d)
		binary.LittleEndian.PutUint16(b[82:], dmin)
		fd, fmin := f16ToF32(d), f16ToF32(dmin)
		for j := 0; j < 16; j++ {
			dd := fd * float32(sc[j]&0x0f)
			if dd == 0 {
				continue
			}
			dm := fmin * float32(sc[j]>>4)
			for l := 0; l < 16; l++ {
				L[16*j+l] = uint8(clampInt(nearestInt((x[16*j+l]+dm)/dd), 0, 3))
			}
		}
		packLow2(b[16:80], &L)
	}
}

// quantizeQ3_K follows quantize_row_q3_K_ref.
func quantizeQ3_K(dst []byte, src []float32) {
	var L8 [qkK]int8
	var L [qkK]uint8
	var scales [16]float32
	for i := 0; i < len(src)/qkK; i++ {
		x := src[i*qkK : (i+1)*qkK]
		b := dst[i*q3_KBytes : (i+1)*q3_KBytes]
		var maxScale, amax float32
		for j := 0; j < 16; j++ {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L8[16*j:16*j+16])
			if a := abs32(scales[j]); a > amax {
				amax, maxScale = a, scales[j]
			}
		}
		s := (*[12]byte)(b[96:108])
		*s = [12]byte{}
		var d uint16
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < 16; j++ {
				l := uint8(clampInt(int(int8(nearestInt(float32(iscale*scales[j])))), -32, 31) + 32)
				if j < 8 {
					s[j] = l & 0x0f
				} else {
					s[j-8] |= (l & 0x0f) << 4
				}
				s[8+j%4] |= (l >> 4) << (2 * (j / 4))
			}
			d = f32ToF16(1 / iscale)
		}
		binary.LittleEndian.PutUint16(b[108:], d)
		fd := f16ToF32(d)
		sc := q3KScales(s)
		for j := 0; j < 16; j++ {
			dd := fd * float32(sc[j])
			if dd == 0 {
				continue
			}
			for l := 0; l < 16; l++ {
				L8[16*j+l] = int8(clampInt(nearestInt(x[16*j+l]/dd), -4, 3) + 4)
			}
		}
		hm := b[0:32]
		clear(hm)
		for e := 0; e < qkK; e++ {
			v := uint8(L8[e])
			if v > 3 {
				hm[e%32] |= 1 << (e / 32)
				v -= 4
			}
			L[e] = v
		}
		packLow2(b[32:96], &L)
	}
}
