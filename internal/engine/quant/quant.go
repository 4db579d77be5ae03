// Package quant holds the tensor element types of GGUF files (llama.cpp's
// ggml types) and, for each, a plain reference dequantiser, a fused dot
// product against float32 activations, an encoder, and for the quantised
// types the fast path llama.cpp takes: activations quantised once to an
// 8-bit type (ActType) and integer dot products (DotQ), in AVX2 assembly
// on amd64 CPUs that have it, in NEON assembly on arm64 for Q8_0, Q4_0, Q4_K
// and Q6_K (see [Accel]), and in pure Go elsewhere or with -tags purego.
//
// The block layouts are bit-compatible with llama.cpp's ggml-common.h: a
// row of n elements of type T occupies n/BlockSize(T) blocks of
// BlockBytes(T) bytes each, little-endian; each type's file describes its
// layout. Each supported type registers a [Kernel] from an init function
// in its own file; [Lookup] returns it or reports [ErrUnsupported].
//
// A matrix-vector product over a weight tensor is one Dot per row:
//
//	k, err := quant.Lookup(tensor.Type)
//	if err != nil { ... }
//	rb, _ := quant.RowBytes(tensor.Type, cols)
//	for r := range rows {
//		y[r] = k.Dot(x, data[r*rb:(r+1)*rb])
//	}
//
// or, faster and as llama.cpp computes it, the input quantised once to the
// kernel's ActType and one integer DotQ per row:
//
//	if k.DotQ != nil {
//		xq := make([]byte, k.ActRowBytes(cols)) // allocate once, reuse
//		k.QuantizeAct(xq, x)
//		for r := range rows {
//			y[r] = k.DotQ(xq, data[r*rb:(r+1)*rb])
//		}
//	}
//
// Dequant reproduces ggml's dequantisation bit for bit (tested against
// llama.cpp's output). Dot sums in float32 in its own order, factoring
// block scales out of the sums, so it agrees with the dequantised dot
// product to within float32 rounding, not bit for bit. Quantize follows
// llama.cpp's reference quantisers (quantize_row_*_ref, what llama-quantize
// uses without an importance matrix) and produces the same bytes.
//
// DotQ is exact in its integer block sums (the assembly and the pure-Go
// versions agree on them bit for bit) and scales them in float32, so it
// agrees with the float64 dot product of the quantised activations and
// Dequant(w) to within float32 rounding; against the unquantised float32
// activations it differs by the 8-bit rounding of the activations, as
// llama.cpp's results do.
//
// All functions are safe for concurrent use: kernels are pure functions of
// their arguments and allocate nothing.
package quant

import (
	"errors"
	"fmt"
)

// Type is a ggml tensor element type, numbered as in GGUF files.
type Type uint32

// The ggml type ids (ggml.h, enum ggml_type).
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q8_1 Type = 9
	Q2_K Type = 10
	Q3_K Type = 11
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	Q8_K Type = 15
	BF16 Type = 30
)

var typeNames = map[Type]string{
	F32: "F32", F16: "F16", Q4_0: "Q4_0", Q4_1: "Q4_1", Q5_0: "Q5_0",
	Q5_1: "Q5_1", Q8_0: "Q8_0", Q8_1: "Q8_1", Q2_K: "Q2_K", Q3_K: "Q3_K",
	Q4_K: "Q4_K", Q5_K: "Q5_K", Q6_K: "Q6_K", Q8_K: "Q8_K", BF16: "BF16",
}

