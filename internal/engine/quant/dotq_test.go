package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// dotQTypes are the weight types with an integer path, in the order the
// FuzzDotQ corpus selects them by.
var dotQTypes = []Type{Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, Q4_K, Q5_K, Q6_K}

// TestActTypes pins each kernel's activation type to ggml's vec_dot_type.
func TestActTypes(t *testing.T) {
	want := map[Type]Type{
		F32: F32, F16: F32, BF16: F32, Q2_K: F32, Q3_K: F32,
		Q8_0: Q8_0, Q4_0: Q8_0, Q5_0: Q8_0, Q4_1: Q8_1, Q5_1: Q8_1,
		Q4_K: Q8_K, Q5_K: Q8_K, Q6_K: Q8_K,
	}
	for typ, at := range want {
		k, _ := Lookup(typ)
		if k.ActType != at {
			t.Errorf("%v: ActType = %v, want %v", typ, k.ActType, at)
		}
		if (k.DotQ != nil) != (at != F32) || (k.QuantizeAct != nil) != (at != F32) || (k.DotQRows != nil) != (at != F32) {
			t.Errorf("%v: DotQ set %v, QuantizeAct set %v, DotQRows set %v, want all %v", typ, k.DotQ != nil, k.QuantizeAct != nil, k.DotQRows != nil, at != F32)
		}
	}
}

// TestQuantizeAct checks the activation encoders: every element decodes to
// within half a quantisation step, the largest maps to ±127, and the
// stored sums (Q8_1's s, Q8_K's bsums) match the quants.
func TestQuantizeAct(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 1024)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()))
	}
	x[300] = 0 // a zero inside a block
	for _, at := range []Type{Q8_0, Q8_1, Q8_K} {
		t.Run(at.String(), func(t *testing.T) {
			k := &Kernel{ActType: at, DotQ: dotQ8_0Go}
			switch at {
			case Q8_0:
				k.QuantizeAct = quantizeActQ8_0
			case Q8_1:
				k.QuantizeAct = quantizeActQ8_1
			case Q8_K:
				k.QuantizeAct = quantizeActQ8_K
			}
			xq := make([]byte, k.ActRowBytes(len(x)))
			k.QuantizeAct(xq, x)
			got := make([]float32, len(x))
			dequantAct(at, got, xq)
			block, bytes := actLayout(at)
			for b := 0; b < len(x)/block; b++ {
				var amax float64
				for _, v := range x[b*block : (b+1)*block] {
					amax = math.Max(amax, math.Abs(float64(v)))
				}
				step := amax / 127
				// Q8_0 and Q8_1 store d in binary16: up to 127 quants of its
				// rounding on top of half a step.
				slack := 0.5001
				if at != Q8_K {
					slack += 127 * 0x1p-11
				}
				for i := b * block; i < (b+1)*block; i++ {
					if d := math.Abs(float64(got[i]) - float64(x[i])); d > step*slack+1e-30 {
						t.Fatalf("element %d: %v decodes to %v, off by %g, more than half the step %g", i, x[i], got[i], d, step)
					}
				}
				blk := xq[b*bytes : (b+1)*bytes]
				switch at {
				case Q8_1:
					var sum int
					for _, q := range blk[4:] {
						sum += int(int8(q))
					}
					// s is d*Σq with d before its binary16 rounding.
					d := float64(f16ToF32(binary.LittleEndian.Uint16(blk)))
					got, want := float64(f16ToF32(binary.LittleEndian.Uint16(blk[2:]))), float64(sum)*d
					if math.Abs(got-want) > math.Abs(want)*0x1p-9 {
						t.Errorf("block %d: s = %v, want %v (d*Σq) within binary16 rounding", b, got, want)
					}
				case Q8_K:
					peak := 0
					for g := 0; g < 16; g++ {
						var sum int
						for _, q := range blk[4+16*g : 20+16*g] {
							sum += int(int8(q))
							peak = max(peak, int(int8(q)), -int(int8(q)))
						}
						if got := int(int16(binary.LittleEndian.Uint16(blk[260+2*g:]))); got != sum {
							t.Errorf("block %d: bsums[%d] = %d, want %d", b, g, got, sum)
						}
					}
					if peak != 127 {
						t.Errorf("block %d: largest |q| = %d, want 127", b, peak)
					}
				}
			}
		})
	}
}

