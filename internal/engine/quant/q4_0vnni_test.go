package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// randQ4_0Rows returns rows random Q4_0 rows of nb blocks: quants drawn
// from every nibble value and scales of random sign and magnitude, with
// some blocks forced to all 0 (-8) or all 15 nibbles.
func randQ4_0Rows(r *rand.Rand, nb, rows int) []byte {
	w := make([]byte, rows*nb*q4_0Bytes)
	for i := 0; i < rows*nb; i++ {
		b := w[i*q4_0Bytes : (i+1)*q4_0Bytes]
		binary.LittleEndian.PutUint16(b, f32ToF16(float32(math.Ldexp((r.Float64()+0.5)*float64(1-2*r.IntN(2)), r.IntN(12)-16))))
		kind := r.IntN(8)
		for j := 2; j < q4_0Bytes; j++ {
			switch kind {
			case 0:
				b[j] = 0
			case 1:
				b[j] = 0xff
			default:
				b[j] = byte(r.Uint32())
			}
		}
	}
	return w
}

// q4x16Magnitude returns Σ over blocks of |block sum × combined scale| of
// rearranged row i of the group at w against the activation row x: the
// terms the kernels add in float32, the base of the tolerance.
func q4x16Magnitude(x, group []byte, i, nb int) float64 {
	return q4x16Mag(x, group, i, nb, false)
}

// q4x16ElemMagnitude is q4x16Magnitude of every product alone, the
// tolerance's base against Q4_0's own kernels, which scale partial sums
// of a block (the AVX2 lanes) before adding them.
func q4x16ElemMagnitude(x, group []byte, i, nb int) float64 {
	return q4x16Mag(x, group, i, nb, true)
}

func q4x16Mag(x, group []byte, i, nb int, elems bool) float64 {
	row := make([]byte, nb*q4_0Bytes)
	unpackQ4_0x16(row, group, i, nb)
	var mag float64
	for k := 0; k < nb; k++ {
		b, xb := row[k*q4_0Bytes:], x[q4_0VNNIActBytes*k:]
		var s int64
		for j := 0; j < 16; j++ {
			p0, p1 := int64(int(b[2+j]&0x0f)-8)*int64(int8(xb[j])), int64(int(b[2+j]>>4)-8)*int64(int8(xb[16+j]))
			if elems {
				p0, p1 = max(p0, -p0), max(p1, -p1)
			}
			s += p0 + p1
		}
		mag += math.Abs(float64(s) * float64(f16ToF32(le16(b))) * float64(math.Float32frombits(binary.LittleEndian.Uint32(xb[36:]))))
	}
	return mag
}

// TestQ4_0x16Layout holds the rearrangement to the file's rows: every row
// of every group comes back from unpackQ4_0x16 byte for byte, and the
// rearranged copy has the file's size.
func TestQ4_0x16Layout(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	for _, nb := range []int{1, 2, 7, 28} {
		groups := 3
		w := randQ4_0Rows(r, nb, 16*groups)
		wv := make([]byte, len(w))
		repackQ4_0x16(wv, w, 32*nb)
		rb, gb := nb*q4_0Bytes, nb*q4x16Bytes
		row := make([]byte, rb)
		for g := 0; g < groups; g++ {
			for i := 0; i < 16; i++ {
				unpackQ4_0x16(row, wv[g*gb:(g+1)*gb], i, nb)
				want := w[(16*g+i)*rb : (16*g+i+1)*rb]
				if string(row) != string(want) {
					t.Fatalf("%d blocks: group %d row %d does not come back", nb, g, i)
				}
			}
		}
	}
}

// TestQuantizeActQ4_0VNNI holds the activation quantiser to Q8_0's: the
// same quants and scale, and −8 × the block's sum of quants.
func TestQuantizeActQ4_0VNNI(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	for nb := 1; nb <= 40; nb++ {
		x := randActs(r, 32*nb)
		xq8 := make([]byte, nb*q8_0Bytes)
		quantizeActQ8_0(xq8, x)
		xv := make([]byte, nb*q4_0VNNIActBytes)
		quantizeActQ4_0VNNI(xv, x)
		for k := 0; k < nb; k++ {
			b, v := xq8[k*q8_0Bytes:], xv[k*q4_0VNNIActBytes:]
			var sum int32
			for j := 0; j < 32; j++ {
				if v[j] != b[2+j] {
					t.Fatalf("%d blocks: block %d quant %d = %d, Q8_0 has %d", nb, k, j, int8(v[j]), int8(b[2+j]))
				}
				sum += int32(int8(b[2+j]))
			}
			if c := int32(binary.LittleEndian.Uint32(v[32:])); c != -8*sum {
				t.Fatalf("%d blocks: block %d correction %d, want %d", nb, k, c, -8*sum)
			}
			if d, want := math.Float32frombits(binary.LittleEndian.Uint32(v[36:])), f16ToF32(le16(b)); d != want {
				t.Fatalf("%d blocks: block %d scale %v, Q8_0 has %v", nb, k, d, want)
			}
		}
	}
}

