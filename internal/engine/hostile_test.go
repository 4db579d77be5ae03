package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
)

// hostileSpec is the shape a hostile file claims. Its tensors agree with
// the claim (so nothing but memory gives it away) unless alias is set:
// then every tensor after blk.0.attn_q shares the bytes of the first
// tensor of its size, which the writer lays out as a 4-byte placeholder
// and the test then points back at the shared data.
type hostileSpec struct {
	dim, heads, keyLen, ffn, layers, ctxLen int
	alias                                   bool
}

// hostileGGUF writes the file with the project's own writer (Q4_0 weights
// of zeros, F32 norms, the synthesised byte vocabulary).
func hostileGGUF(t testing.TB, h hostileSpec) []byte {
	t.Helper()
	var g gguf.Writer
	g.Add("general.architecture", "llama")
	g.Add("llama.context_length", uint32(h.ctxLen))
	g.Add("llama.embedding_length", uint32(h.dim))
	g.Add("llama.block_count", uint32(h.layers))
	g.Add("llama.feed_forward_length", uint32(h.ffn))
	g.Add("llama.attention.head_count", uint32(h.heads))
	g.Add("llama.attention.key_length", uint32(h.keyLen))
	g.Add("llama.attention.head_count_kv", uint32(h.heads))
	tokens, scores, types := synth.Vocab(synth.MinVocab)
	g.Add("tokenizer.ggml.model", "llama")
	g.Add("tokenizer.ggml.tokens", tokens)
	g.Add("tokenizer.ggml.scores", scores)
	g.Add("tokenizer.ggml.token_type", types)
	g.Add("tokenizer.ggml.bos_token_id", uint32(1))
	g.Add("tokenizer.ggml.eos_token_id", uint32(2))
	type patch struct {
		name, of string
		dims     []uint64
		typ      quant.Type
	}
	var patches []patch
	first := map[string]string{} // size key -> the tensor holding the data
	add := func(name string, typ quant.Type, dims ...uint64) {
		size, err := gguf.TensorBytes(typ, dims)
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprint(typ, size)
		if of, ok := first[key]; ok && h.alias {
			ones := make([]uint64, len(dims))
			for i := range ones {
				ones[i] = 1
			}
			g.AddTensor(name, quant.F32, ones, make([]byte, 4))
			patches = append(patches, patch{name, of, dims, typ})
			return
		}
		first[key] = name
		g.AddTensor(name, typ, dims, make([]byte, size))
	}
	d, q, f := uint64(h.dim), uint64(h.heads*h.keyLen), uint64(h.ffn)
	add("token_embd.weight", quant.Q4_0, d, synth.MinVocab)
	add("output_norm.weight", quant.F32, d)
	for l := 0; l < h.layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_q.weight", quant.Q4_0, d, q)
		add(p+"attn_k.weight", quant.Q4_0, d, q)
		add(p+"attn_v.weight", quant.Q4_0, d, q)
		add(p+"attn_output.weight", quant.Q4_0, q, d)
		add(p+"ffn_gate.weight", quant.Q4_0, d, f)
		add(p+"ffn_up.weight", quant.Q4_0, d, f)
		add(p+"ffn_down.weight", quant.Q4_0, f, d)
		add(p+"attn_norm.weight", quant.F32, d)
		add(p+"ffn_norm.weight", quant.F32, d)
	}
	var buf bytes.Buffer
	if _, err := g.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, p := range patches {
		pos := tensorRecord(t, data, p.name)
		for i, dim := range p.dims {
			binary.LittleEndian.PutUint64(data[pos+4+8*i:], dim)
		}
		pos += 4 + 8*len(p.dims)
		binary.LittleEndian.PutUint32(data[pos:], uint32(p.typ))
		of := tensorRecord(t, data, p.of)
		nd := int(binary.LittleEndian.Uint32(data[of:]))
		copy(data[pos+4:pos+12], data[of+4+8*nd+4:])
	}
	return data
}

// tensorRecord returns where the tensor info of name continues after its
// name (at its dimension count).
func tensorRecord(t testing.TB, data []byte, name string) int {
	needle := binary.LittleEndian.AppendUint64(nil, uint64(len(name)))
	needle = append(needle, name...)
	i := bytes.Index(data, needle)
	if i < 0 {
		t.Fatalf("tensor info %s not found", name)
	}
	return i + len(needle)
}

