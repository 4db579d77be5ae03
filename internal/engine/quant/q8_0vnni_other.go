//go:build !amd64 || purego

package quant

// No kernel on rearranged Q8_0 rows on this architecture (or with -tags
// purego): Repacked returns nil.
var (
	q8_0VNNIRows            func(out []float32, xq, w []byte)
	quantizeActQ8_0VNNIImpl = quantizeActQ8_0VNNIGo
)
