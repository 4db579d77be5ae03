package quantize

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/engine/bundled"
	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// quantSpec is a small llama whose widths are multiples of 256, so every
// 2-D weight can be K-quantised.
var quantSpec = synth.Spec{Arch: "llama", Dim: 256, Layers: 2, Heads: 8, KVHeads: 4, FFN: 512, Vocab: 400, Ctx: 64, Type: quant.F32, Seed: 11}

func quantizeTo(t *testing.T, in string, opts Options) (string, *Result) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.gguf")
	res, err := File(in, out, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

func openGGUF(t *testing.T, path string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func greedyTokens(t *testing.T, m *engine.Model, text string, n int) []int32 {
	t.Helper()
	got, _ := generate(t, m.NewSession(), m.Tokenizer().Encode(text, true, false), engine.Params{MaxTokens: n})
	return got
}

// TestQuantizeSynthMixed quantises an F32 synth model to Q4_K with
// token_embd at Q6_K. Synth draws the same float32 weights whatever the
// type and quantises them with the same reference quantisers, so every
// converted tensor must equal, byte for byte, the tensor of a model
// synthesised directly at that type; the uniform Q4_K file must decode
// greedily exactly as the directly synthesised Q4_K model does; and the
// quantised logits must stay close to the F32 model's.
func TestQuantizeSynthMixed(t *testing.T) {
	f32Path := synthFile(t, quantSpec)
	direct := map[quant.Type]*gguf.File{}
	directPath := map[quant.Type]string{}
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K} {
		sp := quantSpec
		sp.Type = typ
		directPath[typ] = synthFile(t, sp)
		direct[typ] = openGGUF(t, directPath[typ])
	}
	in := openGGUF(t, f32Path)

	mixedPath, res := quantizeTo(t, f32Path, Options{Type: quant.Q4_K, Rules: []TensorTypeRule{{"token_embd", quant.Q6_K}}})
	uniformPath, ures := quantizeTo(t, f32Path, Options{Type: quant.Q4_K, Threads: 3})

	for _, c := range []struct {
		name     string
		path     string
		res      *Result
		embd     quant.Type
		fileType uint32
	}{
		{"mixed", mixedPath, res, quant.Q6_K, 15},
		{"uniform", uniformPath, ures, quant.Q4_K, 14},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := openGGUF(t, c.path)
			if len(out.Tensors) != len(in.Tensors) {
				t.Fatalf("%d tensors, want %d", len(out.Tensors), len(in.Tensors))
			}
			for i, ot := range out.Tensors {
				it := in.Tensors[i]
				want := quant.Q4_K
				switch {
				case len(it.Dims) == 1:
					want = quant.F32
				case it.Name == "token_embd.weight":
					want = c.embd
				}
				if ot.Name != it.Name || !slices.Equal(ot.Dims, it.Dims) || ot.Type != want {
					t.Errorf("tensor %d: %s %v %v, want %s %v %v", i, ot.Name, ot.Dims, ot.Type, it.Name, it.Dims, want)
					continue
				}
				ref := &it
				if want != quant.F32 {
					ref, _ = direct[want].Tensor(it.Name)
				}
				if !bytes.Equal(ot.Data, ref.Data) {
					t.Errorf("%s (%v) differs from the directly synthesised tensor", ot.Name, ot.Type)
				}
				if p := c.res.Plan.Tensors[i]; p.To != ot.Type || p.ToBytes != uint64(len(ot.Data)) || p.FromBytes != uint64(len(it.Data)) {
					t.Errorf("plan for %s: %+v, file has %v, %d bytes", ot.Name, p, ot.Type, len(ot.Data))
				}
			}
			// Metadata: everything copied in order, plus file type and
			// quantisation version.
			var keys []string
			for _, kv := range out.KV {
				keys = append(keys, kv.Key)
				if iv, ok := in.Lookup(kv.Key); ok && !reflect.DeepEqual(iv, kv) {
					t.Errorf("metadata %s = %v, input has %v", kv.Key, kv.Value, iv.Value)
				}
			}
			var inKeys []string
			for _, kv := range in.KV {
				inKeys = append(inKeys, kv.Key)
			}
			if want := append(inKeys, "general.quantization_version", "general.file_type"); !slices.Equal(keys, want) {
				t.Errorf("keys %v\nwant %v", keys, want)
			}
			if ft, _ := out.Uint("general.file_type"); ft != uint64(c.fileType) || c.res.Plan.FileType != c.fileType {
				t.Errorf("general.file_type = %d (plan %d), want %d", ft, c.res.Plan.FileType, c.fileType)
			}
			if qv, _ := out.Uint("general.quantization_version"); qv != 2 {
				t.Errorf("general.quantization_version = %d, want 2", qv)
			}
			if st, err := os.Stat(c.path); err != nil || st.Size() != c.res.OutBytes || c.res.InBytes != in.Size {
				t.Errorf("sizes: result %d -> %d, input %d, output %v", c.res.InBytes, c.res.OutBytes, in.Size, st)
			}
			if before, after := c.res.Plan.Bytes(); after >= before/5 {
				t.Errorf("tensor data %d -> %d bytes: K-quantisation should shrink F32 more than 5×", before, after)
			}
		})
	}

	// The uniform file is the directly synthesised Q4_K model's tensors,
	// so the engine decodes both identically.
	mq := loadModel(t, uniformPath, engine.Options{Threads: 1})
	md := loadModel(t, directPath[quant.Q4_K], engine.Options{Threads: 1})
	for _, prompt := range []string{"Once upon a time", "the quick brown fox"} {
		if a, b := greedyTokens(t, mq, prompt, 24), greedyTokens(t, md, prompt, 24); !slices.Equal(a, b) {
			t.Errorf("%q: quantised file gives %v, direct Q4_K synth %v", prompt, a, b)
		}
	}

	// Closeness to F32, teacher-forced over a sequence the F32 model
	// generated. Each weight moves by the quantisation step (relative RMS
	// measured 0.072 for Q4_K, 0.018 for Q6_K, 0.0054 for Q8_0), and this
	// random model amplifies that through its two layers: logits move by
	// a relative RMS of 0.33 for the mix (0.40 all Q4_K, 0.037 all Q8_0),
	// enough to flip half the argmaxes at 4 bits. So the checks are: every
	// tensor's error is that of its type, the mix is closer than all-Q4_K
	// (token_embd at Q6_K helps), the logits' RMS change stays bounded, and
	// at Q8_0 the argmax agrees on nearly every position.
	mf := loadModel(t, f32Path, engine.Options{Threads: 1})
	seq := append(mf.Tokenizer().Encode("Once upon a time", true, false), greedyTokens(t, mf, "Once upon a time", 40)...)
	lf, err := mf.NewSession().Logits(seq)
	if err != nil {
		t.Fatal(err)
	}
	out := openGGUF(t, mixedPath)
	for i, ot := range out.Tensors {
		bound := map[quant.Type]float64{quant.F32: 0, quant.Q6_K: 0.025, quant.Q4_K: 0.09}[ot.Type]
		if e := relRMS(t, &ot, &in.Tensors[i]); e > bound {
			t.Errorf("%s (%v): relative RMS error %.4f, want at most %.3f", ot.Name, ot.Type, e, bound)
		}
	}
	q8Path, _ := quantizeTo(t, f32Path, Options{Type: quant.Q8_0})
	rel := map[string]float64{}
	for _, c := range []struct {
		name     string
		path     string
		maxRel   float64
		minAgree float64 // fraction of positions
	}{
		{"mixed", mixedPath, 0.45, 0},
		{"Q4_K", uniformPath, 0.55, 0},
		{"Q8_0", q8Path, 0.06, 0.9},
	} {
		lm, err := loadModel(t, c.path, engine.Options{Threads: 1}).NewSession().Logits(seq)
		if err != nil {
			t.Fatal(err)
		}
		agree, maxDiff, se, ss := 0, 0.0, 0.0, 0.0
		for i := range lf {
			if argmax(lf[i]) == argmax(lm[i]) {
				agree++
			}
			mean := 0.0
			for _, v := range lf[i] {
				mean += float64(v)
			}
			mean /= float64(len(lf[i]))
			for j := range lf[i] {
				d := float64(lf[i][j] - lm[i][j])
				maxDiff = max(maxDiff, math.Abs(d))
				se += d * d
				ss += (float64(lf[i][j]) - mean) * (float64(lf[i][j]) - mean)
			}
		}
		rel[c.name] = math.Sqrt(se / ss)
		t.Logf("%s vs F32: argmax agrees on %d of %d positions, logits relative RMS change %.3f, max |Δ| %.3f", c.name, agree, len(lf), rel[c.name], maxDiff)
		if rel[c.name] > c.maxRel {
			t.Errorf("%s: logits relative RMS change %.3f, want at most %.2f", c.name, rel[c.name], c.maxRel)
		}
		if float64(agree) < c.minAgree*float64(len(lf)) {
			t.Errorf("%s: argmax agrees on %d of %d positions, want at least %.0f%%", c.name, agree, len(lf), 100*c.minAgree)
		}
	}
	if rel["mixed"] >= rel["Q4_K"] {
		t.Errorf("the Q6_K embedding did not bring the logits closer: %.3f, all Q4_K %.3f", rel["mixed"], rel["Q4_K"])
	}
}

