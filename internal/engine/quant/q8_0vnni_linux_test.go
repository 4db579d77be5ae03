//go:build linux && amd64 && !purego

package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/unix"
)

// guarded returns n bytes that end where an inaccessible page begins, so
// that reading one byte past them faults.
func guarded(t *testing.T, n int) []byte {
	t.Helper()
	ps := unix.Getpagesize()
	size := (n+ps-1)/ps*ps + ps
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	if err := unix.Mprotect(mem[size-ps:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	return mem[size-ps-n : size-ps : size-ps]
}

// TestQ8_0VNNIReadsInBounds runs the assembly (kernel and quantiser) on
// rows and activations that end right before an inaccessible page, for
// every row length from 1 to 40 blocks: the masked loads of a row's tail
// must not read past the last row, nor past the activations.
func TestQ8_0VNNIReadsInBounds(t *testing.T) {
	if q8_0VNNIRows == nil {
		t.Skip("no AVX-512 VNNI kernel on this CPU")
	}
	r := rand.New(rand.NewPCG(89, 90))
	for nb := 1; nb <= 40; nb++ {
		const rows = 3
		src := randQ8_0Rows(r, nb, rows)
		w := guarded(t, len(src))
		repackQ8_0VNNI(w, src, 32*nb)
		x := randActs(r, 32*nb)
		xq := guarded(t, 68*nb)
		quantizeActQ8_0VNNIImpl(xq, x)
		got := make([]float32, rows)
		q8_0VNNIRows(got, xq, w)
		for row := range got {
			wr := w[row*34*nb : (row+1)*34*nb]
			want := dotQ8_0VNNIGo(xq, wr)
			if d := math.Abs(float64(got[row]) - float64(want)); !(d <= float64(nb+16)*0x1p-23*laneMagnitude(xq, wr)) {
				t.Fatalf("%d blocks, row %d: %v, Go %v", nb, row, got[row], want)
			}
		}
	}
}

// TestX16ReadsInBounds runs the 16-row layouts' assembly on groups and
// activations that end right before an inaccessible page, for tiles of
// 16, 8, 4 and 1 tokens: no load of the last group's scales or the last
// token's activations may read past them.
func TestX16ReadsInBounds(t *testing.T) {
	forX16Asm(t, func(t *testing.T, l *x16Layout) {
		r := rand.New(rand.NewPCG(87, 88))
		for _, nb := range []int{1, 3, 24} {
			for _, batch := range []int{1, 4, 8, 13, 16, 21} {
				const groups = 2
				src := l.randRows(r, nb, 16*groups)
				w := guarded(t, len(src))
				l.repack(w, src, l.block*nb)
				ldx := nb * l.actBytes
				xv := guarded(t, batch*ldx)
				for b := 0; b < batch; b++ {
					l.quantize(xv[b*ldx:(b+1)*ldx], randActs(r, l.block*nb))
				}
				got, want := make([]float32, batch*16*groups), make([]float32, batch*16*groups)
				l.mm(got, 16*groups, xv, ldx, batch, w)
				l.mmGo(want, 16*groups, xv, ldx, batch, w, nb)
				for i := range got {
					row := i % (16 * groups)
					tol := float64(nb+16) * 0x1p-23 * l.x16Magnitude(xv[i/(16*groups)*ldx:], w[row/16*nb*l.groupBytes:], row%16, nb)
					if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= tol) {
						t.Fatalf("%d blocks, batch %d, output %d: %v, Go %v", nb, batch, i, got[i], want[i])
					}
				}
			}
		}
	})
}
