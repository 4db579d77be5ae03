// Package gguf reads and writes GGUF files, the model container of
// llama.cpp: a header, ordered typed metadata, a table of tensor infos and
// the aligned tensor data.
//
// The reader treats every file as untrusted. Counts, string and array
// lengths, tensor dimensions and offsets are checked against explicit
// limits and against the size of the file before anything is allocated, all
// size arithmetic is overflow-checked, and every tensor's data must lie
// inside the file. Allocation is therefore bounded by a small multiple of
// the file size whatever the header claims, and as no two tensors may share
// bytes, so is the parameter count. What is well-formed but not
// supported (an unknown tensor type, nested arrays, GGUF v1) is reported
// with an error wrapping [ErrUnsupported].
//
// [Open] maps the file read-only (on Unix; elsewhere it reads it into
// memory) so that tensor data is paged in on demand and shared with the page
// cache; [Parse] works on bytes already in memory, such as an embedded
// model.
//
//	f, err := gguf.Open("model.gguf")
//	if err != nil { ... }
//	defer f.Close()
//	arch, _ := f.String("general.architecture")
//	emb, ok := f.Tensor("token_embd.weight") // emb.Dims[0] is the row length
//
// A [File] is immutable after parsing and safe for concurrent reads; Close
// must not be called while its tensor data is still in use. A [Writer]
// builds a file (used by tests and by model synthesis) and is not safe for
// concurrent use.
package gguf

import (
	"errors"
	"fmt"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the tensor data alignment when general.alignment is
// absent.
const DefaultAlignment = 32

// Limits applied to every file, beyond the file-size bound that applies to
// everything the header declares.
const (
	MaxTensors   = 1 << 20 // tensor infos
	MaxKV        = 1 << 20 // metadata key/value pairs
	MaxStringLen = 1 << 24 // bytes in one string (keys, values, names)
	MaxArrayLen  = 1 << 28 // elements in one metadata array
	MaxDims      = 4       // dimensions of one tensor (GGML_MAX_DIMS)
	MaxAlignment = 1 << 16 // general.alignment
)

// ErrUnsupported marks a well-formed file using a feature this reader does
// not handle; for an unknown tensor type the error also wraps
// [quant.ErrUnsupported].
var ErrUnsupported = errors.New("unsupported")

// ErrFormat marks a malformed or hostile file.
var ErrFormat = errors.New("malformed file")

// ValueType is the type tag of a metadata value.
type ValueType uint32

// The GGUF metadata value types.
const (
	Uint8   ValueType = 0
	Int8    ValueType = 1
	Uint16  ValueType = 2
	Int16   ValueType = 3
	Uint32  ValueType = 4
	Int32   ValueType = 5
	Float32 ValueType = 6
	Bool    ValueType = 7
	String  ValueType = 8
	Array   ValueType = 9
	Uint64  ValueType = 10
	Int64   ValueType = 11
	Float64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// String returns the GGUF name of the value type.
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(t))
}

// size returns the encoded size of a fixed-size scalar, 0 for string/array.
func (t ValueType) size() int {
	switch t {
	case Uint8, Int8, Bool:
		return 1
	case Uint16, Int16:
		return 2
	case Uint32, Int32, Float32:
		return 4
	case Uint64, Int64, Float64:
		return 8
	}
	return 0
}

// KV is one metadata entry. Value holds a Go value of the matching type:
// uint8, int8, uint16, int16, uint32, int32, float32, bool, string, uint64,
// int64 or float64; for an Array, a slice of one of those ([]string,
// []int32, ...) and ElemType says which.
type KV struct {
	Key      string
	Type     ValueType
	ElemType ValueType // element type when Type is Array
	Value    any
}

// TensorInfo describes one tensor and holds its data.
type TensorInfo struct {
	Name   string
	Dims   []uint64 // ne0 (the row length, fastest varying) first
	Type   quant.Type
	Offset uint64 // from the start of the data section
	Data   []byte // the encoded tensor, a slice of the file's bytes
}

// Elements returns the number of elements of the tensor.
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Rows returns the number of rows (elements / Dims[0]).
func (t *TensorInfo) Rows() int {
	if len(t.Dims) == 0 || t.Dims[0] == 0 {
		return 0
	}
	return int(t.Elements() / t.Dims[0])
}

// File is a parsed GGUF file.
type File struct {
	Version   uint32
	KV        []KV         // metadata in file order
	Tensors   []TensorInfo // tensor infos in file order
	Alignment int          // general.alignment, or DefaultAlignment
	DataStart int64        // offset of the data section in the file
	Size      int64        // file size in bytes

	data    []byte // the whole file
	kvIndex map[string]int
	tIndex  map[string]int
	closer  func() error
}

