//go:build !purego

package quant

import "golang.org/x/sys/cpu"

// hasVNNI reports whether the AVX-512 VNNI kernels may run: AVX-512 F,
// BW, VL and VNNI, with the OS saving the ZMM registers (x/sys/cpu checks
// that).
var hasVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// q8_0VNNIRows is the assembly DotQRows of rearranged Q8_0 rows, nil
// without AVX-512 VNNI; the callers have checked that xq holds whole
// blocks and w every row.
var q8_0VNNIRows = func() func(out []float32, xq, w []byte) {
	if !hasVNNI {
		return nil
	}
	return func(out []float32, xq, w []byte) {
		q8_0RowsVNNI(&xq[0], &w[0], len(xq)/q8_0VNNIActBytes, &out[0], len(out))
	}
}()

// quantizeActQ8_0VNNIImpl quantises activations for the rearranged
// kernel: the assembly with AVX-512 VNNI (it uses VPDPBUSD for the
// corrections), else the Go twin.
var quantizeActQ8_0VNNIImpl = func() func(dst []byte, x []float32) {
	if !hasVNNI {
		return quantizeActQ8_0VNNIGo
	}
	return func(dst []byte, x []float32) {
		nb := len(x) / 32
		if nb == 0 {
			return
		}
		_ = dst[nb*q8_0VNNIActBytes-1]
		quantizeActQ8_0VNNIAsm(&dst[0], &x[0], nb)
	}
}()

// q8_0RowsVNNI sets out[r], for the rows consecutive rearranged Q8_0
// weight rows of nb blocks at w, to the dot product with the nb
// Q8_0VNNIAct activation blocks at x (q8_0vnni_amd64.s).
//
//go:noescape
func q8_0RowsVNNI(x, w *byte, nb int, out *float32, rows int)

// quantizeActQ8_0VNNIAsm is quantizeActQ8_0VNNIGo on nb blocks
// (q8_0vnni_amd64.s).
//
//go:noescape
func quantizeActQ8_0VNNIAsm(dst *byte, x *float32, nb int)