// relRMS is the RMS of the difference between two tensors' decoded values
// over the RMS of b's.
func relRMS(t *testing.T, a, b *gguf.TensorInfo) float64 {
	t.Helper()
	dec := func(ti *gguf.TensorInfo) []float32 {
		k, err := quant.Lookup(ti.Type)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float32, ti.Elements())
		k.Dequant(v, ti.Data)
		return v
	}
	x, y := dec(a), dec(b)
	var se, ss float64
	for i := range x {
		d := float64(x[i] - y[i])
		se += d * d
		ss += float64(y[i]) * float64(y[i])
	}
	if ss == 0 {
		return math.Sqrt(se)
	}
	return math.Sqrt(se / ss)
}

// TestQuantizeToF32 converts to F32: an F32 model comes out with its
// tensors unchanged, and an F16 model's weights are widened exactly, so
// greedy decoding reproduces the input's tokens.
func TestQuantizeToF32(t *testing.T) {
	for _, typ := range []quant.Type{quant.F32, quant.F16} {
		t.Run(typ.String(), func(t *testing.T) {
			sp := quantSpec
			sp.Type = typ
			in := synthFile(t, sp)
			out, res := quantizeTo(t, in, Options{Type: quant.F32})
			fi, fo := openGGUF(t, in), openGGUF(t, out)
			for i, ot := range fo.Tensors {
				it := fi.Tensors[i]
				k, _ := quant.Lookup(it.Type)
				if ot.Type != quant.F32 {
					t.Fatalf("%s is %v", ot.Name, ot.Type)
				}
				want := make([]float32, it.Elements())
				k.Dequant(want, it.Data)
				got := make([]float32, ot.Elements())
				for j := range got {
					got[j] = math.Float32frombits(uint32(ot.Data[4*j]) | uint32(ot.Data[4*j+1])<<8 | uint32(ot.Data[4*j+2])<<16 | uint32(ot.Data[4*j+3])<<24)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: values changed", ot.Name)
				}
			}
			if ft, _ := fo.Uint("general.file_type"); ft != 0 || len(res.Plan.Requantized) != 0 {
				t.Errorf("file_type %d, requantised %v", ft, res.Plan.Requantized)
			}
			mi, mo := loadModel(t, in, engine.Options{Threads: 1}), loadModel(t, out, engine.Options{Threads: 1})
			for _, prompt := range []string{"Once upon a time", "hello world"} {
				if a, b := greedyTokens(t, mi, prompt, 32), greedyTokens(t, mo, prompt, 32); !slices.Equal(a, b) {
					t.Errorf("%q: input gives %v, F32 copy %v", prompt, a, b)
				}
			}
		})
	}
}

