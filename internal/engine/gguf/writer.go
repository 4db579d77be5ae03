package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// Writer builds a GGUF v3 file: metadata in the order added, then tensors
// in the order added, each aligned. The zero value is ready to use.
//
//	var w gguf.Writer
//	w.Add("general.architecture", "llama")
//	w.AddTensor("output_norm.weight", quant.F32, []uint64{64}, data)
//	_, err := w.WriteTo(out)
type Writer struct {
	// Alignment of the tensor data; 0 means DefaultAlignment. A value
	// other than the default is written as general.alignment.
	Alignment int

	kvs     []KV
	tensors []pendingTensor
	err     error
}

type pendingTensor struct {
	info TensorInfo
	size uint64
	data func() ([]byte, error)
}

// Add appends a metadata entry. v is one of uint8, int8, uint16, int16,
// uint32, int32, float32, bool, string, uint64, int64, float64, int (written
// as int64) or a slice of one of those (not int). An unsupported type is
// reported by WriteTo.
func (w *Writer) Add(key string, v any) {
	kv := KV{Key: key, Value: v}
	switch x := v.(type) {
	case int:
		kv.Type, kv.Value = Int64, int64(x)
	case []uint8:
		kv.Type, kv.ElemType = Array, Uint8
	case []int8:
		kv.Type, kv.ElemType = Array, Int8
	case []uint16:
		kv.Type, kv.ElemType = Array, Uint16
	case []int16:
		kv.Type, kv.ElemType = Array, Int16
	case []uint32:
		kv.Type, kv.ElemType = Array, Uint32
	case []int32:
		kv.Type, kv.ElemType = Array, Int32
	case []float32:
		kv.Type, kv.ElemType = Array, Float32
	case []bool:
		kv.Type, kv.ElemType = Array, Bool
	case []string:
		kv.Type, kv.ElemType = Array, String
	case []uint64:
		kv.Type, kv.ElemType = Array, Uint64
	case []int64:
		kv.Type, kv.ElemType = Array, Int64
	case []float64:
		kv.Type, kv.ElemType = Array, Float64
	default:
		t, ok := scalarType(v)
		if !ok && w.err == nil {
			w.err = fmt.Errorf("gguf: key %q: cannot encode a %T", key, v)
		}
		kv.Type = t
	}
	w.kvs = append(w.kvs, kv)
}

func scalarType(v any) (ValueType, bool) {
	switch v.(type) {
	case uint8:
		return Uint8, true
	case int8:
		return Int8, true
	case uint16:
		return Uint16, true
	case int16:
		return Int16, true
	case uint32:
		return Uint32, true
	case int32:
		return Int32, true
	case float32:
		return Float32, true
	case bool:
		return Bool, true
	case string:
		return String, true
	case uint64:
		return Uint64, true
	case int64:
		return Int64, true
	case float64:
		return Float64, true
	}
	return 0, false
}

// AddTensor appends a tensor with its encoded data, which must be exactly
// TensorBytes(typ, dims) long.
func (w *Writer) AddTensor(name string, typ quant.Type, dims []uint64, data []byte) {
	w.AddTensorFunc(name, typ, dims, func() ([]byte, error) { return data, nil })
}

// AddTensorFunc appends a tensor whose data is produced by data when the
// file is written, so that a large model need not be held in memory whole.
func (w *Writer) AddTensorFunc(name string, typ quant.Type, dims []uint64, data func() ([]byte, error)) {
	size, err := TensorBytes(typ, dims)
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	w.tensors = append(w.tensors, pendingTensor{
		info: TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: typ},
		size: size, data: data,
	})
}

// WriteTo writes the file to out.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	align := uint64(w.Alignment)
	if align == 0 {
		align = DefaultAlignment
	}
	kvs := w.kvs
	if align != DefaultAlignment {
		kvs = append([]KV{{Key: "general.alignment", Type: Uint32, Value: uint32(align)}}, kvs...)
	}
	cw := &countWriter{w: bufio.NewWriterSize(out, 1<<20)}
	e := &encoder{w: cw}
	e.bytes([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Type))
		if kv.Type == Array {
			e.u32(uint32(kv.ElemType))
			e.array(kv.Value)
		} else {
			e.scalar(kv.Value)
		}
	}
	var off uint64
	for i := range w.tensors {
		t := &w.tensors[i]
		off = alignUp(off, align)
		t.info.Offset = off
		e.str(t.info.Name)
		e.u32(uint32(len(t.info.Dims)))
		for _, d := range t.info.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.info.Type))
		e.u64(off)
		off += t.size
	}
	e.pad(align)
	start := cw.n
	for _, t := range w.tensors {
		if e.err != nil {
			break
		}
		e.pad(align)
		if uint64(cw.n-start) != t.info.Offset && e.err == nil {
			e.err = fmt.Errorf("gguf: internal error: tensor %q at %d, want %d", t.info.Name, cw.n-start, t.info.Offset)
		}
		data, err := t.data()
		if err != nil {
			return cw.n, fmt.Errorf("gguf: tensor %q: %w", t.info.Name, err)
		}
		if uint64(len(data)) != t.size {
			return cw.n, fmt.Errorf("gguf: tensor %q has %d bytes of data, want %d", t.info.Name, len(data), t.size)
		}
		e.bytes(data)
	}
	if e.err == nil {
		e.err = cw.w.Flush()
	}
	return cw.n, e.err
}

type countWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type encoder struct {
	w   *countWriter
	buf [8]byte
	err error
}

func (e *encoder) bytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) u8(v uint8) { e.bytes([]byte{v}) }
func (e *encoder) u16(v uint16) {
	binary.LittleEndian.PutUint16(e.buf[:], v)
	e.bytes(e.buf[:2])
}
func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], v)
	e.bytes(e.buf[:4])
}
func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], v)
	e.bytes(e.buf[:8])
}
func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.bytes([]byte(s))
}

func (e *encoder) pad(align uint64) {
	n := alignUp(uint64(e.w.n), align) - uint64(e.w.n)
	e.bytes(make([]byte, n))
}

func (e *encoder) scalar(v any) {
	switch x := v.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		if x {
			e.u8(1)
		} else {
			e.u8(0)
		}
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	}
}

func (e *encoder) array(v any) {
	switch x := v.(type) {
	case []uint8:
		writeArray(e, x)
	case []int8:
		writeArray(e, x)
	case []uint16:
		writeArray(e, x)
	case []int16:
		writeArray(e, x)
	case []uint32:
		writeArray(e, x)
	case []int32:
		writeArray(e, x)
	case []float32:
		writeArray(e, x)
	case []bool:
		writeArray(e, x)
	case []string:
		writeArray(e, x)
	case []uint64:
		writeArray(e, x)
	case []int64:
		writeArray(e, x)
	case []float64:
		writeArray(e, x)
	}
}

func writeArray[T any](e *encoder, s []T) {
	e.u64(uint64(len(s)))
	for _, v := range s {
		e.scalar(v)
	}
}
