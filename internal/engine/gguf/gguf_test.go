package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// tiny returns a small valid file with every metadata type and two tensors.
func tiny(t testing.TB) []byte {
	t.Helper()
	var w Writer
	w.Add("general.architecture", "llama")
	w.Add("u8", uint8(7))
	w.Add("i8", int8(-7))
	w.Add("u16", uint16(700))
	w.Add("i16", int16(-700))
	w.Add("u32", uint32(70000))
	w.Add("i32", int32(-70000))
	w.Add("f32", float32(1.5))
	w.Add("flag", true)
	w.Add("u64", uint64(1<<40))
	w.Add("i64", int64(-1<<40))
	w.Add("f64", 2.25)
	w.Add("tokens", []string{"a", "bb", ""})
	w.Add("scores", []float32{0.5, -1})
	w.Add("types", []int32{1, 2, 3})
	w.Add("utypes", []uint32{4, 5})
	w.AddTensor("a", quant.F32, []uint64{2, 3}, f32bytes(1, 2, 3, 4, 5, 6))
	w.AddTensor("b", quant.F16, []uint64{3}, []byte{0, 0x3c, 0, 0x40, 0, 0})
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func f32bytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := os.WriteFile(path, tiny(t), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := f.Version, uint32(3); got != want {
		t.Errorf("version = %d, want %d", got, want)
	}
	if s, _ := f.String("general.architecture"); s != "llama" {
		t.Errorf("architecture = %q, want llama", s)
	}
	uints := []struct {
		key  string
		want uint64
		ok   bool
	}{
		{"u8", 7, true}, {"i8", 0, false}, {"u16", 700, true}, {"i16", 0, false},
		{"u32", 70000, true}, {"i32", 0, false}, {"u64", 1 << 40, true},
		{"i64", 0, false}, {"f32", 0, false}, {"missing", 0, false},
	}
	for _, c := range uints {
		t.Run("Uint/"+c.key, func(t *testing.T) {
			got, ok := f.Uint(c.key)
			if ok != c.ok || (ok && got != c.want) {
				t.Errorf("Uint(%q) = %d, %v; want %d, %v", c.key, got, ok, c.want, c.ok)
			}
		})
	}
	if v, ok := f.Float("f32"); !ok || v != 1.5 {
		t.Errorf("Float(f32) = %v, %v; want 1.5, true", v, ok)
	}
	if v, ok := f.Float("f64"); !ok || v != 2.25 {
		t.Errorf("Float(f64) = %v, %v; want 2.25, true", v, ok)
	}
	if v, ok := f.Bool("flag"); !ok || !v {
		t.Errorf("Bool(flag) = %v, %v; want true, true", v, ok)
	}
	if got, _ := f.Strings("tokens"); !reflect.DeepEqual(got, []string{"a", "bb", ""}) {
		t.Errorf("Strings(tokens) = %q", got)
	}
	if got, _ := f.Float32s("scores"); !reflect.DeepEqual(got, []float32{0.5, -1}) {
		t.Errorf("Float32s(scores) = %v", got)
	}
	if got, _ := f.Int32s("types"); !reflect.DeepEqual(got, []int32{1, 2, 3}) {
		t.Errorf("Int32s(types) = %v", got)
	}
	if got, _ := f.Int32s("utypes"); !reflect.DeepEqual(got, []int32{4, 5}) {
		t.Errorf("Int32s(utypes) = %v", got)
	}
	if got, want := f.KV[0].Key, "general.architecture"; got != want {
		t.Errorf("first key = %q, want %q (order kept)", got, want)
	}
	a, ok := f.Tensor("a")
	if !ok {
		t.Fatal("tensor a missing")
	}
	if !reflect.DeepEqual(a.Dims, []uint64{2, 3}) || a.Type != quant.F32 || a.Rows() != 3 {
		t.Errorf("tensor a = dims %v type %v rows %d", a.Dims, a.Type, a.Rows())
	}
	if !bytes.Equal(a.Data, f32bytes(1, 2, 3, 4, 5, 6)) {
		t.Errorf("tensor a data = %v", a.Data)
	}
	b, _ := f.Tensor("b")
	if got, want := b.Offset, uint64(32); got != want {
		t.Errorf("tensor b offset = %d, want %d (aligned)", got, want)
	}
	if f.DataStart%32 != 0 {
		t.Errorf("data start %d not aligned", f.DataStart)
	}
}

func TestAlignment(t *testing.T) {
	w := Writer{Alignment: 64}
	w.AddTensor("a", quant.F32, []uint64{1}, f32bytes(1))
	w.AddTensor("b", quant.F32, []uint64{1}, f32bytes(2))
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Alignment != 64 {
		t.Errorf("alignment = %d, want 64", f.Alignment)
	}
	if b, _ := f.Tensor("b"); b.Offset != 64 || !bytes.Equal(b.Data, f32bytes(2)) {
		t.Errorf("tensor b at %d = %v", b.Offset, b.Data)
	}
}

func TestStories(t *testing.T) {
	f, err := Open(fixture.Path(t, "models/stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, _ := f.Uint("llama.block_count"); n != 5 {
		t.Errorf("block_count = %d, want 5", n)
	}
	toks, _ := f.Strings("tokenizer.ggml.tokens")
	if len(toks) != 512 {
		t.Errorf("%d tokens, want 512", len(toks))
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || !reflect.DeepEqual(emb.Dims, []uint64{64, 512}) || emb.Type != quant.F32 {
		t.Fatalf("token_embd = %+v", emb)
	}
	if got, want := len(f.Tensors), 48; got != want {
		t.Errorf("%d tensors, want %d", got, want)
	}
}

// header builds the start of a file with the given counts.
func header(version uint32, tensors, kvs uint64) []byte {
	b := []byte(Magic)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint64(b, tensors)
	return binary.LittleEndian.AppendUint64(b, kvs)
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

func TestHostile(t *testing.T) {
	good := tiny(t)
	tensorInfo := func(dims []uint64, typ uint32, off uint64) []byte {
		b := appendStr(header(3, 1, 0), "t")
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dims)))
		for _, d := range dims {
			b = binary.LittleEndian.AppendUint64(b, d)
		}
		b = binary.LittleEndian.AppendUint32(b, typ)
		b = binary.LittleEndian.AppendUint64(b, off)
		return append(b, make([]byte, 64)...)
	}
	arrayKV := func(elem uint32, n uint64) []byte {
		b := appendStr(header(3, 0, 1), "k")
		b = binary.LittleEndian.AppendUint32(b, uint32(Array))
		b = binary.LittleEndian.AppendUint32(b, elem)
		return binary.LittleEndian.AppendUint64(b, n)
	}
	// Two tensors of 16 bytes; the second starts at off.
	twoTensors := func(off uint64) []byte {
		b := header(3, 2, 0)
		for i, o := range []uint64{0, off} {
			b = appendStr(b, fmt.Sprintf("t%d", i))
			b = binary.LittleEndian.AppendUint32(b, 1)
			b = binary.LittleEndian.AppendUint64(b, 4)
			b = binary.LittleEndian.AppendUint32(b, uint32(quant.F32))
			b = binary.LittleEndian.AppendUint64(b, o)
		}
		return append(b, make([]byte, 128)...)
	}
	if _, err := Parse(twoTensors(32)); err != nil {
		t.Fatalf("two separate tensors: %v", err)
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrFormat},
		{"tensors sharing bytes", twoTensors(0), ErrFormat},
		{"bad magic", []byte("GGML\x03\x00\x00\x00"), ErrFormat},
		{"version 1", header(1, 0, 0), ErrUnsupported},
		{"version 9", header(9, 0, 0), ErrUnsupported},
		{"truncated", good[:len(good)-3], ErrFormat},
		{"huge tensor count", header(3, 1<<40, 0), ErrFormat},
		{"tensor count beyond file", header(3, 1000, 0), ErrFormat},
		{"huge kv count", header(3, 0, 1<<60), ErrFormat},
		{"huge string", append(header(3, 0, 1), binary.LittleEndian.AppendUint64(nil, 1<<62)...), ErrFormat},
		{"huge array", arrayKV(uint32(Uint64), 1<<27), ErrFormat},
		{"huge string array", arrayKV(uint32(String), 1<<27), ErrFormat},
		{"nested array", arrayKV(uint32(Array), 1), ErrUnsupported},
		{"bad value type", append(appendStr(header(3, 0, 1), "k"), 99, 0, 0, 0), ErrFormat},
		{"zero dims", tensorInfo(nil, 0, 0), ErrFormat},
		{"five dims", tensorInfo([]uint64{1, 1, 1, 1, 1}, 0, 0), ErrFormat},
		{"zero dim", tensorInfo([]uint64{4, 0}, 0, 0), ErrFormat},
		{"huge dim", tensorInfo([]uint64{1 << 62}, 0, 0), ErrFormat},
		{"overflowing size", tensorInfo([]uint64{1024, 1024, 1024, 1024}, 0, 0), ErrFormat},
		{"unknown type", tensorInfo([]uint64{4}, 77, 0), quant.ErrUnsupported},
		{"partial block", tensorInfo([]uint64{31}, uint32(quant.Q8_0), 0), ErrFormat},
		{"data outside file", tensorInfo([]uint64{64}, 0, 0), ErrFormat},
		{"offset outside file", tensorInfo([]uint64{1}, 0, 1<<40), ErrFormat},
		{"unaligned offset", tensorInfo([]uint64{1}, 0, 4), ErrFormat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(c.data)
			if !errors.Is(err, c.want) {
				t.Fatalf("Parse = %v, %v; want error wrapping %v", f, err, c.want)
			}
		})
	}
}

func TestBadAlignment(t *testing.T) {
	for _, a := range []uint32{0, 3, 1 << 20} {
		var w Writer
		w.Add("general.alignment", a)
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(buf.Bytes()); !errors.Is(err, ErrFormat) {
			t.Errorf("alignment %d: err = %v, want ErrFormat", a, err)
		}
	}
}

func TestWriterRejects(t *testing.T) {
	var w Writer
	w.Add("bad", struct{}{})
	if _, err := w.WriteTo(&bytes.Buffer{}); err == nil {
		t.Error("WriteTo accepted an unencodable value")
	}
	var w2 Writer
	w2.AddTensor("t", quant.F32, []uint64{4}, []byte{1})
	if _, err := w2.WriteTo(&bytes.Buffer{}); err == nil {
		t.Error("WriteTo accepted data of the wrong size")
	}
}