// TestQuantizeStoriesQ8_0 quantises the bundled stories260K (F32) to
// Q8_0. Its Q8_0 tensors are byte for byte those of llama-quantize's
// stories260K-Q8_0.gguf (which has ffn_down, rows of 172, in F16 where
// this keeps it F32), and the greedy text is the same.
func TestQuantizeStoriesQ8_0(t *testing.T) {
	ref := fixture.Path(t, "models/stories260K-Q8_0.gguf")
	dir := t.TempDir()
	in := filepath.Join(dir, "stories260K.gguf")
	if err := os.WriteFile(in, bundled.Model, 0o644); err != nil {
		t.Fatal(err)
	}
	out, res := quantizeTo(t, in, Options{Type: quant.Q8_0})
	fo, fr := openGGUF(t, out), openGGUF(t, ref)
	q8 := 0
	for _, ot := range fo.Tensors {
		rt, ok := fr.Tensor(ot.Name)
		if !ok {
			t.Fatalf("%s not in the reference", ot.Name)
		}
		switch {
		case strings.HasSuffix(ot.Name, "ffn_down.weight"):
			if ot.Type != quant.F32 || rt.Type != quant.F16 {
				t.Errorf("%s: %v (reference %v), want F32 kept (reference F16)", ot.Name, ot.Type, rt.Type)
			}
		case ot.Type != rt.Type:
			t.Errorf("%s: %v, reference %v", ot.Name, ot.Type, rt.Type)
		case !bytes.Equal(ot.Data, rt.Data):
			t.Errorf("%s (%v): bytes differ from llama-quantize's", ot.Name, ot.Type)
		case ot.Type == quant.Q8_0:
			q8++
		}
	}
	if q8 != 32 {
		t.Errorf("%d Q8_0 tensors, want 32", q8)
	}
	kept := 0
	for _, p := range res.Plan.Tensors {
		if strings.Contains(p.Kept, "row of 172 is not a multiple of Q8_0's block of 32") {
			kept++
		}
	}
	if kept != 5 {
		t.Errorf("%d tensors kept for their row length, want the 5 ffn_down", kept)
	}
	mo, mr := loadModel(t, out, engine.Options{Threads: 1}), loadModel(t, ref, engine.Options{Threads: 1})
	a, b := greedyTokens(t, mo, "Once upon a time", 48), greedyTokens(t, mr, "Once upon a time", 48)
	if ta, tb := mo.Tokenizer().Decode(a), mr.Tokenizer().Decode(b); ta != tb {
		t.Errorf("greedy text\n%q\nllama-quantize's Q8_0 file gives\n%q", ta, tb)
	}
}

