//go:build !amd64 || purego

package quant

// No kernel on rearranged Q4_0 groups on this architecture (or with -tags
// purego): Repacked(Q4_0) returns nil.
var q4_0x16VNNI func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte, nb int)
