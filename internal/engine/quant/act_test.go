package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// checkQuantize32 holds quantize32 (the assembly where there is some) to
// quantize32Go bit for bit: the quants, their sum and the scale.
func checkQuantize32(t *testing.T, x *[32]float32) {
	t.Helper()
	var qa, qb [32]byte
	sa, da := quantize32(x, &qa)
	sb, db := quantize32Go(x, &qb)
	if sa != sb || math.Float32bits(da) != math.Float32bits(db) || qa != qb {
		t.Fatalf("quantize32(%v) = %d, %v, %v; Go %d, %v, %v", x, sa, da, qa, sb, db, qb)
	}
}

func TestQuantize32Twins(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var x [32]float32
	checkQuantize32(t, &x) // all zero
	x[5] = float32(math.Copysign(0, -1))
	checkQuantize32(t, &x) // -0
	for _, sd := range []float64{1e-35, 1e-3, 1, 300, 1e30} {
		for i := 0; i < 2000; i++ {
			for j := range x {
				x[j] = float32(rng.NormFloat64() * sd)
			}
			if i%3 == 0 { // ties: exact halves after scaling
				for j := range x {
					x[j] = float32(math.Round(rng.Float64()*254-127)) / 2
				}
				x[rng.IntN(32)] = 127
			}
			checkQuantize32(t, &x)
		}
	}
	for j := range x { // one outlier: every other quant rounds to 0 or ±1
		x[j] = float32(j) * 0.01
	}
	x[7] = -1000
	checkQuantize32(t, &x)
}

// FuzzQuantize32 feeds quantize32 finite blocks built from three values,
// with ties and sign changes among them.
func FuzzQuantize32(f *testing.F) {
	f.Add(float32(1), float32(-0.5), float32(127))
	f.Add(float32(0), float32(0), float32(1e-40))
	f.Fuzz(func(t *testing.T, a, b, c float32) {
		var x [32]float32
		for j := range x {
			switch j % 4 {
			case 0:
				x[j] = a * float32(j)
			case 1:
				x[j] = b - float32(j)/2
			case 2:
				x[j] = c
			default:
				x[j] = -a * 0.5
			}
		}
		var amax float32
		for _, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Skip("not finite: the twins agree on finite input only")
			}
			amax = max(amax, abs32(v))
		}
		if amax != 0 && math.IsInf(float64(127/amax), 0) {
			t.Skip("max|x| below 127/MaxFloat32: see quantize32")
		}
		checkQuantize32(t, &x)
	})
}

// checkQ8K holds quantizeQ8KBlock to quantizeQ8KBlockGo bit for bit: the
// scale, the quants and the sums of each 16.
func checkQ8K(t *testing.T, x *[qkK]float32) {
	t.Helper()
	var a, b [q8_KBytes]byte
	for i := range a { // stale bytes must be overwritten
		a[i], b[i] = 0xa5, 0xa5
	}
	quantizeQ8KBlock(x, &a)
	quantizeQ8KBlockGo(x, &b)
	if a != b {
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("Q8_K block differs first at byte %d: %d, Go %d", i, a[i], b[i])
			}
		}
	}
}

func TestQuantizeQ8KTwins(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var x [qkK]float32
	checkQ8K(t, &x)
	for _, sd := range []float64{1e-30, 1e-3, 1, 300, 1e30} {
		for i := 0; i < 500; i++ {
			for j := range x {
				x[j] = float32(rng.NormFloat64() * sd)
			}
			switch i % 4 {
			case 1: // the largest magnitude twice, with both signs: the first wins
				k := rng.IntN(qkK)
				m := float32(10 * sd)
				x[k], x[(k+1+rng.IntN(qkK-1))%qkK] = m, -m
			case 2: // ties after scaling
				for j := range x {
					x[j] = float32(math.Round(rng.Float64()*254-127)) / 2
				}
				x[rng.IntN(qkK)] = -127
			case 3: // the largest magnitude in the last element
				x[qkK-1] = float32(-20 * sd)
			}
			checkQ8K(t, &x)
		}
	}
}

// FuzzQuantizeQ8K feeds the Q8_K encoder finite blocks built from three
// values.
func FuzzQuantizeQ8K(f *testing.F) {
	f.Add(float32(1), float32(-0.5), float32(127))
	f.Add(float32(0), float32(3), float32(-3))
	f.Fuzz(func(t *testing.T, a, b, c float32) {
		var x [qkK]float32
		for j := range x {
			switch j % 5 {
			case 0:
				x[j] = a * float32(j)
			case 1:
				x[j] = b - float32(j)/4
			case 2:
				x[j] = c
			case 3:
				x[j] = -c
			default:
				x[j] = a * b
			}
		}
		var amax float32
		for _, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Skip("not finite: the twins agree on finite input only")
			}
			amax = max(amax, abs32(v))
		}
		if amax != 0 && math.IsInf(float64(127/amax), 0) {
			t.Skip("max|x| below 127/MaxFloat32: see quantize32")
		}
		checkQ8K(t, &x)
	})
}