// TestQuantizeRequantize converts a Q8_0 model: tensors already at the
// wanted type are copied, the others decoded and re-encoded, and the plan
// says precision is lost twice.
func TestQuantizeRequantize(t *testing.T) {
	sp := quantSpec
	sp.Type = quant.Q8_0
	in := synthFile(t, sp)
	out, res := quantizeTo(t, in, Options{Type: quant.Q4_K, Rules: []TensorTypeRule{{"attn_*", quant.Q8_0}}})
	if !slices.Equal(res.Plan.Requantized, []quant.Type{quant.Q8_0}) {
		t.Errorf("requantised %v, want [Q8_0]", res.Plan.Requantized)
	}
	fi, fo := openGGUF(t, in), openGGUF(t, out)
	for i, ot := range fo.Tensors {
		it := fi.Tensors[i]
		switch {
		case len(ot.Dims) == 1:
		case strings.Contains(ot.Name, ".attn_"):
			if ot.Type != quant.Q8_0 || !bytes.Equal(ot.Data, it.Data) {
				t.Errorf("%s: %v, want the Q8_0 bytes copied", ot.Name, ot.Type)
			}
		case ot.Type != quant.Q4_K:
			t.Errorf("%s: %v, want Q4_K", ot.Name, ot.Type)
		}
	}
	m := loadModel(t, out, engine.Options{Threads: 1})
	if got := greedyTokens(t, m, "Once", 8); len(got) == 0 {
		t.Error("no tokens from the requantised model")
	}
}

