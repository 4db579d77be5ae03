//go:build !purego

package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// neonTwin is one NEON dot product, as DotQ and as DotQRows, with its
// pure-Go twin.
type neonTwin struct {
	name string
	typ  Type
	neon func(xq, w []byte) float32
	rows func(out []float32, xq, w []byte)
	pure func(xq, w []byte) float32
}

// neonTwins lists the NEON kernels this CPU can run: the ARMv8.0 ones
// always, the SDOT ones where the CPU has the dot-product extension.
var neonTwins = func() []neonTwin {
	var out []neonTwin
	for _, sdot := range []bool{false, true} {
		if sdot && !hasSDOT {
			continue
		}
		for _, p := range []struct {
			typ  Type
			pure func(xq, w []byte) float32
		}{{Q8_0, dotQ8_0Go}, {Q4_0, dotQ4_0Go}, {Q4_K, dotQ4_KGo}, {Q6_K, dotQ6_KGo}} {
			name := p.typ.String()
			if sdot {
				name += "-sdot"
			}
			out = append(out, neonTwin{name, p.typ, neonDot(p.typ, sdot), neonRowsOf(p.typ, sdot), p.pure})
		}
	}
	return out
}()

// unitScales sets every stored scale of the weight blocks w and the
// activation blocks xq to 1, so that a dot product is a sum of integers.
func unitScales(typ Type, k *Kernel, w, xq []byte) {
	for b := 0; b+k.BlockBytes <= len(w); b += k.BlockBytes {
		for _, off := range scaleFields[typ] {
			binary.LittleEndian.PutUint16(w[b+off:], 0x3c00)
		}
	}
	_, bytes := actLayout(k.ActType)
	for b := 0; b+bytes <= len(xq); b += bytes {
		if k.ActType == Q8_K {
			binary.LittleEndian.PutUint32(xq[b:], math.Float32bits(1))
		} else {
			binary.LittleEndian.PutUint16(xq[b:], 0x3c00)
		}
	}
}

// checkNEON compares NEON kernel i of neonTwins with its pure-Go twin on the weight
// blocks data (repeated or cut to whole blocks) and activations drawn
// from seed, through DotQ and through DotQRows over three rows. With
// every scale 1 the result is a sum of integers, exact in float32 while
// the sum of the magnitudes of its terms stays below 2^24: there both
// must equal the integer reference exactly. With the real scales they
// sum the scaled block sums in different orders, so they must agree to
// within float32 rounding of those sums, as the AVX2 kernels must.
func checkNEON(t *testing.T, i int, data []byte, seed uint64) {
	nk := neonTwins[i]
	k, _ := Lookup(nk.typ)
	nb := min(max(len(data)/k.BlockBytes, 1), 4096/k.BlockSize)
	rb := nb * k.BlockBytes
	w := make([]byte, 3*rb)
	if len(data) > 0 {
		for j := range w {
			w[j] = data[j%len(data)]
		}
	}
	n := nb * k.BlockSize
	r := rand.New(rand.NewPCG(seed, ^seed))
	x := make([]float32, n)
	for j := range x {
		x[j] = float32(r.NormFloat64())
	}
	xq := make([]byte, k.ActRowBytes(n))
	k.QuantizeAct(xq, x)
	xd, deq := make([]float32, n), make([]float32, n)
	rows := make([]float32, 3)

	// magnitude is Σ|x*w| + |x*m| over row 0, the scale of float32
	// rounding in its dot product.
	magnitude := func() float64 {
		dequantAct(k.ActType, xd, xq)
		k.Dequant(deq, w[:rb])
		mins := minTerms(nk.typ, w[:rb], n)
		var mag float64
		for j, v := range deq {
			m := math.Abs(float64(v))
			if mins != nil {
				m += math.Abs(float64(mins[j]))
			}
			mag += math.Abs(float64(xd[j])) * m
		}
		return mag
	}

	// Real scales.
	nan, inf := specials(nk.typ, k, w[:rb])
	got, want := nk.neon(xq, w[:rb]), nk.pure(xq, w[:rb])
	switch mag := magnitude(); {
	case nan:
		if !math.IsNaN(float64(got)) || !math.IsNaN(float64(want)) {
			t.Fatalf("%s: NEON %v, Go %v, want both NaN (a stored scale is NaN)", nk.name, got, want)
		}
	case inf || mag > 1e36:
		// ±inf or NaN, or overflow, depends on the order of the sums.
	default:
		tol := float64(nb+8)*0x1p-22*mag + float64(n)*0x1p-130
		if d := math.Abs(float64(got) - float64(want)); !(d <= tol) {
			t.Fatalf("%s, %d blocks: NEON %v, Go %v, difference %g above %g", nk.name, nb, got, want, d, tol)
		}
	}
	nk.rows(rows, xq, w)
	for j, v := range rows {
		if one := nk.neon(xq, w[j*rb:(j+1)*rb]); math.Float32bits(v) != math.Float32bits(one) {
			t.Fatalf("%s, %d blocks: DotQRows row %d = %v, DotQ of the row = %v", nk.name, nb, j, v, one)
		}
	}

	// Unit scales: integer sums.
	unitScales(nk.typ, k, w, xq)
	mag := magnitude()
	var ref float64
	for j, v := range deq {
		ref += float64(xd[j]) * float64(v)
	}
	got, want = nk.neon(xq, w[:rb]), nk.pure(xq, w[:rb])
	if mag < 1<<24 {
		if float64(got) != ref || float64(want) != ref {
			t.Fatalf("%s, %d blocks, unit scales: NEON %v, Go %v, want both exactly %v", nk.name, nb, got, want, ref)
		}
		nk.rows(rows, xq, w)
		for j, v := range rows {
			if want := nk.pure(xq, w[j*rb:(j+1)*rb]); v != want {
				t.Fatalf("%s, %d blocks, unit scales: DotQRows row %d = %v, Go %v", nk.name, nb, j, v, want)
			}
		}
	} else if d := math.Abs(float64(got) - float64(want)); d > float64(nb+8)*0x1p-22*mag {
		t.Fatalf("%s, %d blocks, unit scales: NEON %v, Go %v, difference %g", nk.name, nb, got, want, d)
	}
}

