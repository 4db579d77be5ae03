package quant_test

import (
	"fmt"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// Encode a row as Q8_0, then multiply it with activations without decoding
// it, and compare with the decoded row.
func Example() {
	k, err := quant.Lookup(quant.Q8_0)
	if err != nil {
		panic(err)
	}
	row := make([]float32, 64) // two 32-element blocks
	x := make([]float32, 64)
	for i := range row {
		row[i] = float32(i%8) - 3.5
		x[i] = 1
	}
	n, _ := quant.RowBytes(quant.Q8_0, len(row))
	w := make([]byte, n)
	k.Quantize(w, row)

	dec := make([]float32, len(row))
	k.Dequant(dec, w)
	fmt.Printf("%d bytes; first values %.2f\n", n, dec[:4])
	fmt.Printf("dot %.3f\n", k.Dot(x, w))
	// Output:
	// 68 bytes; first values [-3.50 -2.51 -1.49 -0.50]
	// dot 0.000
}
