package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// x16Layout is one of the 16-row layouts (Q4_0's, Q8_0's, Q5_0's, Q4_K's,
// Q6_K's) with what its tests need: the file's type and block size,
// random rows of it, the layout's rearrangement and its inverse, the
// signed weights of a file block, the activation correction's factor,
// and the kernels.
type x16Layout struct {
	typ        Type
	fileBytes  int // bytes of one block of one file row
	qsBytes    int // bytes of quants of one block of a group
	randRows   func(r *rand.Rand, nb, rows int) []byte
	repack     func(dst, src []byte, cols int)
	unpack     func(row, group []byte, i, nb int)
	weights    func(b []byte) [32]int // the signed integer weights of one file block
	quantize   func(dst []byte, x []float32)
	corr       int32
	mm         func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte)
	mmGo       func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int)
	asm        *x16Func // the assembly in use, nil where there is none
	groupBytes int      // bytes of one block of a group
	block      int      // elements of one block
	actBytes   int      // bytes of one block of activations
	// mag is the base of a kernel's tolerance on row i of a group
	// against the activation row x (x16Mag for the 32-element types).
	mag func(l *x16Layout, x, group []byte, i, nb int, elems bool) float64
	// unitScales sets every weight scale (and minimum scale) of the
	// groups of nb blocks in wv to 1.
	unitScales func(wv []byte, nb int)
	// unitAct sets every scale of the activation row x of nb blocks to 1.
	unitAct func(x []byte, nb int)
	// fileScales are the offsets of the binary16 scales in a file block
	// (nil: {0}).
	fileScales []int
}

var x16Layouts = []x16Layout{
	{
		typ: Q4_0, fileBytes: q4_0Bytes, qsBytes: 256, randRows: randQ4_0Rows,
		repack: repackQ4_0x16, unpack: unpackQ4_0x16,
		weights: func(b []byte) (w [32]int) {
			for j := 0; j < 16; j++ {
				w[j], w[16+j] = int(b[2+j]&0x0f)-8, int(b[2+j]>>4)-8
			}
			return w
		},
		quantize: quantizeActQ4_0VNNI, corr: -8,
		mm: matMulQ4_0x16, mmGo: matMulQ4_0x16Go, asm: &q4_0x16Asm, groupBytes: q4x16Bytes,
		block: 32, actBytes: x16ActBytes, mag: (*x16Layout).x16Mag, unitScales: unitScalesX16(256), unitAct: unitActX16,
	},
	{
		typ: Q8_0, fileBytes: q8_0Bytes, qsBytes: 512, randRows: randQ8_0Rows,
		repack: repackQ8_0x16, unpack: unpackQ8_0x16,
		weights: func(b []byte) (w [32]int) {
			for j := range w {
				w[j] = int(int8(b[2+j]))
			}
			return w
		},
		quantize: quantizeActQ8_0x16, corr: -128,
		mm: matMulQ8_0x16, mmGo: matMulQ8_0x16Go, asm: &q8_0x16Asm, groupBytes: q8x16Bytes,
		block: 32, actBytes: x16ActBytes, mag: (*x16Layout).x16Mag, unitScales: unitScalesX16(512), unitAct: unitActX16,
	},
	{
		typ: Q5_0, fileBytes: q5_0Bytes, qsBytes: q5x16Quants, randRows: randQ5_0Rows,
		repack: repackQ5_0x16, unpack: unpackQ5_0x16,
		weights: func(b []byte) (w [32]int) {
			qh := binary.LittleEndian.Uint32(b[2:])
			for j := 0; j < 16; j++ {
				w[j] = int(b[6+j]&0x0f) | int(qh>>j&1)<<4 - 16
				w[16+j] = int(b[6+j]>>4) | int(qh>>(16+j)&1)<<4 - 16
			}
			return w
		},
		quantize: quantizeActQ5_0x16, corr: -16,
		mm: matMulQ5_0x16, mmGo: matMulQ5_0x16Go, asm: &q5_0x16Asm, groupBytes: q5x16Bytes,
		block: 32, actBytes: x16ActBytes, mag: (*x16Layout).x16Mag, unitScales: unitScalesX16(q5x16Quants), unitAct: unitActX16,
	},
	{
		typ: Q4_K, fileBytes: q4_KBytes, randRows: randQ4_KRows, fileScales: []int{0, 2},
		repack: repackQ4_Kx16, unpack: unpackQ4_Kx16,
		mm: matMulQ4_Kx16, mmGo: matMulQ4_Kx16Go, asm: &q4_Kx16Asm, groupBytes: q4kx16Bytes,
		block: qkK, actBytes: q8_KBytes, quantize: quantizeActQ8_K, mag: q4kx16Mag,
		unitScales: func(wv []byte, nb int) {
			for o := 0; o+q4kx16Bytes <= len(wv); o += q4kx16Bytes {
				for i := 2048; i < 2112; i += 2 {
					binary.LittleEndian.PutUint16(wv[o+i:], 0x3c00)
				}
			}
		},
		unitAct: unitActQ8_K,
	},
	{
		typ: Q6_K, fileBytes: q6_KBytes, randRows: randQ6_KRows,
		repack: repackQ6_Kx16, unpack: unpackQ6_Kx16,
		mm: matMulQ6_Kx16, mmGo: matMulQ6_Kx16Go, asm: &q6_Kx16Asm, groupBytes: q6kx16Bytes,
		block: qkK, actBytes: q8_KBytes, quantize: quantizeActQ8_K, mag: q6kx16Mag,
		fileScales: []int{208},
		unitScales: func(wv []byte, nb int) {
			for o := 0; o+q6kx16Bytes <= len(wv); o += q6kx16Bytes {
				for i := q6kx16D; i < q6kx16Bytes; i += 2 {
					binary.LittleEndian.PutUint16(wv[o+i:], 0x3c00)
				}
			}
		},
		unitAct: unitActQ8_K,
	},
}