// TestQ4_0x16GoMatchesQ4_0 holds the Go twin to Q4_0's integer kernel on
// the file's rows: the same block sums and scales, so within float32
// summation order, and with unit scales exactly the same integers.
func TestQ4_0x16GoMatchesQ4_0(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	q4, _ := Lookup(Q4_0)
	for nb := 1; nb <= 40; nb += 3 {
		n, rows, batch := 32*nb, 32, 3
		w := randQ4_0Rows(r, nb, rows)
		for unit := range 2 {
			if unit == 1 {
				for i := 0; i < rows*nb; i++ {
					binary.LittleEndian.PutUint16(w[i*q4_0Bytes:], 0x3c00)
				}
			}
			wv := make([]byte, len(w))
			repackQ4_0x16(wv, w, n)
			xq8 := make([]byte, batch*nb*q8_0Bytes)
			xv := make([]byte, batch*nb*q4_0VNNIActBytes)
			for b := 0; b < batch; b++ {
				x := randActs(r, n)
				if unit == 1 {
					for i := range x {
						x[i] = float32(r.IntN(255) - 127)
					}
					x[0] = 127 // the scale of block 0 is 1; the others vary
					for k := 0; k < nb; k++ {
						x[32*k] = 127
					}
				}
				quantizeActQ8_0(xq8[b*nb*q8_0Bytes:(b+1)*nb*q8_0Bytes], x)
				quantizeActQ4_0VNNI(xv[b*nb*q4_0VNNIActBytes:(b+1)*nb*q4_0VNNIActBytes], x)
			}
			ldx := nb * q4_0VNNIActBytes
			got := make([]float32, batch*rows)
			matMulQ4_0x16Go(got, rows, xv, ldx, batch, wv, nb)
			for b := 0; b < batch; b++ {
				for row := 0; row < rows; row++ {
					want := q4.DotQ(xq8[b*nb*q8_0Bytes:(b+1)*nb*q8_0Bytes], w[row*nb*q4_0Bytes:(row+1)*nb*q4_0Bytes])
					g := got[b*rows+row]
					tol := float64(nb+16) * 0x1p-23 * q4x16ElemMagnitude(xv[b*ldx:], wv[row/16*nb*q4x16Bytes:], row%16, nb)
					if unit == 1 {
						tol = 0
					}
					if d := math.Abs(float64(g) - float64(want)); !(d <= tol) {
						t.Fatalf("%d blocks, token %d row %d, unit scales %v: Go twin %v, Q4_0 %v, difference %g above %g", nb, b, row, unit == 1, g, want, d, tol)
					}
				}
			}
		}
	}
}

// checkQ4x16Asm holds the assembly to the Go twin on one random case:
// batch tokens against groups groups of nb blocks, outputs ldo apart
// with guard values between them that must stay untouched. With real
// scales they agree within float32 rounding of the block terms; with
// unit scales exactly.
func checkQ4x16Asm(t *testing.T, r *rand.Rand, nb, groups, batch int) {
	t.Helper()
	rows, n := 16*groups, 32*nb
	w := randQ4_0Rows(r, nb, rows)
	wv := make([]byte, len(w))
	repackQ4_0x16(wv, w, n)
	ldx := nb*q4_0VNNIActBytes + 8*r.IntN(2)
	xv := make([]byte, batch*ldx)
	for b := 0; b < batch; b++ {
		quantizeActQ4_0VNNI(xv[b*ldx:], randActs(r, n))
	}
	ldo := rows + r.IntN(3)
	const guard = -12345.5
	for unit := range 2 {
		if unit == 1 {
			for g := 0; g < groups; g++ {
				ds := wv[g*nb*q4x16Bytes+256*nb : (g+1)*nb*q4x16Bytes]
				for i := 0; i < len(ds); i += 2 {
					binary.LittleEndian.PutUint16(ds[i:], 0x3c00)
				}
			}
			for b := 0; b < batch; b++ {
				for k := 0; k < nb; k++ {
					binary.LittleEndian.PutUint32(xv[b*ldx+40*k+36:], math.Float32bits(1))
				}
			}
		}
		got, want := make([]float32, batch*ldo), make([]float32, batch*ldo)
		for i := range got {
			got[i], want[i] = guard, guard
		}
		matMulQ4_0x16(got, ldo, xv, ldx, batch, wv)
		matMulQ4_0x16Go(want, ldo, xv, ldx, batch, wv, nb)
		for b := 0; b < batch; b++ {
			for row := 0; row < ldo; row++ {
				g, wt := got[b*ldo+row], want[b*ldo+row]
				if row >= rows {
					if g != guard {
						t.Fatalf("%d blocks, %d groups, batch %d: token %d wrote past its rows (%d)", nb, groups, batch, b, row)
					}
					continue
				}
				tol := float64(nb+16) * 0x1p-23 * q4x16Magnitude(xv[b*ldx:], wv[row/16*nb*q4x16Bytes:], row%16, nb)
				if unit == 1 {
					tol = 0
				}
				if d := math.Abs(float64(g) - float64(wt)); !(d <= tol) {
					t.Fatalf("%d blocks, %d groups, batch %d, unit scales %v: token %d row %d: assembly %v, Go %v, difference %g above %g", nb, groups, batch, unit == 1, b, row, g, wt, d, tol)
				}
			}
		}
	}
}

