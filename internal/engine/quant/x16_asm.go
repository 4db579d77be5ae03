//go:build (amd64 || arm64) && !purego

package quant

// x16Tile is the assembly of one tile of tokens on 16-row groups: it sets
// out[t·ldo + r], for the tokens t of its tile (activation rows of ldx
// bytes at x) and the rows r of the groups consecutive groups of nb
// blocks at w, to their dot products.
type x16Tile func(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

// x16Tiles makes the x16Func of a 16-row layout whose group of one block
// is blockBytes from its tiles (sizes in tokens, largest first, the last
// 1): as many of the largest tiles as the batch holds, then of the next,
// each over every group of w. It returns nil when ok is false (the CPU
// lacks the tiles' instructions).
func x16Tiles(ok bool, blockBytes int, sizes []int, tiles ...x16Tile) x16Func {
	if !ok {
		return nil
	}
	return func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int) {
		groups := len(w) / (nb * blockBytes)
		if groups == 0 {
			return
		}
		b := 0
		for i, n := range sizes {
			for ; b+n <= batch; b += n {
				tiles[i](&xq[b*ldx], ldx, &w[0], nb, groups, &out[b*ldo], ldo)
			}
		}
	}
}
