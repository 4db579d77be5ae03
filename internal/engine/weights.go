package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// matrix is a 2-D weight of rows × cols stored row by row in its GGUF
// encoding; y = W x takes one dot product per row (an integer one against
// the quantised input for quantised types), never dequantising the whole
// matrix.
type matrix struct {
	name     string
	rows     int // ne1: output size
	cols     int // ne0: input size (row length)
	typ      quant.Type
	rowBytes int
	data     []byte // (rows, rowBytes)
	kern     *quant.Kernel
	// f32 views data as float32 (rows, cols) when the type is F32, the
	// machine little-endian and the data 4-byte aligned: the dot product
	// then reads the weights in place with no decoding at all.
	f32 []float32
	// repacked names the kernel whose layout data was rearranged into at
	// load (quant.Repacker.Name; kern is then that kernel and data memory
	// of its own), "" when data is the file's (repack.go).
	repacked string
}

// nativeLittleEndian reports whether float32 values can be read from the
// file's little-endian bytes in place.
var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// viewF32 returns data as float32 values when that is safe, else nil.
func viewF32(data []byte) []float32 {
	if !nativeLittleEndian || len(data) < 4 || uintptr(unsafe.Pointer(&data[0]))%4 != 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&data[0])), len(data)/4)
}

// group is the number of rows data interleaves (the kernel's RowGroup):
// a matrix product takes whole groups.
func (m *matrix) group() int { return max(m.kern.RowGroup, 1) }

// row returns the encoded row r.
func (m *matrix) row(r int) []byte {
	return m.data[r*m.rowBytes : (r+1)*m.rowBytes]
}

// layer holds the weights of one transformer block.
type layer struct {
	attnNorm []float32 // (dim)
	wq       matrix    // (q_dim, dim)
	wk       matrix    // (kv_dim, dim)
	wv       matrix    // (kv_dim, dim)
	bq       []float32 // (q_dim) or nil: qwen2 bias
	bk       []float32 // (kv_dim) or nil
	bv       []float32 // (kv_dim) or nil
	wo       matrix    // (dim, q_dim)
	ffnNorm  []float32 // (dim)
	wGate    matrix    // (ffn, dim)
	wUp      matrix    // (ffn, dim)
	wDown    matrix    // (dim, ffn)
}

// weights holds every tensor the forward pass reads.
type weights struct {
	tokenEmbd  matrix    // (vocab, dim)
	layers     []layer   // (layers)
	outputNorm []float32 // (dim)
	output     matrix    // (vocab, dim): output.weight, or token_embd when tied
}

func loadMatrix(f *gguf.File, name string, rows, cols int) (matrix, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return matrix{}, fmt.Errorf("engine: tensor %s missing", name)
	}
	if len(t.Dims) != 2 || t.Dims[0] != uint64(cols) || t.Dims[1] != uint64(rows) {
		return matrix{}, fmt.Errorf("engine: tensor %s has dims %v, want [%d %d]", name, t.Dims, cols, rows)
	}
	k, err := quant.Lookup(t.Type)
	if err != nil {
		return matrix{}, fmt.Errorf("engine: tensor %s: %w", name, err)
	}
	rb, err := quant.RowBytes(t.Type, cols)
	if err != nil {
		return matrix{}, fmt.Errorf("engine: tensor %s: %w", name, err)
	}
	if len(t.Data) != rb*rows {
		return matrix{}, fmt.Errorf("engine: tensor %s has %d bytes, want %d", name, len(t.Data), rb*rows)
	}
	m := matrix{name: name, rows: rows, cols: cols, typ: t.Type, rowBytes: rb, data: t.Data, kern: k}
	if t.Type == quant.F32 {
		m.f32 = viewF32(t.Data)
	}
	return m, nil
}

