package engine

import "math"

// The serial steps of a forward pass in the form the vector kernels
// (kernels_amd64.s) compute them, lane by lane: the assembly covers whole
// groups of eight elements and these twins the rest, or everything where
// there is no assembly. A twin does the assembly's operations in its
// order, so the two agree to within the rounding of a fused multiply-add
// (the assembly fuses; Go on amd64 does not, on arm64 it does).

// The vector exp's constants: its input range and the Cody-Waite split of
// ln 2 (ln2hi has few enough bits that n·ln2hi is exact).
const (
	expLo = -87.33 // below: e**x is taken as 0
	expHi = 88.37  // above: e**x is taken as e**88.37 (n stays ≤ 127)
	ln2hi = 0.693359375
	ln2lo = -2.12194440e-4
)

// expVec returns e**x as the vector kernels compute it, to within 3 ulp
// of e**x on [-87.33, 88.37] (TestExpVec): x is clamped to that range,
// x = n·ln2 + r with n = x·log2e rounded to even and |r| ≤ ln2/2, e**r by
// a degree-6 polynomial, times 2**n; 0 below the range. Unlike expf it
// has no branches but the range test, so every lane does the same work.
func expVec(x float32) float32 {
	in := x >= expLo
	x = min(max(x, expLo), expHi)
	n := float32(math.RoundToEven(float64(x * log2e)))
	r := x - n*ln2hi
	r = r - n*ln2lo
	p := float32(1.0 / 720)
	p = p*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	if !in {
		return 0
	}
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// swigluGo writes silu(gate) * up into gate: g / (1 + e**-g) * u.
func swigluGo(gate, up []float32) {
	up = up[:len(gate)]
	for i, g := range gate {
		gate[i] = g / (1 + expVec(-g)) * up[i]
	}
}

// scaleMaxGo multiplies x by scale and returns the largest element (x is
// not empty).
func scaleMaxGo(x []float32, scale float32) float32 {
	x[0] *= scale
	mx := x[0]
	for i := 1; i < len(x); i++ {
		x[i] *= scale
		mx = max(mx, x[i])
	}
	return mx
}

// expSumGo replaces each element v of x with e**(v-mx) and returns their
// sum, in eight lanes as the assembly adds.
func expSumGo(x []float32, mx float32) float32 {
	var acc [8]float32
	for i, v := range x {
		e := expVec(v - mx)
		x[i] = e
		acc[i&7] += e
	}
	return hsum8(&acc)
}

// hsum8 adds up eight lanes as the assembly's HSUM does: the upper four
// onto the lower, then lanes 2,3 onto 0,1, then lane 1 onto lane 0 (for
// float64 sums, lanes 0-3 and 4-7 are the assembly's two accumulators).
func hsum8[T float32 | float64](a *[8]T) T {
	s0, s1, s2, s3 := a[0]+a[4], a[1]+a[5], a[2]+a[6], a[3]+a[7]
	return (s0 + s2) + (s1 + s3)
}

// scaleGo multiplies x by a.
func scaleGo(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}

// sumSquaresGo returns Σx² in float64, in eight lanes as the assembly
// adds (the squares are exact in float64, so fusing changes nothing).
func sumSquaresGo(x []float32) float64 {
	var acc [8]float64
	for i, v := range x {
		acc[i&7] += float64(v) * float64(v)
	}
	return hsum8(&acc)
}

// scaleMulGo writes x * scale * w to dst.
func scaleMulGo(dst, x, w []float32, scale float32) {
	x, w = x[:len(dst)], w[:len(dst)]
	for i, v := range x {
		dst[i] = v * scale * w[i]
	}
}
