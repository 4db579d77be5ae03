package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// reader decodes little-endian values from a byte slice, recording the
// first error; every read checks the bytes that remain.
type reader struct {
	b   []byte
	off uint64
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("gguf: at byte %d: %s: %w", r.off, fmt.Sprintf(format, args...), ErrFormat)
	}
}

func (r *reader) remaining() uint64 { return uint64(len(r.b)) - r.off }

func (r *reader) next(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.remaining() {
		r.fail("need %d bytes, %d left", n, r.remaining())
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8() uint8 {
	if s := r.next(1); s != nil {
		return s[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if s := r.next(2); s != nil {
		return binary.LittleEndian.Uint16(s)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if s := r.next(4); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if s := r.next(8); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

func (r *reader) str() string {
	n := r.u64()
	if r.err != nil {
		return ""
	}
	if n > MaxStringLen {
		r.fail("string of %d bytes exceeds the limit of %d", n, MaxStringLen)
		return ""
	}
	return string(r.next(n))
}

// count reads an element count and checks it against limit and against the
// bytes left, given that each element takes at least minBytes.
func (r *reader) count(what string, limit, minBytes uint64) int {
	n := r.u64()
	if r.err != nil {
		return 0
	}
	if n > limit {
		r.fail("%s count %d exceeds the limit of %d", what, n, limit)
		return 0
	}
	if n > r.remaining()/minBytes {
		r.fail("%s count %d cannot fit in the %d bytes left", what, n, r.remaining())
		return 0
	}
	return int(n)
}

// Parse parses a GGUF file held in data. The returned File refers to data
// (tensor Data fields are sub-slices), which must not change afterwards.
func Parse(data []byte) (*File, error) {
	r := &reader{b: data}
	if string(r.next(4)) != Magic {
		return nil, fmt.Errorf("gguf: not a GGUF file (bad magic): %w", ErrFormat)
	}
	f := &File{Version: r.u32(), data: data, Size: int64(len(data)), Alignment: DefaultAlignment}
	switch f.Version {
	case 2, 3:
	case 1:
		return nil, fmt.Errorf("gguf: version 1: %w", ErrUnsupported)
	default:
		if r.err == nil {
			return nil, fmt.Errorf("gguf: version %d: %w", f.Version, ErrUnsupported)
		}
	}
	// A tensor info takes at least 8+4+8+4+8 bytes; a KV at least 8+4+1.
	nt := r.count("tensor", MaxTensors, 32)
	nkv := r.count("metadata", MaxKV, 13)
	if r.err != nil {
		return nil, r.err
	}
	f.KV = make([]KV, 0, nkv)
	f.kvIndex = make(map[string]int, nkv)
	for i := 0; i < nkv && r.err == nil; i++ {
		kv := KV{Key: r.str(), Type: ValueType(r.u32())}
		if r.err != nil {
			break
		}
		if _, dup := f.kvIndex[kv.Key]; dup {
			return nil, fmt.Errorf("gguf: duplicate metadata key %q: %w", kv.Key, ErrFormat)
		}
		if kv.Type == Array {
			kv.ElemType = ValueType(r.u32())
			if r.err != nil {
				break
			}
			v, err := r.array(kv.ElemType)
			if err != nil {
				return nil, fmt.Errorf("gguf: key %q: %w", kv.Key, err)
			}
			kv.Value = v
		} else {
			v, err := r.scalar(kv.Type)
			if err != nil {
				return nil, fmt.Errorf("gguf: key %q: %w", kv.Key, err)
			}
			kv.Value = v
		}
		f.kvIndex[kv.Key] = len(f.KV)
		f.KV = append(f.KV, kv)
	}
	if r.err != nil {
		return nil, r.err
	}
	if kv, ok := f.Lookup("general.alignment"); ok {
		a, ok := f.Uint("general.alignment")
		if !ok || a == 0 || a > MaxAlignment || a&(a-1) != 0 {
			return nil, fmt.Errorf("gguf: general.alignment %v is not a power of two up to %d: %w", kv.Value, MaxAlignment, ErrFormat)
		}
		f.Alignment = int(a)
	}

	f.Tensors = make([]TensorInfo, 0, nt)
	f.tIndex = make(map[string]int, nt)
	for i := 0; i < nt && r.err == nil; i++ {
		t := TensorInfo{Name: r.str()}
		nd := r.u32()
		if r.err != nil {
			break
		}
		if nd == 0 || nd > MaxDims {
			return nil, fmt.Errorf("gguf: tensor %q has %d dimensions (1 to %d allowed): %w", t.Name, nd, MaxDims, ErrFormat)
		}
		t.Dims = make([]uint64, nd)
		for j := range t.Dims {
			t.Dims[j] = r.u64()
			if r.err == nil && (t.Dims[j] == 0 || t.Dims[j] > uint64(len(data))*8) {
				// No tensor can have more elements along one axis than the
				// file has bits (the densest type uses < 8 bits per value).
				return nil, fmt.Errorf("gguf: tensor %q dimension %d is %d: %w", t.Name, j, t.Dims[j], ErrFormat)
			}
		}
		t.Type = quant.Type(r.u32())
		t.Offset = r.u64()
		if r.err != nil {
			break
		}
		if _, dup := f.tIndex[t.Name]; dup {
			return nil, fmt.Errorf("gguf: duplicate tensor %q: %w", t.Name, ErrFormat)
		}
		f.tIndex[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	if r.err != nil {
		return nil, r.err
	}
	start := alignUp(r.off, uint64(f.Alignment))
	if nt > 0 && start > uint64(len(data)) {
		return nil, fmt.Errorf("gguf: data section starts at %d beyond the end of the %d-byte file: %w", start, len(data), ErrFormat)
	}
	f.DataStart = int64(start)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		size, err := TensorBytes(t.Type, t.Dims)
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		if t.Offset%uint64(f.Alignment) != 0 {
			return nil, fmt.Errorf("gguf: tensor %q offset %d is not aligned to %d: %w", t.Name, t.Offset, f.Alignment, ErrFormat)
		}
		avail := uint64(len(data)) - start
		if t.Offset > avail || size > avail-t.Offset {
			return nil, fmt.Errorf("gguf: tensor %q (%d bytes at offset %d) lies outside the file: %w", t.Name, size, t.Offset, ErrFormat)
		}
		t.Data = data[start+t.Offset : start+t.Offset+size : start+t.Offset+size]
	}
	if err := checkOverlap(f.Tensors); err != nil {
		return nil, err
	}
	return f, nil
}

// checkOverlap refuses tensors that share bytes. A writer lays each tensor
// out on its own, so shared bytes only come from a crafted file: one that
// passes a few kilobytes off as thousands of layers, to make whoever sizes
// buffers from the tensors' shapes allocate without bound.
func checkOverlap(ts []TensorInfo) error {
	if len(ts) < 2 {
		return nil
	}
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return ts[order[a]].Offset < ts[order[b]].Offset })
	for k := 1; k < len(order); k++ {
		prev, t := &ts[order[k-1]], &ts[order[k]]
		if t.Offset < prev.Offset+uint64(len(prev.Data)) {
			return fmt.Errorf("gguf: tensors %q and %q share bytes (%d bytes at offset %d, %d at %d): %w",
				prev.Name, t.Name, len(prev.Data), prev.Offset, len(t.Data), t.Offset, ErrFormat)
		}
	}
	return nil
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

func (r *reader) scalar(t ValueType) (any, error) {
	var v any
	switch t {
	case Uint8:
		v = r.u8()
	case Int8:
		v = int8(r.u8())
	case Uint16:
		v = r.u16()
	case Int16:
		v = int16(r.u16())
	case Uint32:
		v = r.u32()
	case Int32:
		v = int32(r.u32())
	case Float32:
		v = math.Float32frombits(r.u32())
	case Bool:
		b := r.u8()
		if b > 1 && r.err == nil {
			r.fail("bool value %d", b)
		}
		v = b == 1
	case String:
		v = r.str()
	case Uint64:
		v = r.u64()
	case Int64:
		v = int64(r.u64())
	case Float64:
		v = math.Float64frombits(r.u64())
	default:
		return nil, fmt.Errorf("value type %v: %w", t, ErrFormat)
	}
	return v, r.err
}

func (r *reader) array(t ValueType) (any, error) {
	if t == Array {
		return nil, fmt.Errorf("nested arrays: %w", ErrUnsupported)
	}
	minBytes := uint64(t.size())
	if t == String {
		minBytes = 8
	}
	if minBytes == 0 {
		return nil, fmt.Errorf("array of value type %v: %w", t, ErrFormat)
	}
	n := r.count("array element", MaxArrayLen, minBytes)
	if r.err != nil {
		return nil, r.err
	}
	switch t {
	case Uint8:
		return fill(r, n, r.u8), r.err
	case Int8:
		return fill(r, n, func() int8 { return int8(r.u8()) }), r.err
	case Uint16:
		return fill(r, n, r.u16), r.err
	case Int16:
		return fill(r, n, func() int16 { return int16(r.u16()) }), r.err
	case Uint32:
		return fill(r, n, r.u32), r.err
	case Int32:
		return fill(r, n, func() int32 { return int32(r.u32()) }), r.err
	case Float32:
		return fill(r, n, func() float32 { return math.Float32frombits(r.u32()) }), r.err
	case Bool:
		return fill(r, n, func() bool { return r.u8() != 0 }), r.err
	case String:
		return fill(r, n, r.str), r.err
	case Uint64:
		return fill(r, n, r.u64), r.err
	case Int64:
		return fill(r, n, func() int64 { return int64(r.u64()) }), r.err
	case Float64:
		return fill(r, n, func() float64 { return math.Float64frombits(r.u64()) }), r.err
	}
	return nil, fmt.Errorf("array of value type %v: %w", t, ErrFormat)
}

func fill[T any](r *reader, n int, get func() T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = get()
		if r.err != nil {
			return nil
		}
	}
	return s
}