// loadVector reads a 1-D tensor of n elements of any supported type as
// float32 (norms and biases are small, so they are decoded once).
func loadVector(f *gguf.File, name string, n int, required bool) ([]float32, error) {
	t, ok := f.Tensor(name)
	if !ok {
		if required {
			return nil, fmt.Errorf("engine: tensor %s missing", name)
		}
		return nil, nil
	}
	if len(t.Dims) != 1 || t.Dims[0] != uint64(n) {
		return nil, fmt.Errorf("engine: tensor %s has dims %v, want [%d]", name, t.Dims, n)
	}
	if t.Type == quant.F32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
		return out, nil
	}
	k, err := quant.Lookup(t.Type)
	if err != nil {
		return nil, fmt.Errorf("engine: tensor %s: %w", name, err)
	}
	if rb, err := quant.RowBytes(t.Type, n); err != nil || rb != len(t.Data) {
		return nil, fmt.Errorf("engine: tensor %s: bad size", name)
	}
	out := make([]float32, n)
	k.Dequant(out, t.Data)
	return out, nil
}

func loadWeights(f *gguf.File, c Config) (*weights, error) {
	w := &weights{layers: make([]layer, c.Layers)}
	var err error
	if w.tokenEmbd, err = loadMatrix(f, "token_embd.weight", c.Vocab, c.Dim); err != nil {
		return nil, err
	}
	if w.outputNorm, err = loadVector(f, "output_norm.weight", c.Dim, true); err != nil {
		return nil, err
	}
	if _, ok := f.Tensor("output.weight"); ok {
		if w.output, err = loadMatrix(f, "output.weight", c.Vocab, c.Dim); err != nil {
			return nil, err
		}
	} else {
		w.output = w.tokenEmbd // tied embeddings
	}
	for i := range w.layers {
		l := &w.layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		steps := []struct {
			dst        *matrix
			name       string
			rows, cols int
		}{
			{&l.wq, "attn_q", c.QDim(), c.Dim},
			{&l.wk, "attn_k", c.KVDim(), c.Dim},
			{&l.wv, "attn_v", c.KVDim(), c.Dim},
			{&l.wo, "attn_output", c.Dim, c.QDim()},
			{&l.wGate, "ffn_gate", c.FFN, c.Dim},
			{&l.wUp, "ffn_up", c.FFN, c.Dim},
			{&l.wDown, "ffn_down", c.Dim, c.FFN},
		}
		for _, s := range steps {
			if *s.dst, err = loadMatrix(f, p+s.name+".weight", s.rows, s.cols); err != nil {
				return nil, err
			}
		}
		if l.attnNorm, err = loadVector(f, p+"attn_norm.weight", c.Dim, true); err != nil {
			return nil, err
		}
		if l.ffnNorm, err = loadVector(f, p+"ffn_norm.weight", c.Dim, true); err != nil {
			return nil, err
		}
		if l.bq, err = loadVector(f, p+"attn_q.bias", c.QDim(), false); err != nil {
			return nil, err
		}
		if l.bk, err = loadVector(f, p+"attn_k.bias", c.KVDim(), false); err != nil {
			return nil, err
		}
		if l.bv, err = loadVector(f, p+"attn_v.bias", c.KVDim(), false); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// maxActBytes returns the size of the largest input row of a matrix
// product quantised to its weights' activation type (0 when no matrix has
// an integer path).
func (w *weights) maxActBytes() int {
	n := w.output.kern.ActRowBytes(w.output.cols)
	for i := range w.layers {
		ly := &w.layers[i]
		for _, m := range []*matrix{&ly.wq, &ly.wk, &ly.wv, &ly.wo, &ly.wGate, &ly.wUp, &ly.wDown} {
			n = max(n, m.kern.ActRowBytes(m.cols))
		}
	}
	return n
}

// decodedBytes returns the size of the vectors decoded to float32 (norms,
// biases).
func (w *weights) decodedBytes() uint64 {
	n := len(w.outputNorm)
	for i := range w.layers {
		ly := &w.layers[i]
		n += len(ly.attnNorm) + len(ly.ffnNorm) + len(ly.bq) + len(ly.bk) + len(ly.bv)
	}
	return 4 * uint64(n)
}
