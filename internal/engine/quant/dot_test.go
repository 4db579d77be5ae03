package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// The fuzz tests hold each fast Dot equal to the reference: the float64 sum
// of x[i]*Dequant(w)[i]. Dot sums in float32 in its own order and factors
// block scales and minimums out of its sums, so the tolerance is
// (n+8) float32 epsilons times the sum of the magnitudes of the terms it
// adds: |x[i]| * (|w[i]| + |the minimum subtracted from w[i]|).

var (
	floatTypes  = []Type{F32, F16, BF16}
	legacyTypes = []Type{Q8_0, Q4_0, Q4_1, Q5_0, Q5_1}
	kTypes      = []Type{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K}
)

// minTerms returns, for the types whose elements are d*q - m, the m of
// every element (decoded independently of Dequant), or nil.
func minTerms(typ Type, w []byte, n int) []float32 {
	k, _ := Lookup(typ)
	out := make([]float32, n)
	for b := 0; b < n/k.BlockSize; b++ {
		blk := w[b*k.BlockBytes:]
		y := out[b*k.BlockSize : (b+1)*k.BlockSize]
		switch typ {
		case Q4_1, Q5_1:
			m := f16ToF32(binary.LittleEndian.Uint16(blk[2:]))
			for i := range y {
				y[i] = m
			}
		case Q4_K, Q5_K:
			dmin := f16ToF32(binary.LittleEndian.Uint16(blk[2:]))
			for i := range y {
				_, m := scaleMinK4(i/32, (*[12]byte)(blk[4:16]))
				y[i] = dmin * float32(m)
			}
		case Q2_K:
			dmin := f16ToF32(binary.LittleEndian.Uint16(blk[82:]))
			for h := 0; h < 2; h++ {
				for j := 0; j < 8; j++ { // 16-element sub-blocks in order
					for l := 0; l < 16; l++ {
						y[128*h+16*j+l] = dmin * float32(blk[8*h+j]>>4)
					}
				}
			}
		default:
			return nil
		}
	}
	return out
}

// scaleFields lists the byte offsets of the binary16 scale and minimum
// fields within a block of each quantised type.
var scaleFields = map[Type][]int{
	Q8_0: {0}, Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2},
	Q2_K: {80, 82}, Q3_K: {108}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {208},
	F16: {0},
}

// specials reports whether a stored scale (or, for float types, a stored
// element) is NaN, and whether one is infinite.
func specials(typ Type, k *Kernel, w []byte) (nan, inf bool) {
	for b := 0; b+k.BlockBytes <= len(w); b += k.BlockBytes {
		var vs []float64
		switch typ {
		case F32:
			vs = []float64{float64(math.Float32frombits(binary.LittleEndian.Uint32(w[b:])))}
		case BF16:
			vs = []float64{float64(bf16ToF32(binary.LittleEndian.Uint16(w[b:])))}
		default:
			for _, off := range scaleFields[typ] {
				vs = append(vs, float64(f16ToF32(binary.LittleEndian.Uint16(w[b+off:]))))
			}
		}
		for _, v := range vs {
			nan = nan || math.IsNaN(v)
			inf = inf || math.IsInf(v, 0)
		}
	}
	return nan, inf
}

// checkDot runs one fuzz case: the block bytes data (repeated or cut to a
// whole number of blocks) against activations drawn from seed.
func checkDot(t *testing.T, typ Type, data []byte, seed uint64) {
	k, err := Lookup(typ)
	if err != nil {
		t.Fatal(err)
	}
	nb := len(data) / k.BlockBytes
	if nb == 0 {
		nb = 1
	}
	if max := 4096 / k.BlockSize; nb > max {
		nb = max
	}
	w := make([]byte, nb*k.BlockBytes)
	if len(data) > 0 {
		for i := range w {
			w[i] = data[i%len(data)]
		}
	}
	n := nb * k.BlockSize
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.Float64()*4 - 2)
	}
	deq := make([]float32, n)
	k.Dequant(deq, w)
	mins := minTerms(typ, w, n)

	var ref, mag float64
	for i, v := range deq {
		m := math.Abs(float64(v))
		if mins != nil {
			m += math.Abs(float64(mins[i]))
		}
		ref += float64(x[i]) * float64(v)
		mag += math.Abs(float64(x[i])) * m
	}
	got := k.Dot(x, w)
	nan, inf := specials(typ, k, w)
	switch {
	case inf:
		// inf*0 (a zero quant) is NaN in Dequant, but Dot multiplies the
		// scale by a whole sum: NaN or ±inf depends on the order.
		t.Skip("an infinite stored scale or value: ±inf or NaN depends on evaluation order")
	case nan:
		if !math.IsNaN(float64(got)) || !math.IsNaN(ref) {
			t.Fatalf("%v: Dot = %v, reference %v, want both NaN (a stored scale or value is NaN)", typ, got, ref)
		}
		return
	case mag > 1e36:
		t.Skip("terms near the float32 range: overflow depends on summation order")
	case math.IsNaN(ref) || math.IsNaN(float64(got)):
		t.Fatalf("%v: Dot = %v, reference %v from finite scales", typ, got, ref)
	}
	tol := float64(n+8)*0x1p-23*mag + float64(n)*0x1p-140
	if diff := math.Abs(float64(got) - ref); !(diff <= tol) {
		t.Fatalf("%v, %d elements: Dot = %v, reference %v, difference %g above tolerance %g", typ, n, got, ref, diff, tol)
	}
}