// The hostile shapes: a 65536-wide key (one head of 65536) on a 32-wide
// model, as in the issue.
var (
	// 1024 layers in about 2 MB, every block sharing one block's bytes.
	hostileAliased = hostileSpec{dim: 32, heads: 1, keyLen: 65536, ffn: 32, layers: 1024, ctxLen: 2048, alias: true}
	// One honest layer of 4.7 MB whose KV cache and rope tables take 1.5
	// GiB at the default context (and 768 GiB at its context_length).
	hostileWide = hostileSpec{dim: 32, heads: 1, keyLen: 65536, ffn: 32, layers: 1, ctxLen: 1 << 20}
)

// TestHyperparametersAgainstTensors: each hyperparameter that disagrees
// with the tensors is named, by Load and by FileConfig (model info).
func TestHyperparametersAgainstTensors(t *testing.T) {
	good := hostileSpec{dim: 32, heads: 2, keyLen: 16, ffn: 64, layers: 2, ctxLen: 64}
	cases := []struct {
		name string
		key  string
		val  uint32
		want string
	}{
		{"layers", "llama.block_count", 1024, "block_count 1024 does not match the 2 blocks"},
		{"fewer layers", "llama.block_count", 1, "block_count 1 does not match the 2 blocks"},
		{"key width", "llama.attention.key_length", 32768, "attention.head_count 2 × head size 32768"},
		{"kv heads", "llama.attention.head_count_kv", 1, "attention.head_count_kv 1 × head size 16"},
		{"ffn", "llama.feed_forward_length", 1 << 17, "feed_forward_length 131072"},
		{"embedding", "llama.embedding_length", 64, "embedding_length 64 does not match token_embd.weight's row length 32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := hostileGGUF(t, good)
			// Rewrite the value (a uint32 after the key and its type).
			needle := binary.LittleEndian.AppendUint64(nil, uint64(len(c.key)))
			needle = append(needle, c.key...)
			i := bytes.Index(data, needle)
			if i < 0 {
				t.Fatalf("key %s not found", c.key)
			}
			binary.LittleEndian.PutUint32(data[i+len(needle)+4:], c.val)
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(context.Background(), Options{ModelPath: path, Threads: 1})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Load: err = %v, want one saying %q", err, c.want)
			}
			f, err := gguf.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := FileConfig(f); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("FileConfig (model info's check): err = %v, want one saying %q", err, c.want)
			}
		})
	}
	// The unaltered file loads and is reported whole.
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, hostileGGUF(t, good), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(context.Background(), Options{ModelPath: path, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
}

// TestMaxMemory: Options.MaxMemory caps the estimate, which counts every
// session the caller will hold.
func TestMaxMemory(t *testing.T) {
	m, err := Load(context.Background(), Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	one := m.Info().Memory
	m.Close()
	if _, err := Load(context.Background(), Options{Threads: 1, MaxMemory: one.Total - 1}); !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "(--max-memory)") {
		t.Errorf("MaxMemory one byte short: err = %v, want ErrMemory", err)
	}
	m, err = Load(context.Background(), Options{Threads: 1, MaxMemory: one.Total})
	if err != nil {
		t.Fatalf("MaxMemory = the estimate: %v", err)
	}
	m.Close()
	four := one.Total + 3*(one.KVCache+one.Buffers)
	if _, err := Load(context.Background(), Options{Threads: 1, Sessions: 4, MaxMemory: four - 1}); !errors.Is(err, ErrMemory) {
		t.Errorf("4 sessions, MaxMemory one byte short: err = %v, want ErrMemory", err)
	}
	m, err = Load(context.Background(), Options{Threads: 1, Sessions: 4, MaxMemory: four})
	if err != nil {
		t.Fatalf("4 sessions: %v", err)
	}
	if got := m.Info().Memory; got.Total != four || got.Sessions != 4 || got.Limit != four || got.LimitBy != "--max-memory" {
		t.Errorf("memory = %+v, want a total of %d", got, four)
	}
	m.Close()
}