// checkDotQ runs one fuzz case of DotQ: the weight blocks data (repeated
// or cut to a whole number of blocks) against activations drawn from seed
// and quantised by QuantizeAct. The reference is the float64 sum of the
// decoded activations times Dequant(w); DotQ is exact in its integer sums,
// so the tolerance is float32 rounding of the scaled block sums, plus, for
// Q8_1, the binary16 rounding of the stored s = d*Σq.
func checkDotQ(t *testing.T, typ Type, data []byte, seed uint64) {
	k, err := Lookup(typ)
	if err != nil {
		t.Fatal(err)
	}
	nb := min(max(len(data)/k.BlockBytes, 1), 4096/k.BlockSize)
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
	xq := make([]byte, k.ActRowBytes(n))
	k.QuantizeAct(xq, x)
	xd := make([]float32, n)
	dequantAct(k.ActType, xd, xq)
	deq := make([]float32, n)
	k.Dequant(deq, w)
	mins := minTerms(typ, w, n)

	var ref, mag, sTerm float64
	for i, v := range deq {
		m := math.Abs(float64(v))
		if mins != nil {
			m += math.Abs(float64(mins[i]))
		}
		ref += float64(xd[i]) * float64(v)
		mag += math.Abs(float64(xd[i])) * m
	}
	if k.ActType == Q8_1 {
		for b := 0; b < nb; b++ {
			m := float64(f16ToF32(binary.LittleEndian.Uint16(w[b*k.BlockBytes+2:])))
			s := float64(f16ToF32(binary.LittleEndian.Uint16(xq[b*q8_1Bytes+2:])))
			sTerm += math.Abs(m * s)
		}
	}
	got := k.DotQ(xq, w)
	nan, inf := specials(typ, k, w)
	switch {
	case inf:
		t.Skip("an infinite stored scale: ±inf or NaN depends on evaluation order")
	case nan:
		if !math.IsNaN(float64(got)) || !math.IsNaN(ref) {
			t.Fatalf("%v: DotQ = %v, reference %v, want both NaN (a stored scale is NaN)", typ, got, ref)
		}
		return
	case mag > 1e36 || sTerm > 1e36:
		t.Skip("terms near the float32 range: overflow depends on summation order")
	case math.IsNaN(ref) || math.IsNaN(float64(got)):
		t.Fatalf("%v: DotQ = %v, reference %v from finite scales", typ, got, ref)
	}
	tol := float64(nb+8)*0x1p-22*mag + sTerm*0x1p-10 + float64(n)*0x1p-130
	if diff := math.Abs(float64(got) - ref); !(diff <= tol) {
		t.Fatalf("%v, %d elements: DotQ = %v, reference %v, difference %g above tolerance %g", typ, n, got, ref, diff, tol)
	}
}

// FuzzDotQ holds every integer dot product to the float reference on the
// same quantised activations.
func FuzzDotQ(f *testing.F) {
	addSeeds(f, dotQTypes)
	f.Fuzz(func(t *testing.T, sel uint8, data []byte, seed uint64) {
		checkDotQ(t, dotQTypes[int(sel)%len(dotQTypes)], data, seed)
	})
}

// TestDotQRandomBlocks runs the DotQ fuzz check over random byte blocks on
// every plain test run.
func TestDotQRandomBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, typ := range dotQTypes {
		t.Run(typ.String(), func(t *testing.T) {
			k, _ := Lookup(typ)
			for i := 0; i < 200; i++ {
				data := make([]byte, (1+r.IntN(8))*k.BlockBytes*max(1, 64/k.BlockSize))
				for j := range data {
					data[j] = byte(r.Uint32())
				}
				if !t.Run("", func(t *testing.T) { checkDotQ(t, typ, data, r.Uint64()) }) {
					t.FailNow()
				}
			}
		})
	}
}