// fileScaleOffsets returns the offsets of the binary16 scales in a file
// block.
func (l *x16Layout) fileScaleOffsets() []int {
	if l.fileScales == nil {
		return []int{0}
	}
	return l.fileScales
}

// unitActQ8_K sets the float32 scales of a row of Q8_K activations to 1.
func unitActQ8_K(x []byte, nb int) {
	for k := 0; k < nb; k++ {
		binary.LittleEndian.PutUint32(x[q8_KBytes*k:], math.Float32bits(1))
	}
}

// randQ6_KRows returns rows random Q6_K rows of nb super-blocks: scales of
// random sign and magnitude, sub-block scales over all of int8 (-128 and
// 127 included), the quants random, some super-blocks' quants all 0 or
// all 63.
func randQ6_KRows(r *rand.Rand, nb, rows int) []byte {
	w := make([]byte, rows*nb*q6_KBytes)
	for i := 0; i < rows*nb; i++ {
		b := w[i*q6_KBytes : (i+1)*q6_KBytes]
		kind := r.IntN(8)
		for j := 0; j < 208; j++ {
			switch {
			case j < 192 && kind == 0:
				b[j] = 0
			case j < 192 && kind == 1:
				b[j] = 0xff
			case j >= 192 && kind == 2:
				b[j] = []byte{0x80, 0x7f}[j%2]
			default:
				b[j] = byte(r.Uint32())
			}
		}
		binary.LittleEndian.PutUint16(b[208:], f32ToF16(float32(math.Ldexp((r.Float64()+0.5)*float64(1-2*r.IntN(2)), r.IntN(10)-18))))
	}
	return w
}

// q6kx16Mag is the tolerance base of the Q6_K layout: Σ over super-blocks
// of |(d·dy)·is|, or with elems of every product sc·(u−32)·x alone.
func q6kx16Mag(_ *x16Layout, x, group []byte, i, nb int, elems bool) float64 {
	t := f16Table
	var mag float64
	for k := 0; k < nb; k++ {
		o, a := group[k*q6kx16Bytes:(k+1)*q6kx16Bytes], x[k*q8_KBytes:(k+1)*q8_KBytes]
		is := int64(q6kx16Sum(o, a, i))
		if elems {
			is = 0
			for e := 0; e < qkK; e++ {
				v := int64(q6kx16Scale(o, i, e/16)) * int64(q6kx16Weight(o, i, e)-32) * int64(int8(a[4+e]))
				is += max(v, -v)
			}
		}
		dy := float64(math.Float32frombits(binary.LittleEndian.Uint32(a)))
		mag += math.Abs(float64(t[le16(o[q6kx16D+2*i:])]) * dy * float64(is))
	}
	return mag
}