// addSeeds gives the fuzzer realistic blocks of every type: random data
// quantised by our encoder.
func addSeeds(f *testing.F, types []Type) {
	r := rand.New(rand.NewPCG(1, 2))
	for ti, typ := range types {
		k, _ := Lookup(typ)
		n := 256
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		dst := make([]byte, n/k.BlockSize*k.BlockBytes)
		k.Quantize(dst, src)
		f.Add(uint8(ti), dst, uint64(ti))
	}
}

func fuzzFamily(f *testing.F, types []Type) {
	addSeeds(f, types)
	f.Fuzz(func(t *testing.T, sel uint8, data []byte, seed uint64) {
		checkDot(t, types[int(sel)%len(types)], data, seed)
	})
}

func FuzzDotFloat(f *testing.F)  { fuzzFamily(f, floatTypes) }
func FuzzDotLegacy(f *testing.F) { fuzzFamily(f, legacyTypes) }
func FuzzDotK(f *testing.F)      { fuzzFamily(f, kTypes) }

// TestDotRandomBlocks runs the fuzz check over many random byte blocks on
// every plain test run, not only when fuzzing.
func TestDotRandomBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range append(append(append([]Type{}, floatTypes...), legacyTypes...), kTypes...) {
		t.Run(typ.String(), func(t *testing.T) {
			k, _ := Lookup(typ)
			checked := 0
			for i := 0; i < 200; i++ {
				data := make([]byte, (1+r.IntN(8))*k.BlockBytes*max(1, 64/k.BlockSize))
				for j := range data {
					data[j] = byte(r.Uint32())
				}
				ok := t.Run("", func(t *testing.T) { checkDot(t, typ, data, r.Uint64()) })
				if !ok {
					t.FailNow()
				}
				checked++
			}
			if checked == 0 {
				t.Error("nothing checked")
			}
		})
	}
}

// TestQuantizeRoundTrip quantises Gaussian data and checks that the
// relative RMS error of the decoded values is what each type's bit budget
// allows, and that an all-zero row stays all zeros.
func TestQuantizeRoundTrip(t *testing.T) {
	limits := map[Type]float64{
		F32: 0, F16: 1e-3, BF16: 5e-3, Q8_0: 0.01,
		Q6_K: 0.02, Q5_K: 0.04, Q5_0: 0.05, Q5_1: 0.05,
		Q4_K: 0.08, Q4_0: 0.11, Q4_1: 0.11, Q3_K: 0.2, Q2_K: 0.4,
	}
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]float32, 4096)
	for i := range src {
		src[i] = float32(r.NormFloat64() * 0.05)
	}
	for typ, limit := range limits {
		t.Run(typ.String(), func(t *testing.T) {
			k, _ := Lookup(typ)
			enc := make([]byte, len(src)/k.BlockSize*k.BlockBytes)
			k.Quantize(enc, src)
			dec := make([]float32, len(src))
			k.Dequant(dec, enc)
			var e2, s2 float64
			for i := range src {
				d := float64(dec[i]) - float64(src[i])
				e2 += d * d
				s2 += float64(src[i]) * float64(src[i])
			}
			if rel := math.Sqrt(e2 / s2); !(rel <= limit) {
				t.Errorf("relative RMS error %.4f, want at most %.4f", rel, limit)
			}
			zero := make([]float32, len(src))
			k.Quantize(enc, zero)
			k.Dequant(dec, enc)
			for i, v := range dec {
				if v != 0 {
					t.Fatalf("zero row decodes to %v at %d", v, i)
				}
			}
		})
	}
}

// TestDotAllocatesNothing holds the fast kernels to zero allocations.
func TestDotAllocatesNothing(t *testing.T) {
	for _, typ := range benchTypes {
		k, _ := Lookup(typ)
		x := make([]float32, 512)
		w := make([]byte, 512/k.BlockSize*k.BlockBytes)
		if got := testing.AllocsPerRun(10, func() { k.Dot(x, w) }); got != 0 {
			t.Errorf("%v: Dot allocates %v times per call, want 0", typ, got)
		}
	}
}