// TestQuantizeKeepsUnfitRows: with ffn 320, ffn_down rows (320) are not a
// whole number of 256-element blocks, so they stay F32, as do the norms;
// a rule on a 1-D tensor counts as matching but keeps it.
func TestQuantizeKeepsUnfitRows(t *testing.T) {
	sp := quantSpec
	sp.FFN = 320
	in := synthFile(t, sp)
	out, res := quantizeTo(t, in, Options{Type: quant.Q4_K, Rules: []TensorTypeRule{{"output_norm", quant.Q8_0}}})
	for _, p := range res.Plan.Tensors {
		switch {
		case strings.HasSuffix(p.Name, "ffn_down.weight"):
			if p.To != quant.F32 || p.Kept != "row of 320 is not a multiple of Q4_K's block of 256" {
				t.Errorf("%s: %+v", p.Name, p)
			}
		case p.Name == "output_norm.weight":
			if p.To != quant.F32 || p.Kept != "1-D" || p.Rule != "output_norm" || p.Wanted != quant.Q8_0 {
				t.Errorf("%s: %+v", p.Name, p)
			}
		case len(p.Dims) == 1:
			if p.To != quant.F32 || p.Kept != "1-D" {
				t.Errorf("%s: %+v", p.Name, p)
			}
		case p.To != quant.Q4_K || p.Kept != "":
			t.Errorf("%s: %+v", p.Name, p)
		}
	}
	m := loadModel(t, out, engine.Options{Threads: 1})
	if got := greedyTokens(t, m, "Once", 8); len(got) == 0 {
		t.Error("no tokens")
	}
}

func TestQuantizePatterns(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"attn_output", "blk.3.attn_output.weight", true},
		{"attn_output", "blk.12.attn_output.weight", true},
		{"attn_output", "blk.3.attn_output_norm.weight", false},
		{"attn", "blk.3.attn_output.weight", false},
		{"token_embd", "token_embd.weight", true},
		{"token_embd.weight", "token_embd.weight", true},
		{"output", "output.weight", true},
		{"output", "output_norm.weight", false},
		{"blk.3.attn_output.weight", "blk.3.attn_output.weight", true},
		{"blk.3.attn_output", "blk.3.attn_output.weight", true},
		{"blk.3.attn_output.weight", "blk.13.attn_output.weight", false},
		{"attn_q", "blk.0.attn_q.bias", true},
		{"blk.1?.ffn_*", "blk.12.ffn_up.weight", true},
		{"blk.1?.ffn_*", "blk.2.ffn_up.weight", false},
		{"ffn_*", "blk.2.ffn_down.weight", true},
		{"*.weight", "blk.2.ffn_down.weight", true},
		{"attn_[qk]", "blk.0.attn_k.weight", true},
		{"attn_[qk]", "blk.0.attn_v.weight", false},
		{"blkx.3.attn_q", "blkx.3.attn_q.weight", true},
	}
	for _, c := range cases {
		got, err := matchTensor(c.pattern, c.name)
		if err != nil || got != c.want {
			t.Errorf("matchTensor(%q, %q) = %v, %v; want %v", c.pattern, c.name, got, err, c.want)
		}
	}
	// The first matching rule wins.
	in := synthFile(t, quantSpec)
	f := openGGUF(t, in)
	p, err := NewPlan(f, Options{Type: quant.Q4_K, Rules: []TensorTypeRule{{"blk.0.attn_q", quant.Q8_0}, {"attn_*", quant.Q6_K}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range p.Tensors {
		want := quant.Q4_K
		switch {
		case len(q.Dims) == 1:
			want = quant.F32
		case q.Name == "blk.0.attn_q.weight":
			want = quant.Q8_0
		case strings.Contains(q.Name, ".attn_"):
			want = quant.Q6_K
		}
		if q.To != want {
			t.Errorf("%s: %v, want %v", q.Name, q.To, want)
		}
	}
	if p.FileType != 15 {
		t.Errorf("file type %d, want 15 (Q4_K_M: rules raised some tensors)", p.FileType)
	}
}

// TestQuantizeRefuses: requests that cannot be carried out fail with
// ErrSpec before anything is written.
func TestQuantizeRefuses(t *testing.T) {
	in := synthFile(t, quantSpec)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	link := filepath.Join(dir, "link.gguf")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		out      string
		opts     Options
		contains string
	}{
		{"no quantiser", out, Options{Type: quant.Q8_K}, "cannot quantise to Q8_K"},
		{"rule type", out, Options{Type: quant.Q4_K, Rules: []TensorTypeRule{{"token_embd", quant.Q8_1}}}, "cannot quantise to Q8_1"},
		{"no match", out, Options{Type: quant.Q4_K, Rules: []TensorTypeRule{{"token_embd", quant.Q6_K}, {"attn_out", quant.Q6_K}}}, `pattern "attn_out" matches no tensor`},
		{"bad glob", out, Options{Type: quant.Q4_K, Rules: []TensorTypeRule{{"attn_[", quant.Q6_K}}}, `pattern "attn_["`},
		{"empty pattern", out, Options{Type: quant.Q4_K, Rules: []TensorTypeRule{{"", quant.Q6_K}}}, "empty tensor pattern"},
		{"same path", in, Options{Type: quant.Q4_K}, "is the input file"},
		{"same path, relative", filepath.Join(filepath.Dir(in), ".", filepath.Base(in)), Options{Type: quant.Q4_K}, "is the input file"},
		{"symlink to input", link, Options{Type: quant.Q4_K}, "is the input file"},
	}
	before, _ := os.ReadFile(in)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := File(in, c.out, c.opts)
			if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), c.contains) {
				t.Errorf("err = %v, want ErrSpec containing %q", err, c.contains)
			}
		})
	}
	after, _ := os.ReadFile(in)
	if !bytes.Equal(before, after) {
		t.Error("the input changed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "link.gguf" {
		t.Errorf("directory holds %v, want only link.gguf", entries)
	}
	if _, err := File(filepath.Join(dir, "missing.gguf"), out, Options{Type: quant.Q4_K}); err == nil || errors.Is(err, ErrSpec) {
		t.Errorf("missing input: %v", err)
	}
}