// unitScalesX16 sets the binary16 scales of the 32-element 16-row groups
// whose block of quants is qsBytes to 1.
func unitScalesX16(qsBytes int) func(wv []byte, nb int) {
	return func(wv []byte, nb int) {
		gb := nb * (qsBytes + 32)
		for g := 0; g+gb <= len(wv); g += gb {
			ds := wv[g+qsBytes*nb : g+gb]
			for i := 0; i < len(ds); i += 2 {
				binary.LittleEndian.PutUint16(ds[i:], 0x3c00)
			}
		}
	}
}

// unitActX16 sets the float32 scales of a row of 16-row-layout
// activations to 1.
func unitActX16(x []byte, nb int) {
	for k := 0; k < nb; k++ {
		binary.LittleEndian.PutUint32(x[x16ActBytes*k+36:], math.Float32bits(1))
	}
}

// randQ4_KRows returns rows random Q4_K rows of nb super-blocks: scales
// and minimum scales of random sign and magnitude, every bit of the
// packed 6-bit values and the quants random, some super-blocks' quants
// all 0 or all 15.
func randQ4_KRows(r *rand.Rand, nb, rows int) []byte {
	w := make([]byte, rows*nb*q4_KBytes)
	for i := 0; i < rows*nb; i++ {
		b := w[i*q4_KBytes : (i+1)*q4_KBytes]
		for j := 0; j < 2; j++ {
			binary.LittleEndian.PutUint16(b[2*j:], f32ToF16(float32(math.Ldexp((r.Float64()+0.5)*float64(1-2*r.IntN(2)), r.IntN(10)-14))))
		}
		kind := r.IntN(8)
		for j := 4; j < q4_KBytes; j++ {
			switch {
			case j >= 16 && kind == 0:
				b[j] = 0
			case j >= 16 && kind == 1:
				b[j] = 0xff
			default:
				b[j] = byte(r.Uint32())
			}
		}
	}
	return w
}

// unpackQ4_Kx16 is the inverse of repackQ4_Kx16 on one group: row i of
// the file's layout.
func unpackQ4_Kx16(row []byte, group []byte, i, nb int) {
	for k := 0; k < nb; k++ {
		o := group[k*q4kx16Bytes : (k+1)*q4kx16Bytes]
		b := row[k*q4_KBytes : (k+1)*q4_KBytes]
		b[0], b[1] = o[2048+2*i], o[2048+2*i+1]
		b[2], b[3] = o[2080+2*i], o[2080+2*i+1]
		w := q4kx16Words(o, i)
		var sc, m [8]byte
		for j := 0; j < 8; j++ {
			sc[j], m[j] = byte(q4kx16Value(w, j)), byte(q4kx16Value(w, 8+j))
		}
		s := b[4:16]
		for j := 0; j < 4; j++ {
			s[j] = sc[j] | (sc[j+4]>>4)<<6
			s[j+4] = m[j] | (m[j+4]>>4)<<6
			s[j+8] = sc[j+4]&15 | (m[j+4]&15)<<4
		}
		for c := 0; c < 4; c++ {
			for p := 0; p < 8; p++ {
				copy(b[16+32*c+4*p:][:4], o[512*c+64*p+4*i:])
			}
		}
	}
}

