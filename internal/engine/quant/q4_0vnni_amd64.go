//go:build !purego

package quant

// q4_0x16VNNI is the assembly MatMulQ of rearranged Q4_0 groups, nil
// without AVX-512 VNNI: tiles of 8 tokens, then one of 4, then single
// tokens, each over every group of w. The caller has checked the
// lengths; nb > 0.
var q4_0x16VNNI = func() func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
	if !hasVNNI {
		return nil
	}
	return func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
		groups := len(w) / (nb * q4x16Bytes)
		if groups == 0 {
			return
		}
		b := 0
		for ; b+8 <= batch; b += 8 {
			q4x16T8(&xq[b*ldx], ldx, &w[0], nb, groups, &out[b*ldo], ldo)
		}
		if b+4 <= batch {
			q4x16T4(&xq[b*ldx], ldx, &w[0], nb, groups, &out[b*ldo], ldo)
			b += 4
		}
		for ; b < batch; b++ {
			q4x16T1(&xq[b*ldx], ldx, &w[0], nb, groups, &out[b*ldo], ldo)
		}
	}
}()

// q4x16T8, q4x16T4 and q4x16T1 set out[t·ldo + r], for the tokens t of
// their tile (activation rows of ldx bytes at x) and the rows r of the
// groups consecutive groups of 16 rearranged Q4_0 rows of nb blocks at w,
// to their dot products (q4_0vnni_amd64.s).
//
//go:noescape
func q4x16T8(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4x16T4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4x16T1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
