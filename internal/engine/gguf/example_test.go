package gguf_test

import (
	"bytes"
	"fmt"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// Write a tiny GGUF file and read it back.
func ExampleParse() {
	var w gguf.Writer
	w.Add("general.architecture", "llama")
	w.Add("llama.context_length", uint32(128))
	w.AddTensor("output_norm.weight", quant.F32, []uint64{2}, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		panic(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		panic(err)
	}
	arch, _ := f.String("general.architecture")
	n, _ := f.Uint("llama.context_length")
	t, _ := f.Tensor("output_norm.weight")
	fmt.Println(arch, n, t.Type, t.Dims, len(t.Data))
	// Output: llama 128 F32 [2] 8
}