// q4kx16Mag is the tolerance base of the Q4_K layout: Σ over super-blocks
// of |(d·dy)·is| + |(dmin·dy)·ms|, or with elems every product alone.
func q4kx16Mag(_ *x16Layout, x, group []byte, i, nb int, elems bool) float64 {
	t := f16Table
	var mag float64
	for k := 0; k < nb; k++ {
		o, a := group[k*q4kx16Bytes:(k+1)*q4kx16Bytes], x[k*q8_KBytes:(k+1)*q8_KBytes]
		is, ms := q4kx16Sums(o, a, i)
		if elems {
			is, ms = 0, 0
			w := q4kx16Words(o, i)
			for j := 0; j < 8; j++ {
				c, hi := j/2, uint(j%2)
				for p := 0; p < 8; p++ {
					for l := 0; l < 4; l++ {
						q := int32(o[512*c+64*p+4*i+l] >> (4 * hi) & 0x0f)
						v := q * int32(int8(a[4+64*c+32*int(hi)+4*p+l]))
						is += int32(q4kx16Value(w, j)) * max(v, -v)
					}
				}
				bs := int32(int16(le16(a[260+4*j:]))) + int32(int16(le16(a[262+4*j:])))
				ms += int32(q4kx16Value(w, 8+j)) * max(bs, -bs)
			}
		}
		dy := float64(math.Float32frombits(binary.LittleEndian.Uint32(a)))
		mag += math.Abs(float64(t[le16(o[2048+2*i:])])*dy*float64(is)) + math.Abs(float64(t[le16(o[2080+2*i:])])*dy*float64(ms))
	}
	return mag
}

// x16Impl is one assembly implementation of a 16-row layout's MatMulQ.
type x16Impl struct {
	name string
	f    x16Func
}

// forX16Asm runs f on each 16-row layout with each assembly
// implementation the CPU runs (AVX-512 VNNI, AVX2) put in use in turn, as
// subtests; a layout with none is skipped.
func forX16Asm(t *testing.T, f func(t *testing.T, l *x16Layout)) {
	forX16(t, func(t *testing.T, l *x16Layout) {
		impls := x16AsmImpls(l.typ)
		if len(impls) == 0 {
			t.Skip("no assembly for this layout on this CPU")
		}
		for _, im := range impls {
			t.Run(im.name, func(t *testing.T) {
				defer func(f x16Func) { *l.asm = f }(*l.asm)
				*l.asm = im.f
				f(t, l)
			})
		}
	})
}

// forX16 runs f on each 16-row layout as a subtest.
func forX16(t *testing.T, f func(t *testing.T, l *x16Layout)) {
	for i := range x16Layouts {
		l := &x16Layouts[i]
		t.Run(l.typ.String(), func(t *testing.T) { f(t, l) })
	}
}

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

