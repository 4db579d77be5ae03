package engine

import (
	"runtime/debug"
	"slices"
	"unsafe"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// Rearranging weights at load. Where the CPU has a faster kernel on a
// rearranged layout of a weight type (quant.Repacked: Q4_0, Q5_0, Q8_0,
// Q4_K and Q6_K on AVX-512 VNNI, Q4_0, Q5_0 and Q8_0 on AVX2), Load
// copies every matrix of that type that goes through a matrix product
// (the layers' and the output's; for a layout that interleaves rows,
// those whose row count is a whole number of groups) into memory of its
// own, in that layout; prefill and decode then read those copies and not
// the file. The token embedding keeps the file's layout, since its rows
// are only decoded one at a time for lookup; when the output matrix is
// tied to it, the output gets a rearranged copy of its own.
// Options.NoRepack turns this off.

// repackable returns the matrices of w that Load rearranges when repack
// is on.
func (w *weights) repackable() []*matrix {
	var ms []*matrix
	add := func(m *matrix) {
		if rp := quant.Repacked(m.typ, m.rows); rp != nil && m.f32 == nil {
			ms = append(ms, m)
		}
	}
	add(&w.output)
	for _, m := range w.allLayerMatrices() {
		add(m)
	}
	return ms
}

// matrixBytes is the size of the encoded data of ms together.
func matrixBytes(ms []*matrix) uint64 {
	var n uint64
	for _, m := range ms {
		n += uint64(len(m.data))
	}
	return n
}

// actBytesAfter is maxActBytes once the matrices ms are rearranged:
// their kernels take activations of another size.
func (w *weights) actBytesAfter(ms []*matrix) int {
	n := w.maxActBytes()
	for _, m := range ms {
		n = max(n, quant.Repacked(m.typ, m.rows).Kernel.ActRowBytes(m.cols))
	}
	return n
}

// repackChunk is how many bytes of rows one task of the repack job
// rearranges.
const repackChunk = 1 << 20

// repackTask is a range of whole rows of one matrix to rearrange into dst.
type repackTask struct {
	m      *matrix
	rp     *quant.Repacker
	dst    []byte
	lo, hi int // byte range of rows
}

// repackJob rearranges its tasks on the model's worker pool, a task a row.
type repackJob []repackTask

func (j repackJob) runRows(_, lo, hi int) {
	for _, t := range j[lo:hi] {
		t.rp.Repack(t.dst[t.lo:t.hi], t.m.data[t.lo:t.hi], t.m.cols)
	}
}

// repack rearranges the matrices ms into fresh memory (allocRepacked,
// freed by Close) on the model's worker pool, and points each at its copy
// and its kernel. The rows are read from the mapped file: a fault there
// (the file cut short under the load) is returned as ErrModelFault and
// leaves every matrix as it was. When mapped (the file was mapped by
// gguf.Open, not the bundled bytes) the pages of the file that only the
// rearranged matrices used are handed back (releaseFile).
func (m *Model) repack(ms []*matrix, mapped bool) (err error) {
	var job repackJob
	dsts := make([][]byte, len(ms))
	mem, free := allocRepacked(int(matrixBytes(ms)))
	for i, mx := range ms {
		rp := quant.Repacked(mx.typ, mx.rows)
		dsts[i], mem = mem[:len(mx.data):len(mx.data)], mem[len(mx.data):]
		unit := mx.rowBytes * rp.Rows // whole groups of rows
		step := max(repackChunk/unit, 1) * unit
		for lo := 0; lo < len(mx.data); lo += step {
			job = append(job, repackTask{mx, rp, dsts[i], lo, min(lo+step, len(mx.data))})
		}
	}
	// A fault on a worker is raised again here by the pool, once every
	// participant is done; guard turns it into ErrModelFault.
	defer func() {
		if err != nil {
			free()
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer m.guard(&err)
	m.pool.run(job, len(job), repackChunk)
	m.freeRepacked = free
	m.released = m.w.fileSpans(ms, m.file.Data())
	m.releaseMapped = mapped
	m.dropReleased()
	for i, mx := range ms {
		rp := quant.Repacked(mx.typ, mx.rows)
		mx.data, mx.kern, mx.repacked = dsts[i], rp.Kernel, rp.Name
	}
	return nil
}

// dropReleased hands the file's pages of the rearranged matrices back
// (releaseFile) when the file is mapped from disk: after repack, and after
// anything that reads the whole mapping (the hash of Info) and so pages
// them in again.
func (m *Model) dropReleased() {
	if m.releaseMapped {
		releaseFile(m.file.Data(), m.released)
	}
}

// Kernels names the instruction sets of the model's integer dot products,
// as Info.Kernels does, without Info's hash of the file.
func (m *Model) Kernels() string { return m.w.kernelSummary() }

// kernelSummary names the integer dot products the matrix products use:
// "avx2", or "avx512-vnni on Q8_0 rearranged at load; avx2" when some
// matrices were rearranged, a phrase for each type rearranged (Q4_K_M
// files: Q6_K's and Q4_K's).
func (w *weights) kernelSummary() string {
	var names []string
	for _, m := range append([]*matrix{&w.output}, w.allLayerMatrices()...) {
		if n := m.repacked + " on " + m.typ.String() + " rearranged at load"; m.repacked != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	names = append(names, quant.Accel())
	s := names[0]
	for _, n := range names[1:] {
		s += "; " + n
	}
	return s
}

// span is a range of byte offsets [lo, hi) in the model file.
type span struct{ lo, hi int }

// fileSpans returns, sorted, the ranges of the file data holding the
// matrices ms that nothing else reads once they are rearranged: not the
// token embedding's, which stays in use for lookups when the output is
// tied to it.
func (w *weights) fileSpans(ms []*matrix, data []byte) []span {
	base := uintptrOf(data)
	var out []span
	for _, mx := range ms {
		p := uintptrOf(mx.data)
		if p < base || p-base >= uintptr(len(data)) || p == uintptrOf(w.tokenEmbd.data) {
			continue
		}
		lo := int(p - base)
		out = append(out, span{lo, lo + len(mx.data)})
	}
	slices.SortFunc(out, func(a, b span) int { return a.lo - b.lo })
	return out
}

// pageInSkipping is pageIn over data except the spans (sorted).
func pageInSkipping(data []byte, skip []span) byte {
	var x byte
	at := 0
	for _, s := range skip {
		if s.lo > at {
			x ^= pageIn(data[at:s.lo])
		}
		at = max(at, s.hi)
	}
	if at < len(data) {
		x ^= pageIn(data[at:])
	}
	return x
}

// uintptrOf is the address of b's first byte.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// allLayerMatrices returns the matrices of every layer.
func (w *weights) allLayerMatrices() []*matrix {
	var ms []*matrix
	for i := range w.layers {
		ly := &w.layers[i]
		ms = append(ms, &ly.wq, &ly.wk, &ly.wv, &ly.wo, &ly.wGate, &ly.wUp, &ly.wDown)
	}
	return ms
}
