package engine

import (
	"math"
)

// dot returns the dot product of a and b[:len(a)], eight accumulators wide.
func dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		x := (*[8]float32)(a[i:])
		y := (*[8]float32)(b[i:])
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// axpy adds a*x to y.
func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		yy := (*[4]float32)(y[i:])
		xx := (*[4]float32)(x[i:])
		yy[0] += a * xx[0]
		yy[1] += a * xx[1]
		yy[2] += a * xx[2]
		yy[3] += a * xx[3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}

// add adds x to y element-wise.
func add(y, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += x[i]
	}
}

// rmsnorm writes x / sqrt(mean(x²) + eps) * w to dst; the sum of squares
// is taken in float64.
func rmsnorm(dst, x, w []float32, eps float32) {
	x = x[:len(dst)]
	w = w[:len(dst)]
	ss := sumSquares(x)
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	scaleMul(dst, x, w, scale)
}

// scaleSoftmax replaces x with the softmax of x·scale, in place: e**(v-max)
// by the vector exp (expVec), summed in eight lanes.
func scaleSoftmax(x []float32, scale float32) {
	if len(x) == 0 {
		return
	}
	mx := scaleMax(x, scale)
	sum := expSum(x, mx)
	scaleVec(x, 1/sum)
}

// softmax replaces x with its softmax, in place.
func softmax(x []float32) { scaleSoftmax(x, 1) }

// swiglu writes silu(gate) * up into gate: g / (1 + e**-g) * u, with
// the vector exp (expVec).
func swiglu(gate, up []float32) { swigluVec(gate, up) }

// ropeTable returns cos and sin of every rotation angle, (ctx, rope_dim/2):
// angle = (pos / scale) * base^(-2i/rope_dim) / freq_factor[i].
func ropeTable(c Config, ctx int) (cos, sin []float32) {
	half := c.RopeDim / 2
	cos = make([]float32, ctx*half)
	sin = make([]float32, ctx*half)
	for p := 0; p < ctx; p++ {
		for i := 0; i < half; i++ {
			theta := float64(p) / c.RopeScale * math.Pow(c.RopeBase, -2*float64(i)/float64(c.RopeDim))
			if c.RopeFreqs != nil {
				theta /= float64(c.RopeFreqs[i])
			}
			s, co := math.Sincos(theta)
			cos[p*half+i] = float32(co)
			sin[p*half+i] = float32(s)
		}
	}
	return cos, sin
}

// rope rotates each head of x (heads × head_dim) for one position, with
// the angles cos, sin of that position (rope_dim/2 each).
func rope(x []float32, headDim int, cos, sin []float32, neox bool) {
	half := len(cos)
	sin = sin[:half]
	for h := 0; h+headDim <= len(x); h += headDim {
		v := x[h : h+headDim]
		if neox {
			a, b := v[:half], v[half:2*half]
			for i := range a {
				x0, x1 := a[i], b[i]
				a[i] = x0*cos[i] - x1*sin[i]
				b[i] = x0*sin[i] + x1*cos[i]
			}
		} else {
			v = v[:2*half]
			for i := 0; i < half; i++ {
				x0, x1 := v[2*i], v[2*i+1]
				v[2*i] = x0*cos[i] - x1*sin[i]
				v[2*i+1] = x0*sin[i] + x1*cos[i]
			}
		}
	}
}

// dot4 returns the dot products of w with x0..x3 (each at least len(w)
// long), reading each weight once for four inputs: the inner loop of
// batched prefill.
func dot4(w, x0, x1, x2, x3 []float32) (s0, s1, s2, s3 float32) {
	n := len(w)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	var t0, t1, t2, t3 float32
	i := 0
	for ; i+2 <= n; i += 2 {
		a, b := w[i], w[i+1]
		s0 += a * x0[i]
		t0 += b * x0[i+1]
		s1 += a * x1[i]
		t1 += b * x1[i+1]
		s2 += a * x2[i]
		t2 += b * x2[i+1]
		s3 += a * x3[i]
		t3 += b * x3[i+1]
	}
	for ; i < n; i++ {
		a := w[i]
		s0 += a * x0[i]
		s1 += a * x1[i]
		s2 += a * x2[i]
		s3 += a * x3[i]
	}
	return s0 + t0, s1 + t1, s2 + t2, s3 + t3
}