// randQ5_0Rows returns rows random Q5_0 rows of nb blocks: quants and
// fifth bits drawn from every value and scales of random sign and
// magnitude, with some blocks forced to all 0 (-16) or all 31.
func randQ5_0Rows(r *rand.Rand, nb, rows int) []byte {
	w := make([]byte, rows*nb*q5_0Bytes)
	for i := 0; i < rows*nb; i++ {
		b := w[i*q5_0Bytes : (i+1)*q5_0Bytes]
		binary.LittleEndian.PutUint16(b, f32ToF16(float32(math.Ldexp((r.Float64()+0.5)*float64(1-2*r.IntN(2)), r.IntN(12)-16))))
		kind := r.IntN(8)
		for j := 2; j < q5_0Bytes; j++ {
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

// x16Magnitude returns Σ over blocks of |block sum × combined scale| of
// rearranged row i of the group at group against the activation row x:
// the terms the kernels add in float32, the base of the tolerance.
func (l *x16Layout) x16Magnitude(x, group []byte, i, nb int) float64 {
	return l.mag(l, x, group, i, nb, false)
}

// x16ElemMagnitude is x16Magnitude of every product alone, the
// tolerance's base against the file layout's own kernels, which scale
// partial sums of a block (the AVX2 lanes) before adding them.
func (l *x16Layout) x16ElemMagnitude(x, group []byte, i, nb int) float64 {
	return l.mag(l, x, group, i, nb, true)
}

func (l *x16Layout) x16Mag(x, group []byte, i, nb int, elems bool) float64 {
	row := make([]byte, nb*l.fileBytes)
	l.unpack(row, group, i, nb)
	var mag float64
	for k := 0; k < nb; k++ {
		b, xb := row[k*l.fileBytes:], x[x16ActBytes*k:]
		w := l.weights(b)
		var s int64
		for j, wj := range w {
			p := int64(wj) * int64(int8(xb[j]))
			if elems {
				p = max(p, -p)
			}
			s += p
		}
		mag += math.Abs(float64(s) * float64(f16ToF32(le16(b))) * float64(math.Float32frombits(binary.LittleEndian.Uint32(xb[36:]))))
	}
	return mag
}

// TestX16Layout holds the rearrangement to the file's rows: every row of
// every group comes back from unpack byte for byte.
func TestX16Layout(t *testing.T) {
	forX16(t, func(t *testing.T, l *x16Layout) {
		r := rand.New(rand.NewPCG(91, 92))
		for _, nb := range []int{1, 2, 7, 28} {
			groups := 3
			w := l.randRows(r, nb, 16*groups)
			wv := make([]byte, len(w))
			l.repack(wv, w, l.block*nb)
			rb, gb := nb*l.fileBytes, nb*l.groupBytes
			row := make([]byte, rb)
			for g := 0; g < groups; g++ {
				for i := 0; i < 16; i++ {
					l.unpack(row, wv[g*gb:(g+1)*gb], i, nb)
					want := w[(16*g+i)*rb : (16*g+i+1)*rb]
					if string(row) != string(want) {
						t.Fatalf("%d blocks: group %d row %d does not come back", nb, g, i)
					}
				}
			}
		}
	})
}

// TestQuantizeActX16 holds the activation quantisers to Q8_0's: the same
// quants and scale, and the layout's factor × the block's sum of quants.
func TestQuantizeActX16(t *testing.T) {
	forX16(t, func(t *testing.T, l *x16Layout) {
		if l.corr == 0 {
			return // Q4_K's and Q6_K's activations are Q8_K's, with their own tests
		}
		r := rand.New(rand.NewPCG(93, 94))
		for nb := 1; nb <= 40; nb++ {
			x := randActs(r, 32*nb)
			xq8 := make([]byte, nb*q8_0Bytes)
			quantizeActQ8_0(xq8, x)
			xv := make([]byte, nb*x16ActBytes)
			l.quantize(xv, x)
			for k := 0; k < nb; k++ {
				b, v := xq8[k*q8_0Bytes:], xv[k*x16ActBytes:]
				var sum int32
				for j := 0; j < 32; j++ {
					if v[j] != b[2+j] {
						t.Fatalf("%d blocks: block %d quant %d = %d, Q8_0 has %d", nb, k, j, int8(v[j]), int8(b[2+j]))
					}
					sum += int32(int8(b[2+j]))
				}
				if c := int32(binary.LittleEndian.Uint32(v[32:])); c != l.corr*sum {
					t.Fatalf("%d blocks: block %d correction %d, want %d", nb, k, c, l.corr*sum)
				}
				if d, want := math.Float32frombits(binary.LittleEndian.Uint32(v[36:])), f16ToF32(le16(b)); d != want {
					t.Fatalf("%d blocks: block %d scale %v, Q8_0 has %v", nb, k, d, want)
				}
			}
		}
	})
}

// TestX16GoMatchesFile holds the Go twins to the file type's integer
// kernel on the file's rows: the same block sums and scales, so within
// float32 summation order, and with unit scales exactly the same
// integers.
func TestX16GoMatchesFile(t *testing.T) {
	forX16(t, func(t *testing.T, l *x16Layout) {
		r := rand.New(rand.NewPCG(95, 96))
		kf, _ := Lookup(l.typ)
		for nb := 1; nb <= 40; nb += 3 {
			if l.block > 32 && nb > 10 {
				break
			}
			n, rows, batch := l.block*nb, 32, 3
			w := l.randRows(r, nb, rows)
			for unit := range 2 {
				if unit == 1 {
					for i := 0; i < rows*nb; i++ {
						for _, at := range l.fileScaleOffsets() {
							binary.LittleEndian.PutUint16(w[i*l.fileBytes+at:], 0x3c00)
						}
					}
				}
				wv := make([]byte, len(w))
				l.repack(wv, w, n)
				lq, ldx := kf.ActRowBytes(n), nb*l.actBytes
				xq8 := make([]byte, batch*lq)
				xv := make([]byte, batch*ldx)
				for b := 0; b < batch; b++ {
					x := randActs(r, n)
					if unit == 1 {
						for i := range x {
							x[i] = float32(r.IntN(255) - 127)
						}
						for k := 0; k < n; k += 32 {
							x[k] = 127 // every block's scale is ±1
						}
					}
					kf.QuantizeAct(xq8[b*lq:(b+1)*lq], x)
					l.quantize(xv[b*ldx:(b+1)*ldx], x)
				}
				got := make([]float32, batch*rows)
				l.mmGo(got, rows, xv, ldx, batch, wv, nb)
				for b := 0; b < batch; b++ {
					for row := 0; row < rows; row++ {
						want := kf.DotQ(xq8[b*lq:(b+1)*lq], w[row*nb*l.fileBytes:(row+1)*nb*l.fileBytes])
						g := got[b*rows+row]
						tol := float64(nb+16) * 0x1p-23 * l.x16ElemMagnitude(xv[b*ldx:], wv[row/16*nb*l.groupBytes:], row%16, nb)
						if unit == 1 && l.block == 32 {
							tol = 0 // (Q4_K's sums pass 2^24, where float32 order shows)
						}
						if d := math.Abs(float64(g) - float64(want)); !(d <= tol) {
							t.Fatalf("%d blocks, token %d row %d, unit scales %v: Go twin %v, %v %v, difference %g above %g", nb, b, row, unit == 1, g, l.typ, want, d, tol)
						}
					}
				}
			}
		}
	})
}

// checkX16Asm holds the assembly to the Go twin on one random case:
// batch tokens against groups groups of nb blocks, outputs ldo apart
// with guard values between them that must stay untouched. With real
// scales they agree within float32 rounding of the block terms; with
// unit scales exactly.
func checkX16Asm(t *testing.T, l *x16Layout, r *rand.Rand, nb, groups, batch int) {
	t.Helper()
	if l.block > 32 {
		nb = max(nb/8, 1) // nb counts 32-element blocks; Q4_K's are 256
	}
	rows, n := 16*groups, l.block*nb
	w := l.randRows(r, nb, rows)
	wv := make([]byte, len(w))
	l.repack(wv, w, n)
	ldx := nb*l.actBytes + 8*r.IntN(2)
	xv := make([]byte, batch*ldx)
	for b := 0; b < batch; b++ {
		l.quantize(xv[b*ldx:], randActs(r, n))
	}
	ldo := rows + r.IntN(3)
	const guard = -12345.5
	for unit := range 2 {
		if unit == 1 {
			l.unitScales(wv, nb)
			for b := 0; b < batch; b++ {
				l.unitAct(xv[b*ldx:], nb)
			}
		}
		got, want := make([]float32, batch*ldo), make([]float32, batch*ldo)
		for i := range got {
			got[i], want[i] = guard, guard
		}
		l.mm(got, ldo, xv, ldx, batch, wv)
		l.mmGo(want, ldo, xv, ldx, batch, wv, nb)
		for b := 0; b < batch; b++ {
			for row := 0; row < ldo; row++ {
				g, wt := got[b*ldo+row], want[b*ldo+row]
				if row >= rows {
					if g != guard {
						t.Fatalf("%d blocks, %d groups, batch %d: token %d wrote past its rows (%d)", nb, groups, batch, b, row)
					}
					continue
				}
				tol := float64(nb+16) * 0x1p-23 * l.x16Magnitude(xv[b*ldx:], wv[row/16*nb*l.groupBytes:], row%16, nb)
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

// TestX16Asm holds the assembly to its Go twin on every batch from 1 to
// 19 (tiles of 8, 4 and 1 tokens), row lengths of 1 to 40 blocks and 1
// to 3 groups.
func TestX16Asm(t *testing.T) {
	forX16Asm(t, func(t *testing.T, l *x16Layout) {
		r := rand.New(rand.NewPCG(97, 98))
		for batch := 1; batch <= 19; batch++ {
			for _, nb := range []int{1, 2, 3, 8, 28, 40} {
				checkX16Asm(t, l, r, nb, 1+batch%3, batch)
			}
		}
	})
}

// FuzzX16Asm holds each assembly implementation to the Go twin on fuzzed
// layouts, shapes and seeds.
func FuzzX16Asm(f *testing.F) {
	type impl struct {
		l *x16Layout
		x16Impl
	}
	var impls []impl
	for i := range x16Layouts {
		for _, im := range x16AsmImpls(x16Layouts[i].typ) {
			impls = append(impls, impl{&x16Layouts[i], im})
		}
	}
	if len(impls) == 0 {
		f.Skip("no assembly for the 16-row layouts on this CPU")
	}
	for i, s := range [][3]uint8{{1, 1, 1}, {2, 1, 4}, {28, 2, 8}, {152, 1, 9}, {17, 3, 13}, {3, 2, 32}, {24, 2, 5}, {7, 1, 3}} {
		f.Add(uint8(i), s[0], s[1], s[2], uint64(s[0])*7+uint64(s[2]))
	}
	f.Fuzz(func(t *testing.T, which, nb, groups, batch uint8, seed uint64) {
		im := impls[int(which)%len(impls)]
		defer func(f x16Func) { *im.l.asm = f }(*im.l.asm)
		*im.l.asm = im.f
		r := rand.New(rand.NewPCG(seed, ^seed))
		checkX16Asm(t, im.l, r, max(int(nb)%160, 1), max(int(groups)%5, 1), max(int(batch)%40, 1))
	})
}

// TestRepackedAgainstFile compares what the engine swaps in for a matrix
// of whole groups, the repacked kernel end to end (QuantizeAct, DotQRows
// and MatMulQ on rearranged groups), with the file type's kernel on the
// file's rows, with each assembly implementation in use (the AVX2 one as
// on a CPU without AVX-512 VNNI).
func TestRepackedAgainstFile(t *testing.T) {
	forX16Asm(t, func(t *testing.T, l *x16Layout) {
		rp := Repacked(l.typ, 16)
		if rp == nil {
			t.Skip("no repacked kernel on this CPU")
		}
		kf, _ := Lookup(l.typ)
		k := rp.Kernel
		if k.RowGroup != 16 || rp.Rows != 16 {
			t.Fatalf("row group %d, repacker rows %d, want 16", k.RowGroup, rp.Rows)
		}
		r := rand.New(rand.NewPCG(99, 100))
		for _, shape := range [][3]int{{1, 16, 1}, {28, 32, 5}, {152, 16, 12}, {28, 48, 32}} {
			nb, rows, batch := shape[0], shape[1], shape[2]
			if l.block > 32 {
				nb = max(nb/8, 1)
			}
			n := l.block * nb
			w := l.randRows(r, nb, rows)
			wv := make([]byte, len(w))
			rp.Repack(wv, w, n)
			lq, lv := kf.ActRowBytes(n), k.ActRowBytes(n)
			xq8, xv := make([]byte, batch*lq), make([]byte, batch*lv)
			for b := 0; b < batch; b++ {
				x := randActs(r, n)
				kf.QuantizeAct(xq8[b*lq:(b+1)*lq], x)
				k.QuantizeAct(xv[b*lv:(b+1)*lv], x)
			}
			got := make([]float32, batch*rows)
			k.MatMulQ(got, rows, xv, lv, batch, wv)
			one := make([]float32, rows)
			for b := 0; b < batch; b++ {
				want := make([]float32, rows)
				kf.DotQRows(want, xq8[b*lq:(b+1)*lq], w)
				k.DotQRows(one, xv[b*lv:(b+1)*lv], wv)
				for row := range want {
					tol := float64(nb+16) * 0x1p-23 * l.x16ElemMagnitude(xv[b*lv:], wv[row/16*nb*l.groupBytes:], row%16, nb)
					if d := math.Abs(float64(got[b*rows+row]) - float64(want[row])); !(d <= tol) {
						t.Fatalf("%d blocks, token %d row %d: repacked %v, %v %v, difference %g above %g", nb, b, row, got[b*rows+row], l.typ, want[row], d, tol)
					}
					if one[row] != got[b*rows+row] {
						t.Fatalf("%d blocks, token %d row %d: DotQRows %v, MatMulQ %v", nb, b, row, one[row], got[b*rows+row])
					}
				}
			}
		}
		out, xv, wv := make([]float32, 16*8), make([]byte, 8*l.actBytes*3), make([]byte, 16*l.fileBytes*3)
		if a := testing.AllocsPerRun(10, func() { k.MatMulQ(out, 16, xv, l.actBytes*3, 8, wv) }); a != 0 {
			t.Errorf("MatMulQ allocates %v times", a)
		}
	})
}
