//go:build !purego

package quant

// x16Tile is the assembly of one tile of tokens on 16-row groups: it sets
// out[t·ldo + r], for the tokens t of its tile (activation rows of ldx
// bytes at x) and the rows r of the groups consecutive groups of nb
// blocks at w, to their dot products.
type x16Tile func(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// x16Tiles makes the MatMulQ of a 16-row layout whose group of one block
// is blockBytes, from its tiles of 8, 4 and 1 tokens: tiles of 8 tokens,
// then one of 4, then single tokens, each over every group of w; nil
// without AVX-512 VNNI. The caller has checked the lengths; nb > 0.
func x16Tiles(blockBytes int, t8, t4, t1 x16Tile) func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
	if !hasVNNI {
		return nil
	}
	return func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
		groups := len(w) / (nb * blockBytes)
		if groups == 0 {
			return
		}
		b := 0
		for ; b+8 <= batch; b += 8 {
			t8(&xq[b*ldx], ldx, &w[0], nb, groups, &out[b*ldo], ldo)
		}
		if b+4 <= batch {
			t4(&xq[b*ldx], ldx, &w[0], nb, groups, &out[b*ldo], ldo)
			b += 4
		}
		for ; b < batch; b++ {
			t1(&xq[b*ldx], ldx, &w[0], nb, groups, &out[b*ldo], ldo)
		}
	}
}

// q4_0x16VNNI is the assembly MatMulQ of rearranged Q4_0 groups, nil
// without AVX-512 VNNI.
var q4_0x16VNNI = x16Tiles(q4x16Bytes, q4x16T8, q4x16T4, q4x16T1)

// q8_0x16VNNI is the assembly MatMulQ of rearranged Q8_0 groups, nil
// without AVX-512 VNNI.
var q8_0x16VNNI = x16Tiles(q8x16Bytes, q8x16T8, q8x16T4, q8x16T1)

// q4x16T8, q4x16T4 and q4x16T1 are the x16Tile kernels of Q4_0's groups
// (q4_0vnni_amd64.s).
//
//go:noescape
func q4x16T8(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4x16T4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q4x16T1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// q8x16T8, q8x16T4 and q8x16T1 are the x16Tile kernels of Q8_0's groups
// (q8_0x16_amd64.s).
//
//go:noescape
func q8x16T8(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q8x16T4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q8x16T1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