// TestQuantizeAtomic: a failure while writing (here, the output directory
// is missing) leaves no file; an existing output is replaced whole.
func TestQuantizeAtomic(t *testing.T) {
	in := synthFile(t, quantSpec)
	dir := t.TempDir()
	if _, err := File(in, filepath.Join(dir, "no", "out.gguf"), Options{Type: quant.Q8_0}); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	out := filepath.Join(dir, "out.gguf")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := File(in, out, Options{Type: quant.Q8_0}); err != nil {
		t.Fatal(err)
	}
	openGGUF(t, out)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %v, want only out.gguf", entries)
	}
}

// TestQuantizeAlignment: a file with its own general.alignment keeps it
// (written once) and its data stays aligned.
func TestQuantizeAlignment(t *testing.T) {
	var w gguf.Writer
	w.Alignment = 64
	w.Add("general.architecture", "llama")
	w.Add("general.file_type", uint32(0))
	data := make([]byte, 4*256*2)
	for i := 0; i < 512; i++ {
		putF32(data[4*i:], float32(i%17)-8)
	}
	w.AddTensor("a.weight", quant.F32, []uint64{256, 2}, data)
	w.AddTensor("n.weight", quant.F32, []uint64{3}, make([]byte, 12))
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "in.gguf")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := quantizeTo(t, in, Options{Type: quant.Q6_K})
	f := openGGUF(t, out)
	n := 0
	for _, kv := range f.KV {
		if kv.Key == "general.alignment" {
			n++
		}
	}
	if f.Alignment != 64 || n != 1 {
		t.Errorf("alignment %d, %d general.alignment keys", f.Alignment, n)
	}
	if ft, _ := f.Uint("general.file_type"); ft != 18 || f.KV[2].Key != "general.file_type" {
		t.Errorf("file_type %d at %q, want 18 in its original place", ft, f.KV[2].Key)
	}
	a, _ := f.Tensor("a.weight")
	if a.Type != quant.Q6_K || f.DataStart%64 != 0 || a.Offset%64 != 0 {
		t.Errorf("a.weight %v at %d+%d", a.Type, f.DataStart, a.Offset)
	}
}

// loadModel loads the model at path for the test's life.
func loadModel(t testing.TB, path string, opts engine.Options) *engine.Model {
	t.Helper()
	opts.ModelPath = path
	m, err := engine.Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// generate runs s on prompt and returns the tokens it generated.
func generate(t *testing.T, s *engine.Session, prompt []int32, p engine.Params) ([]int32, engine.Result) {
	t.Helper()
	var got []int32
	res, err := s.Generate(context.Background(), prompt, p, func(tok engine.Token) error {
		got = append(got, tok.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, res
}

// putF32 stores v little-endian in b.
func putF32(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) }

// synthFile writes the model sp describes to a temporary file.
func synthFile(t testing.TB, sp synth.Spec) string {
	t.Helper()
	var buf bytes.Buffer
	if err := synth.Write(&buf, sp); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "synth.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// argmax returns the index of the largest of x (the first on ties).
func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}