// TestDotQNearFloat checks on realistic weights that quantising the
// activations moves the dot product only by what 8-bit activations allow:
// relative to Σ|x*w|, about 2^-8.
func TestDotQNearFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const n = 4096
	x := make([]float32, n)
	src := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		src[i] = float32(r.NormFloat64() * 0.05)
	}
	for _, typ := range dotQTypes {
		t.Run(typ.String(), func(t *testing.T) {
			k, _ := Lookup(typ)
			w := make([]byte, n/k.BlockSize*k.BlockBytes)
			k.Quantize(w, src)
			deq := make([]float32, n)
			k.Dequant(deq, w)
			var mag float64
			for i := range x {
				mag += math.Abs(float64(x[i]) * float64(deq[i]))
			}
			xq := make([]byte, k.ActRowBytes(n))
			k.QuantizeAct(xq, x)
			got, want := k.DotQ(xq, w), k.Dot(x, w)
			if d := math.Abs(float64(got - want)); d > mag/256 {
				t.Errorf("DotQ = %v, Dot = %v: differ by %g, more than Σ|x*w|/256 = %g", got, want, d, mag/256)
			}
		})
	}
}

// TestDotQAllocatesNothing holds QuantizeAct, DotQ and DotQRows to zero
// allocations.
func TestDotQAllocatesNothing(t *testing.T) {
	for _, typ := range dotQTypes {
		k, _ := Lookup(typ)
		x := make([]float32, 512)
		w := make([]byte, 512/k.BlockSize*k.BlockBytes)
		xq := make([]byte, k.ActRowBytes(512))
		out := make([]float32, 1)
		if got := testing.AllocsPerRun(10, func() { k.QuantizeAct(xq, x); k.DotQ(xq, w); k.DotQRows(out, xq, w) }); got != 0 {
			t.Errorf("%v: QuantizeAct+DotQ+DotQRows allocate %v times per call, want 0", typ, got)
		}
	}
}

// TestAccel checks the reported instruction set is one the package has.
func TestAccel(t *testing.T) {
	if got := Accel(); got != "avx2" && got != "neon" && got != "neon+sdot" && got != "go" {
		t.Errorf("Accel() = %q, want avx2, neon, neon+sdot or go", got)
	}
}

// TestDotQRows checks that DotQRows gives, bit for bit, DotQ of each row,
// for row counts around the assembly's unrolling and an empty output.
func TestDotQRows(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, typ := range dotQTypes {
		t.Run(typ.String(), func(t *testing.T) {
			k, _ := Lookup(typ)
			for _, shape := range [][2]int{{1, 1}, {3, 2}, {5, 7}, {64, 3}, {2, 4}, {1, 8}, {4, 9}, {17, 13}} {
				nb, rows := shape[0], shape[1]
				n := nb * k.BlockSize
				rb := nb * k.BlockBytes
				src := make([]float32, n*rows)
				for i := range src {
					src[i] = float32(r.NormFloat64())
				}
				w := make([]byte, rb*rows)
				k.Quantize(w, src)
				x := src[:n]
				xq := make([]byte, k.ActRowBytes(n))
				k.QuantizeAct(xq, x)
				got := make([]float32, rows)
				k.DotQRows(got, xq, w)
				for i := range got {
					if want := k.DotQ(xq, w[i*rb:(i+1)*rb]); got[i] != want {
						t.Errorf("%d blocks, row %d of %d: DotQRows %v, DotQ %v", nb, i, rows, got[i], want)
					}
				}
				k.DotQRows(got[:0], xq, w) // no rows: nothing to do, no panic
			}
		})
	}
}

// addQuantizedSeeds seeds a fuzz test of (kernel index, weight bytes,
// seed) with rows of 1, 2, 3, 8 and 17 blocks of real quantised weights
// for each of types, the kernel index being the type's place in types.
func addQuantizedSeeds(f *testing.F, types []Type) {
	r := rand.New(rand.NewPCG(3, 5))
	for i, typ := range types {
		k, _ := Lookup(typ)
		for _, nb := range []int{1, 2, 3, 8, 17} {
			src := make([]float32, nb*k.BlockSize)
			for j := range src {
				src[j] = float32(r.NormFloat64())
			}
			w := make([]byte, nb*k.BlockBytes)
			k.Quantize(w, src)
			f.Add(uint8(i), w, uint64(nb))
		}
	}
}
