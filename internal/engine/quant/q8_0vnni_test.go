package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// randQ8_0Rows returns rows random Q8_0 rows of nb blocks: quants drawn
// from every byte value (so -128 occurs) and scales of random magnitude,
// with extreme rows forced: all quants -128, or all 127.
func randQ8_0Rows(r *rand.Rand, nb, rows int) []byte {
	w := make([]byte, rows*nb*q8_0Bytes)
	for i := 0; i < rows*nb; i++ {
		b := w[i*q8_0Bytes : (i+1)*q8_0Bytes]
		binary.LittleEndian.PutUint16(b, f32ToF16(float32(math.Ldexp(r.Float64()+0.5, r.IntN(12)-16))))
		fill := byte(0)
		switch r.IntN(8) {
		case 0:
			fill = 0x80 // -128
		case 1:
			fill = 0x7f
		}
		for j := 2; j < q8_0Bytes; j++ {
			if fill != 0 {
				b[j] = fill
			} else {
				b[j] = byte(r.Uint32())
			}
		}
	}
	return w
}

// randActs returns n activations of varied magnitude, with some blocks
// whose quants all come out ±127 (constant magnitude, random signs) and
// some all zero.
func randActs(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := 0; i < n; i += 32 {
		kind := r.IntN(6)
		for j := i; j < i+32; j++ {
			switch kind {
			case 0:
				x[j] = float32(1 - 2*r.IntN(2)) // ±1: quants ±127
			case 1:
				x[j] = 0
			default:
				x[j] = float32(r.NormFloat64() * math.Exp(2*r.NormFloat64()))
			}
		}
	}
	return x
}

// laneMagnitude returns Σ |lane sum × combined scale| over the 4-byte
// lanes of the rearranged row w against xq: the terms the assembly adds
// in float32, the base of the tolerance of its result.
func laneMagnitude(xq, w []byte) float64 {
	nb := len(xq) / q8_0VNNIActBytes
	qs, ds := xq[:32*nb], xq[64*nb:]
	wq := w[2*nb:]
	var mag float64
	for i := 0; i < nb; i++ {
		d := float64(f16Table[le16(w[2*i:])]) * float64(math.Float32frombits(binary.LittleEndian.Uint32(ds[4*i:])))
		for l := 0; l < 8; l++ {
			var s int64
			for j := 4 * l; j < 4*l+4; j++ {
				s += int64(int8(wq[32*i+j]^0x80)) * int64(int8(qs[32*i+j]))
			}
			mag += math.Abs(float64(s) * d)
		}
	}
	return mag
}