// FuzzDotQNEON holds the NEON dot products to their pure-Go twins.
func FuzzDotQNEON(f *testing.F) {
	types := make([]Type, len(neonTwins))
	for i, nk := range neonTwins {
		types[i] = nk.typ
	}
	addQuantizedSeeds(f, types)
	f.Fuzz(func(t *testing.T, sel uint8, data []byte, seed uint64) {
		checkNEON(t, int(sel)%len(neonTwins), data, seed)
	})
}

// TestDotQNEONRandomBlocks runs the NEON check on random bytes, and on
// extreme quants (every weight and activation byte at its end of the
// range), on every plain test run.
func TestDotQNEONRandomBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i, nk := range neonTwins {
		t.Run(nk.name, func(t *testing.T) {
			k, _ := Lookup(nk.typ)
			for range 300 {
				data := make([]byte, (1+r.IntN(40))*k.BlockBytes)
				for j := range data {
					data[j] = byte(r.Uint32())
				}
				checkNEON(t, i, data, r.Uint64())
			}
			for _, fill := range []byte{0x00, 0x80, 0x7f, 0xff} {
				data := make([]byte, 5*k.BlockBytes)
				for j := range data {
					data[j] = fill
				}
				checkNEON(t, i, data, uint64(fill))
			}
		})
	}
}

// BenchmarkDotQNEON compares each NEON dot product with its pure-Go twin
// on a 4096-element row, in one run (under emulation the ratio says
// nothing about a real CPU).
func BenchmarkDotQNEON(b *testing.B) {
	for _, nk := range neonTwins {
		for _, impl := range []struct {
			name string
			f    func(xq, w []byte) float32
		}{{"neon", nk.neon}, {"go", nk.pure}} {
			b.Run(nk.name+"/"+impl.name, func(b *testing.B) {
				k, x, w := benchInputs(b, nk.typ)
				xq := make([]byte, k.ActRowBytes(benchRow))
				k.QuantizeAct(xq, x)
				var sink float32
				for b.Loop() {
					sink += impl.f(xq, w)
				}
				report(b, len(w))
				_ = sink
			})
		}
	}
}
