package quant_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// synthModels are the GGUF files of shared/models/synth, quantised by
// llama.cpp; each has a JSON beside it with the sha256 of ggml's own
// dequantisation of every tensor (see that folder's README).
var synthModels = []string{
	"synth-llama-256", "synth-llama-256-Q8_0", "synth-llama-256-Q4_0",
	"synth-llama-256-Q4_K_M", "synth-llama-256-Q6_K",
	"synth-qwen2-256", "synth-qwen2-256-Q8_0", "synth-qwen2-256-Q4_K_M",
}

func openSynth(t *testing.T, name string) (*gguf.File, map[string]string, map[string]string) {
	t.Helper()
	f, err := gguf.Open(fixture.Path(t, "models/synth/"+name+".gguf"))
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { f.Close() })
	raw, err := os.ReadFile(fixture.Path(t, "models/synth/"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Types  map[string]string `json:"tensor_types"`
		Hashes map[string]string `json:"tensor_f32_sha256"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatalf("%s.json: %v", name, err)
	}
	return f, ref.Types, ref.Hashes
}

func dequantTensor(t *testing.T, ti *gguf.TensorInfo) []float32 {
	t.Helper()
	k, err := quant.Lookup(ti.Type)
	if err != nil {
		t.Fatalf("%s: %v", ti.Name, err)
	}
	n := int(ti.Elements())
	if want := n / k.BlockSize * k.BlockBytes; len(ti.Data) != want {
		t.Fatalf("%s: %d data bytes, want %d", ti.Name, len(ti.Data), want)
	}
	out := make([]float32, n)
	k.Dequant(out, ti.Data)
	return out
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// TestDequantMatchesGGML holds Dequant to ggml's own dequantisation, bit for
// bit, for every tensor of every synthetic model.
func TestDequantMatchesGGML(t *testing.T) {
	fixture.Path(t, "models/synth/README.md") // skips the whole test when the fixtures are absent
	seen := map[quant.Type]int{}
	for _, name := range synthModels {
		t.Run(name, func(t *testing.T) {
			f, types, hashes := openSynth(t, name)
			if len(f.Tensors) != len(hashes) {
				t.Errorf("%d tensors, reference lists %d", len(f.Tensors), len(hashes))
			}
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				if got, want := ti.Type.String(), types[ti.Name]; got != want {
					t.Errorf("%s: type %s, reference says %s", ti.Name, got, want)
				}
				sum := sha256.Sum256(f32Bytes(dequantTensor(t, ti)))
				if got, want := hex.EncodeToString(sum[:]), hashes[ti.Name]; got != want {
					t.Errorf("%s (%v): sha256 of dequantised values %s, want %s", ti.Name, ti.Type, got, want)
				}
				seen[ti.Type]++
			}
		})
	}
	for _, typ := range []quant.Type{quant.F32, quant.Q8_0, quant.Q4_0, quant.Q4_K, quant.Q6_K} {
		if seen[typ] == 0 {
			t.Errorf("no %v tensor was checked", typ)
		}
	}
}

// TestQuantizeMatchesLlamaQuantize requantises the F32 models with our
// Quantize and compares the bytes with what llama-quantize wrote (it uses
// the reference quantisers when no importance matrix is given).
func TestQuantizeMatchesLlamaQuantize(t *testing.T) {
	for _, name := range synthModels {
		if !strings.Contains(name, "-Q") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			base := name[:strings.LastIndex(name, "-Q")]
			src, _, _ := openSynth(t, base)
			qf, _, _ := openSynth(t, name)
			checked := 0
			for i := range qf.Tensors {
				qt := &qf.Tensors[i]
				if qt.Type == quant.F32 {
					continue
				}
				st, ok := src.Tensor(qt.Name)
				if !ok {
					t.Fatalf("%s missing from %s", qt.Name, base)
				}
				k, err := quant.Lookup(qt.Type)
				if err != nil {
					t.Fatal(err)
				}
				x := dequantTensor(t, st)
				got := make([]byte, len(qt.Data))
				k.Quantize(got, x)
				if !bytes.Equal(got, qt.Data) {
					diff := 0
					for j := range got {
						if got[j] != qt.Data[j] {
							diff++
						}
					}
					first := 0
					for got[first] == qt.Data[first] {
						first++
					}
					t.Errorf("%s (%v): %d of %d bytes differ from llama-quantize's, first at byte %d (block %d)",
						qt.Name, qt.Type, diff, len(got), first, first/k.BlockBytes)
				}
				checked++
			}
			if checked == 0 {
				t.Error("no quantised tensor checked")
			}
		})
	}
}