// TestQ8_0VNNIMatchesQ8_0 holds the rearranged layout and its Go kernel to
// Q8_0's: the activation quantiser writes Q8_0's quants and scale, the
// corrections are −128 × each 4 quants' sum, Dequant decodes the same
// values, and the Go DotQ equals Q8_0's Go DotQ bit for bit (same block
// sums, same scales, same order), for every row length from 1 to 40
// blocks.
func TestQ8_0VNNIMatchesQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	q8, _ := Lookup(Q8_0)
	for nb := 1; nb <= 40; nb++ {
		n, rows := 32*nb, 3
		w := randQ8_0Rows(r, nb, rows)
		wv := make([]byte, len(w))
		repackQ8_0VNNI(wv, w, n)
		x := randActs(r, n)
		xq8 := make([]byte, q8.ActRowBytes(n))
		quantizeActQ8_0(xq8, x)
		xv := make([]byte, 68*nb)
		quantizeActQ8_0VNNIGo(xv, x)
		for i := 0; i < nb; i++ {
			b := xq8[i*q8_0Bytes:]
			for j := 0; j < 32; j++ {
				if xv[32*i+j] != b[2+j] {
					t.Fatalf("%d blocks: block %d quant %d = %d, Q8_0 has %d", nb, i, j, int8(xv[32*i+j]), int8(b[2+j]))
				}
			}
			d := math.Float32frombits(binary.LittleEndian.Uint32(xv[64*nb+4*i:]))
			if want := f16ToF32(le16(b)); d != want {
				t.Fatalf("%d blocks: block %d scale %v, Q8_0 has %v", nb, i, d, want)
			}
			for l := 0; l < 8; l++ {
				var s int32
				for j := 4 * l; j < 4*l+4; j++ {
					s += int32(int8(b[2+j]))
				}
				if c := int32(binary.LittleEndian.Uint32(xv[32*nb+32*i+4*l:])); c != -128*s {
					t.Fatalf("%d blocks: block %d correction %d = %d, want %d", nb, i, l, c, -128*s)
				}
			}
		}
		rb := nb * q8_0Bytes
		deq, deqv := make([]float32, n), make([]float32, n)
		for row := 0; row < rows; row++ {
			wr, wvr := w[row*rb:(row+1)*rb], wv[row*rb:(row+1)*rb]
			if got, want := dotQ8_0VNNIGo(xv, wvr), dotQ8_0Go(xq8, wr); got != want {
				t.Fatalf("%d blocks, row %d: Go DotQ %v, Q8_0's %v", nb, row, got, want)
			}
			dequantQ8_0(deq, wr)
			dequantQ8_0VNNI(deqv, wvr)
			for j := range deq {
				if deq[j] != deqv[j] {
					t.Fatalf("%d blocks, row %d: Dequant[%d] = %v, Q8_0's %v", nb, row, j, deqv[j], deq[j])
				}
			}
			var mag float64
			for j := range deq {
				mag += math.Abs(float64(deq[j]) * float64(x[j]))
			}
			got, want := dotQ8_0VNNIFloat(x, wvr), dotQ8_0(x, wr)
			if d := math.Abs(float64(got) - float64(want)); d > float64(nb+32)*0x1p-23*mag {
				t.Fatalf("%d blocks, row %d: float Dot %v, Q8_0's %v", nb, row, got, want)
			}
		}
	}
}

// TestQ8_0VNNIAsm holds the assembly to its Go twin for every row length
// from 1 to 40 blocks and 1 to 5 rows: with unit scales each result is a
// sum of integers below 2^24, which both must give exactly; with real
// scales they agree to within float32 rounding of the lane sums.
func TestQ8_0VNNIAsm(t *testing.T) {
	if q8_0VNNIRows == nil {
		t.Skip("no AVX-512 VNNI kernel on this CPU")
	}
	r := rand.New(rand.NewPCG(83, 84))
	for nb := 1; nb <= 40; nb++ {
		for rows := 1; rows <= 5; rows++ {
			checkVNNIAsm(t, r, nb, rows)
		}
	}
}

// checkVNNIAsm runs the assembly check on one random matrix.
func checkVNNIAsm(t *testing.T, r *rand.Rand, nb, rows int) {
	t.Helper()
	n, rb := 32*nb, 34*nb
	w := randQ8_0Rows(r, nb, rows)
	wv := make([]byte, len(w))
	repackQ8_0VNNI(wv, w, n)
	xv := make([]byte, 68*nb)
	quantizeActQ8_0VNNIGo(xv, randActs(r, n))
	got := make([]float32, rows)
	q8_0VNNIRows(got, xv, wv)
	for row := range got {
		wr := wv[row*rb : (row+1)*rb]
		want := dotQ8_0VNNIGo(xv, wr)
		tol := float64(nb+16) * 0x1p-23 * laneMagnitude(xv, wr)
		if d := math.Abs(float64(got[row]) - float64(want)); !(d <= tol) {
			t.Fatalf("%d blocks, row %d of %d: assembly %v, Go %v, difference %g above %g", nb, row, rows, got[row], want, d, tol)
		}
	}
	// Unit scales: integer sums, exact in float32 (|sum| ≤ 40·32·128·127).
	for i := 0; i < rows*nb; i++ {
		row, b := i/nb, i%nb
		binary.LittleEndian.PutUint16(wv[row*rb+2*b:], 0x3c00)
	}
	for i := 0; i < nb; i++ {
		binary.LittleEndian.PutUint32(xv[64*nb+4*i:], math.Float32bits(1))
	}
	q8_0VNNIRows(got, xv, wv)
	for row := range got {
		var ref int64
		for i := 0; i < n; i++ {
			ref += int64(int8(wv[row*rb+2*nb+i]^0x80)) * int64(int8(xv[i]))
		}
		if want := dotQ8_0VNNIGo(xv, wv[row*rb:(row+1)*rb]); got[row] != float32(ref) || want != float32(ref) {
			t.Fatalf("%d blocks, row %d of %d, unit scales: assembly %v, Go %v, want both exactly %d", nb, row, rows, got[row], want, ref)
		}
	}
}