// TestQ4_0x16Asm holds the assembly to its Go twin on every batch from 1
// to 19 (tiles of 8, 4 and 1 tokens), row lengths of 1 to 40 blocks and
// 1 to 3 groups.
func TestQ4_0x16Asm(t *testing.T) {
	if q4_0x16VNNI == nil {
		t.Skip("no AVX-512 VNNI kernel on this CPU")
	}
	r := rand.New(rand.NewPCG(97, 98))
	for batch := 1; batch <= 19; batch++ {
		for _, nb := range []int{1, 2, 3, 8, 28, 40} {
			checkQ4x16Asm(t, r, nb, 1+batch%3, batch)
		}
	}
}

// FuzzQ4_0x16Asm holds the assembly to the Go twin on fuzzed shapes and
// seeds.
func FuzzQ4_0x16Asm(f *testing.F) {
	if q4_0x16VNNI == nil {
		f.Skip("no AVX-512 VNNI kernel on this CPU")
	}
	for _, s := range [][3]uint8{{1, 1, 1}, {2, 1, 4}, {28, 2, 8}, {152, 1, 9}, {17, 3, 13}, {3, 2, 32}} {
		f.Add(s[0], s[1], s[2], uint64(s[0])*7+uint64(s[2]))
	}
	f.Fuzz(func(t *testing.T, nb, groups, batch uint8, seed uint64) {
		r := rand.New(rand.NewPCG(seed, ^seed))
		checkQ4x16Asm(t, r, max(int(nb)%160, 1), max(int(groups)%5, 1), max(int(batch)%40, 1))
	})
}

// TestRepackedAgainstQ4_0 compares what the engine swaps in, the
// repacked kernel end to end (QuantizeAct, DotQRows and MatMulQ on
// rearranged groups), with Q4_0's kernel on the file's rows.
func TestRepackedAgainstQ4_0(t *testing.T) {
	rp := Repacked(Q4_0)
	if rp == nil {
		t.Skip("no repacked Q4_0 kernel on this CPU")
	}
	q4, _ := Lookup(Q4_0)
	k := rp.Kernel
	if k.RowGroup != 16 || rp.Rows != 16 {
		t.Fatalf("row group %d, repacker rows %d, want 16", k.RowGroup, rp.Rows)
	}
	r := rand.New(rand.NewPCG(99, 100))
	for _, shape := range [][3]int{{1, 16, 1}, {28, 32, 5}, {152, 16, 12}, {28, 48, 32}} {
		nb, rows, batch := shape[0], shape[1], shape[2]
		n := 32 * nb
		w := randQ4_0Rows(r, nb, rows)
		wv := make([]byte, len(w))
		rp.Repack(wv, w, n)
		lq, lv := q4.ActRowBytes(n), k.ActRowBytes(n)
		xq8, xv := make([]byte, batch*lq), make([]byte, batch*lv)
		for b := 0; b < batch; b++ {
			x := randActs(r, n)
			q4.QuantizeAct(xq8[b*lq:(b+1)*lq], x)
			k.QuantizeAct(xv[b*lv:(b+1)*lv], x)
		}
		got := make([]float32, batch*rows)
		k.MatMulQ(got, rows, xv, lv, batch, wv)
		one := make([]float32, rows)
		for b := 0; b < batch; b++ {
			want := make([]float32, rows)
			q4.DotQRows(want, xq8[b*lq:(b+1)*lq], w)
			k.DotQRows(one, xv[b*lv:(b+1)*lv], wv)
			for row := range want {
				tol := float64(nb+16) * 0x1p-23 * q4x16ElemMagnitude(xv[b*lv:], wv[row/16*nb*q4x16Bytes:], row%16, nb)
				if d := math.Abs(float64(got[b*rows+row]) - float64(want[row])); !(d <= tol) {
					t.Fatalf("%d blocks, token %d row %d: repacked %v, Q4_0 %v, difference %g above %g", nb, b, row, got[b*rows+row], want[row], d, tol)
				}
				if one[row] != got[b*rows+row] {
					t.Fatalf("%d blocks, token %d row %d: DotQRows %v, MatMulQ %v", nb, b, row, one[row], got[b*rows+row])
				}
			}
		}
	}
	out, xv, wv := make([]float32, 16*8), make([]byte, 8*40*28), make([]byte, 16*18*28)
	if a := testing.AllocsPerRun(10, func() { k.MatMulQ(out, 16, xv, 40*28, 8, wv) }); a != 0 {
		t.Errorf("MatMulQ allocates %v times", a)
	}
}