// Data returns the bytes of the whole file.
func (f *File) Data() []byte { return f.data }

// Close releases the mapping. Tensor data must not be used afterwards.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	c := f.closer
	f.closer = nil
	return c()
}

// Lookup returns the metadata entry named key.
func (f *File) Lookup(key string) (KV, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return KV{}, false
	}
	return f.KV[i], true
}

// Tensor returns the tensor named name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// String returns the string value of key.
func (f *File) String(key string) (string, bool) {
	kv, ok := f.Lookup(key)
	if !ok {
		return "", false
	}
	s, ok := kv.Value.(string)
	return s, ok
}

// Uint returns the value of key when it is an integer of any width that is
// not negative.
func (f *File) Uint(key string) (uint64, bool) {
	kv, ok := f.Lookup(key)
	if !ok {
		return 0, false
	}
	switch v := kv.Value.(type) {
	case uint8:
		return uint64(v), true
	case uint16:
		return uint64(v), true
	case uint32:
		return uint64(v), true
	case uint64:
		return v, true
	case int8:
		return uint64(v), v >= 0
	case int16:
		return uint64(v), v >= 0
	case int32:
		return uint64(v), v >= 0
	case int64:
		return uint64(v), v >= 0
	}
	return 0, false
}

// Float returns the value of key when it is a float32 or float64.
func (f *File) Float(key string) (float64, bool) {
	kv, ok := f.Lookup(key)
	if !ok {
		return 0, false
	}
	switch v := kv.Value.(type) {
	case float32:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// Bool returns the boolean value of key.
func (f *File) Bool(key string) (bool, bool) {
	kv, ok := f.Lookup(key)
	if !ok {
		return false, false
	}
	b, ok := kv.Value.(bool)
	return b, ok
}

// Strings returns the value of key when it is an array of strings.
func (f *File) Strings(key string) ([]string, bool) {
	kv, ok := f.Lookup(key)
	if !ok {
		return nil, false
	}
	s, ok := kv.Value.([]string)
	return s, ok
}

// Float32s returns the value of key when it is an array of float32.
func (f *File) Float32s(key string) ([]float32, bool) {
	kv, ok := f.Lookup(key)
	if !ok {
		return nil, false
	}
	s, ok := kv.Value.([]float32)
	return s, ok
}

// Int32s returns the value of key when it is an array of int32 (or of
// uint32 values that fit).
func (f *File) Int32s(key string) ([]int32, bool) {
	kv, ok := f.Lookup(key)
	if !ok {
		return nil, false
	}
	switch v := kv.Value.(type) {
	case []int32:
		return v, true
	case []uint32:
		out := make([]int32, len(v))
		for i, x := range v {
			if x > 1<<31-1 {
				return nil, false
			}
			out[i] = int32(x)
		}
		return out, true
	}
	return nil, false
}

// layout is the block geometry of a ggml type: a format fact, independent
// of whether a kernel exists for it.
type layout struct{ blockSize, blockBytes uint64 }

var layouts = map[quant.Type]layout{
	quant.F32: {1, 4}, quant.F16: {1, 2}, quant.BF16: {1, 2},
	quant.Q4_0: {32, 18}, quant.Q4_1: {32, 20}, quant.Q5_0: {32, 22},
	quant.Q5_1: {32, 24}, quant.Q8_0: {32, 34}, quant.Q8_1: {32, 36},
	quant.Q2_K: {256, 84}, quant.Q3_K: {256, 110}, quant.Q4_K: {256, 144},
	quant.Q5_K: {256, 176}, quant.Q6_K: {256, 210}, quant.Q8_K: {256, 292},
}

// TensorBytes returns the encoded size of a tensor of type t and the given
// dims, checking that the row length is a whole number of blocks and that
// nothing overflows.
func TensorBytes(t quant.Type, dims []uint64) (uint64, error) {
	l, ok := layouts[t]
	if !ok {
		return 0, fmt.Errorf("gguf: tensor type %v: %w (%w)", t, ErrUnsupported, quant.ErrUnsupported)
	}
	if len(dims) == 0 {
		return 0, fmt.Errorf("gguf: tensor with no dimensions: %w", ErrFormat)
	}
	if dims[0]%l.blockSize != 0 {
		return 0, fmt.Errorf("gguf: row of %d elements is not a whole number of %v blocks of %d: %w", dims[0], t, l.blockSize, ErrFormat)
	}
	n := dims[0] / l.blockSize * l.blockBytes
	for _, d := range dims[1:] {
		if d != 0 && n > (1<<62)/d {
			return 0, fmt.Errorf("gguf: tensor size overflows: %w", ErrFormat)
		}
		n *= d
	}
	return n, nil
}