// FuzzQ8_0VNNIAsm holds the assembly to the Go twin on fuzzed shapes and
// seeds.
func FuzzQ8_0VNNIAsm(f *testing.F) {
	if q8_0VNNIRows == nil {
		f.Skip("no AVX-512 VNNI kernel on this CPU")
	}
	for _, s := range [][2]uint8{{1, 1}, {2, 1}, {15, 2}, {16, 2}, {17, 3}, {24, 4}, {31, 1}, {32, 5}, {96, 2}} {
		f.Add(s[0], s[1], uint64(s[0]))
	}
	f.Fuzz(func(t *testing.T, nb, rows uint8, seed uint64) {
		r := rand.New(rand.NewPCG(seed, ^seed))
		checkVNNIAsm(t, r, max(int(nb), 1), max(int(rows)%9, 1))
	})
}

// TestRepackedAgainstQ8_0 compares what the engine swaps in, the
// repacked kernel end to end (its QuantizeAct and DotQRows on repacked
// rows), with Q8_0's kernel on the file's rows, on random matrices: the
// same block sums and scales, so they differ only by float32 summation
// order.
func TestRepackedAgainstQ8_0(t *testing.T) {
	rp := Repacked(Q8_0, 1) // a row count that is no whole number of 16-row groups
	if rp == nil || rp.Rows != 1 {
		t.Skip("no repacked Q8_0 kernel on this CPU")
	}
	q8, _ := Lookup(Q8_0)
	k := rp.Kernel
	r := rand.New(rand.NewPCG(85, 86))
	for _, shape := range [][2]int{{1, 3}, {7, 5}, {24, 96}, {33, 10}, {96, 20}} {
		nb, rows := shape[0], shape[1]
		n, rb := 32*nb, 34*nb
		w := randQ8_0Rows(r, nb, rows)
		wv := make([]byte, len(w))
		rp.Repack(wv, w, n)
		x := randActs(r, n)
		xq8, xv := make([]byte, q8.ActRowBytes(n)), make([]byte, k.ActRowBytes(n))
		q8.QuantizeAct(xq8, x)
		k.QuantizeAct(xv, x)
		got, want := make([]float32, rows), make([]float32, rows)
		k.DotQRows(got, xv, wv)
		q8.DotQRows(want, xq8, w)
		for row := range got {
			tol := float64(nb+16) * 0x1p-23 * laneMagnitude(xv, wv[row*rb:(row+1)*rb])
			if d := math.Abs(float64(got[row]) - float64(want[row])); !(d <= tol) {
				t.Fatalf("%d blocks, row %d: repacked %v, Q8_0 %v, difference %g above %g", nb, row, got[row], want[row], d, tol)
			}
			if one := k.DotQ(xv, wv[row*rb:(row+1)*rb]); one != got[row] {
				t.Fatalf("%d blocks, row %d: DotQ %v, DotQRows %v", nb, row, one, got[row])
			}
		}
	}
	out, xv, wv := make([]float32, 4), make([]byte, 68*24), make([]byte, 4*34*24)
	if a := testing.AllocsPerRun(10, func() { k.DotQRows(out, xv, wv) }); a != 0 {
		t.Errorf("DotQRows allocates %v times", a)
	}
}