// String returns the ggml name of the type ("Q4_K"), or "type(N)".
func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// ParseType returns the type named s (as printed by [Type.String]).
func ParseType(s string) (Type, error) {
	for t, n := range typeNames {
		if n == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("quant: unknown type %q", s)
}

// ErrUnsupported is returned for a tensor type that has no kernel.
var ErrUnsupported = errors.New("unsupported tensor type")

// Kernel is the set of functions for one element type.
type Kernel struct {
	// BlockSize is the number of elements in one block (1 for F32/F16/BF16).
	BlockSize int
	// BlockBytes is the size of one block in bytes.
	BlockBytes int
	// Dequant writes len(dst) elements decoded from src, the plain
	// reference implementation. len(dst) is a multiple of BlockSize and src
	// holds exactly len(dst)/BlockSize blocks.
	Dequant func(dst []float32, src []byte)
	// Dot returns the dot product of the len(x) float32 values x with the
	// row of weights encoded in w (len(x)/BlockSize blocks): the fast fused
	// kernel, which never materialises the dequantised row.
	Dot func(x []float32, w []byte) float32
	// Quantize encodes src (a multiple of BlockSize elements) into dst, as
	// llama.cpp's reference quantiser does; nil where not implemented. Used
	// to synthesise models and test fixtures.
	Quantize func(dst []byte, src []float32)

	// ActType is the type activations are quantised to for DotQ, ggml's
	// vec_dot_type: Q8_0 for Q4_0, Q5_0 and Q8_0 weights, Q8_1 for Q4_1
	// and Q5_1, Q8_K for the K-quants. It is F32 (and QuantizeAct and
	// DotQ are nil) for the float types, which keep the float path.
	ActType Type
	// QuantizeAct quantises the activations x (a multiple of BlockSize
	// elements) to ActType into dst, which holds ActRowBytes(len(x))
	// bytes, as ggml's CPU backend does before an integer dot product.
	QuantizeAct func(dst []byte, x []float32)
	// DotQ returns the dot product of a row of activations quantised by
	// QuantizeAct with the row of weights w: integer multiply-adds within
	// each block, scaled and summed in float32 (SIMD where the CPU has
	// it). Quantise the input once per matrix product and call DotQ for
	// every row.
	DotQ func(xq, w []byte) float32
	// DotQRows sets out[r] = DotQ(xq, row r) for the len(out) consecutive
	// weight rows in w (each BlockBytes times the number of blocks in
	// xq), with the same results as DotQ; one call for many rows saves
	// the per-call overhead on short rows. Nil exactly when DotQ is.
	DotQRows func(out []float32, xq, w []byte)

	// RowGroup, when above 1, is the number of rows a rearranged layout
	// interleaves (Repacker.Rows): DotQRows and MatMulQ then take whole
	// groups only, and DotQ, Dot and Dequant, which would see one row
	// alone, are not usable (Dot and Dequant are nil).
	RowGroup int
	// MatMulQ, where set, is the matrix product of a batch of inputs:
	// out[b·ldo + r] = DotQ(xq[b·ldx:], row r) for b < batch and every
	// row r of w, each weight block read once for several inputs (a tile
	// of inputs against a tile of rows). xq holds batch rows of ldx bytes
	// (ActRowBytes of the columns each). Nil where DotQRows row by row is
	// all there is.
	MatMulQ func(out []float32, ldo int, xq []byte, ldx, batch int, w []byte)
}

var kernels = map[Type]*Kernel{}

// register installs the kernel for t. It is called from init functions of
// this package only.
func register(t Type, k Kernel) {
	if _, dup := kernels[t]; dup {
		panic("quant: duplicate kernel for " + t.String())
	}
	switch k.ActType {
	case Q8_0:
		k.QuantizeAct = quantizeActQ8_0
	case Q8_1:
		k.QuantizeAct = quantizeActQ8_1
	case Q8_K:
		k.QuantizeAct = quantizeActQ8_K
	default:
		k.ActType, k.DotQ = F32, nil
	}
	if k.DotQ == nil {
		k.ActType, k.QuantizeAct, k.DotQRows = F32, nil, nil
	} else if k.DotQRows == nil {
		k.DotQRows = rowsLoop(k.DotQ, k.ActType, k.BlockBytes)
	}
	kernels[t] = &k
}

// rowsLoop makes a DotQRows that calls dotq once per row.
func rowsLoop(dotq func(xq, w []byte) float32, act Type, blockBytes int) func(out []float32, xq, w []byte) {
	_, abytes := actLayout(act)
	return func(out []float32, xq, w []byte) {
		rb := len(xq) / abytes * blockBytes
		for r := range out {
			out[r] = dotq(xq, w[r*rb:(r+1)*rb])
		}
	}
}

// Lookup returns the kernel of t, or an error wrapping [ErrUnsupported].
func Lookup(t Type) (*Kernel, error) {
	k, ok := kernels[t]
	if !ok {
		return nil, fmt.Errorf("quant: %v: %w", t, ErrUnsupported)
	}
	return k, nil
}

// RowBytes returns the size in bytes of a row of n elements of type t, or an
// error when t is unsupported or n is not a whole number of blocks.
func RowBytes(t Type, n int) (int, error) {
	k, err := Lookup(t)
	if err != nil {
		return 0, err
	}
	if n < 0 || n%k.BlockSize != 0 {
		return 0, fmt.Errorf("quant: %v row of %d elements is not a whole number of %d-element blocks", t, n, k.BlockSize)
	}
	return n / k.BlockSize * k.BlockBytes, nil
}