// TestRepackedAvailability pins where the repacked kernels exist (only
// with the assembly) and which layout a matrix gets: 16-row groups for
// Q4_0, Q8_0 and (with AVX-512 VNNI or SDOT) Q4_K matrices of whole
// groups, (with AVX-512 VNNI) Q6_K ones, Q8_0's row-by-row layout for the
// others, nothing for other Q4_0, Q4_K and Q6_K matrices.
func TestRepackedAvailability(t *testing.T) {
	cases := []struct {
		typ  Type
		rows int
		want *Repacker
	}{
		{Q8_0, 32, &q8_0x16Repacker}, {Q8_0, 300, &q8_0VNNIRepacker}, {Q8_0, 8, &q8_0VNNIRepacker},
		{Q4_0, 32, &q4_0VNNIRepacker}, {Q4_0, 300, nil},
		{Q4_K, 32, &q4_Kx16Repacker}, {Q4_K, 300, nil},
		{Q6_K, 32, &q6_Kx16Repacker}, {Q6_K, 300, nil},
		{F32, 32, nil}, {Q5_K, 32, nil},
	}
	for _, c := range cases {
		want := c.want
		switch {
		case q8_0x16Asm == nil && q4_0x16Asm == nil:
			want = nil
		case q8_0VNNIRows == nil && want == &q8_0VNNIRepacker:
			want = nil // without AVX-512 VNNI: the 16-row kernels only
		case q4_Kx16Asm == nil && want == &q4_Kx16Repacker:
			want = nil // Q4_K's need AVX-512 VNNI (amd64) or SDOT (arm64)
		case q6_Kx16Asm == nil && want == &q6_Kx16Repacker:
			want = nil // Q6_K's need AVX-512 VNNI
		}
		if got := Repacked(c.typ, c.rows); got != want {
			t.Errorf("Repacked(%v, %d) = %v, want %v", c.typ, c.rows, got, want)
		}
	}
	if (q8_0x16Asm == nil) != (q4_0x16Asm == nil) {
		t.Errorf("the 16-row kernels exist apart: Q8_0 %v, Q4_0 %v", q8_0x16Asm != nil, q4_0x16Asm != nil)
	}
	for _, typ := range []Type{Q8_0VNNIAct, Q4_0VNNIAct, Q8_0x16Act} {
		if _, err := Lookup(typ); err == nil {
			t.Errorf("Lookup knows the in-memory activation type %v", typ)
		}
	}
}

// TestQuantizeActQ8_0VNNI holds the activation quantiser in use (the
// assembly where there is one) to its Go twin bit for bit, on every
// length from 1 to 40 blocks: random magnitudes from 1e-30 to 1e30
// (binary16 scales that underflow, overflow or are subnormal), all-zero
// blocks, ±1 blocks (quants ±127), and exact ties (a block whose max is
// 127 scales by exactly 1, so 2.5 and -3.5 must round to even).
func TestQuantizeActQ8_0VNNI(t *testing.T) {
	r := rand.New(rand.NewPCG(87, 88))
	for nb := 1; nb <= 40; nb++ {
		x := randActs(r, 32*nb)
		for i := 0; i < nb; i++ {
			b := x[32*i : 32*i+32]
			switch r.IntN(4) {
			case 0: // ties
				b[0] = 127
				for j := 1; j < 32; j++ {
					b[j] = float32(r.IntN(254)-127) + 0.5
				}
			case 1: // a wide range of scales
				e := float64(r.IntN(121) - 60)
				for j := range b {
					b[j] = float32(r.NormFloat64() * math.Pow(10, e/2))
				}
			}
		}
		got, want := make([]byte, 68*nb), make([]byte, 68*nb)
		quantizeActQ8_0VNNIImpl(got, x)
		quantizeActQ8_0VNNIGo(want, x)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%d blocks: byte %d = %#x, Go twin %#x", nb, i, got[i], want[i])
			}
		}
	}
}
