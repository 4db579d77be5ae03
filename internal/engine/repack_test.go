package engine

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
)

// inFile reports whether b lies inside the model's file mapping.
func inFile(m *Model, b []byte) bool {
	data := m.file.Data()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= base && p-base < uintptr(len(data))
}

// TestRepackUsed: on a CPU with a repacked kernel for the type (Q8_0,
// Q4_0, Q5_0, Q4_K, Q6_K), Load rearranges every matrix of the layers and
// the (tied) output of that type whose rows are a whole number of the
// layout's groups into memory of its own, counts it, names the kernel,
// and leaves the token embedding in the file (and, for the 16-row groups
// of Q4_0, Q5_0, Q4_K and Q6_K, the 300-row output; Q8_0's 300-row output
// gets the row-by-row layout, its other matrices the 16-row groups);
// NoRepack (the --repack=false of the commands) leaves them all in the
// file. Without such a kernel nothing changes either way.
func TestRepackUsed(t *testing.T) {
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q6_K} {
		t.Run(typ.String(), func(t *testing.T) { testRepackUsed(t, typ) })
	}
}

func testRepackUsed(t *testing.T, typ quant.Type) {
	path := synthFile(t, synth.Spec{Arch: "llama", Dim: 768, Layers: 2, Heads: 12, FFN: 1024, Vocab: 300, Ctx: 64, Type: typ, Seed: 4})
	rp0 := quant.Repacked(typ, 16) // the layout of whole groups
	kf, _ := quant.Lookup(typ)
	for _, off := range []bool{false, true} {
		m := loadModel(t, path, Options{Threads: 2, NoRepack: off})
		mats := append([]*matrix{&m.w.output}, m.w.allLayerMatrices()...)
		var bytes uint64
		moved := 0
		for _, mx := range mats {
			rp := quant.Repacked(typ, mx.rows)
			want := rp != nil && !off
			if want {
				bytes += uint64(len(mx.data))
				moved++
			}
			switch {
			case want && (mx.kern != rp.Kernel || mx.repacked != rp.Name || inFile(m, mx.data)):
				t.Errorf("NoRepack %v: %s not rearranged (kernel %p, name %q, in the file %v)", off, mx.name, mx.kern, mx.repacked, inFile(m, mx.data))
			case !want && (mx.kern != kf || mx.repacked != "" || !inFile(m, mx.data)):
				t.Errorf("NoRepack %v: %s rearranged (name %q)", off, mx.name, mx.repacked)
			}
		}
		if rp0 != nil && !off && moved == len(mats) && typ != quant.Q8_0 {
			t.Errorf("the 300-row output was rearranged into 16-row groups")
		}
		if m.w.tokenEmbd.kern != kf || !inFile(m, m.w.tokenEmbd.data) {
			t.Errorf("NoRepack %v: the token embedding left the file's layout", off)
		}
		// Warmup skips the file's copy of exactly the rearranged matrices.
		if n := len(m.released); n != moved {
			t.Errorf("NoRepack %v: %d file spans released, want %d", off, n, moved)
		}
		info := m.Info()
		if moved > 0 {
			if info.Memory.Repacked != bytes || !strings.Contains(info.Kernels, rp0.Name+" on "+typ.String()) {
				t.Errorf("NoRepack %v: Memory.Repacked %d (want %d), Kernels %q", off, info.Memory.Repacked, bytes, info.Kernels)
			}
			if !strings.Contains(info.Memory.String(), "rearranged at load") {
				t.Errorf("memory %q does not count the rearranged copies", info.Memory)
			}
		} else if info.Memory.Repacked != 0 || info.Kernels != quant.Accel() {
			t.Errorf("NoRepack %v: Memory.Repacked %d, Kernels %q, want 0 and %q", off, info.Memory.Repacked, info.Kernels, quant.Accel())
		}
		// The buffers Load counted are what a session allocates (the
		// rearranged kernels' activations are larger than Q8_0's).
		st := m.NewSession().st
		f32s := len(st.x) + len(st.xb) + len(st.q) + len(st.att) + len(st.hb) + len(st.hb2) + len(st.logits) + len(st.scratch)
		if mem := info.Memory; mem.Buffers != 4*uint64(f32s)+uint64(len(st.xq)) || mem.Total != mem.Weights+mem.Decoded+mem.Repacked+mem.Rope+mem.KVCache+mem.Buffers {
			t.Errorf("NoRepack %v: memory %+v, a session's buffers %d", off, mem, 4*uint64(f32s)+uint64(len(st.xq)))
		}
		t.Logf("NoRepack %v: kernels %s; memory %s", off, info.Kernels, info.Memory)
	}
}

// TestRepackAgrees: with the weights rearranged the model computes what
// it does on the file's layout. A single matrix product differs only by
// float32 summation order (the same integer block sums and scales), so the
// first position's logits agree to 1e-5 of their scale; later positions
// may differ by one step of an activation quant that a last-bit
// difference rounded the other way, so there, teacher-forced over a
// greedy continuation, the check is the llama.cpp fixtures' for Q8_0
// (top-10 log-probabilities within 0.25, argmax equal at all but two
// positions; measured: 0.1, 37 of 38).
// 768-wide rows (24 blocks: a group of 16 and a tail) and 1024-wide ones
// (two whole groups). For Q4_0, Q5_0, Q4_K and Q6_K the same bounds (Q4_K
// measured: 0.21, 37 of 38; Q6_K: 4e-6, 38 of 38; Q5_0: 0, 16 of 16, its
// greedy continuation ending early), over a prompt and continuation of up
// to 38 tokens: the batched prefill goes through the matrix product's
// tiles of 8 (Q4_K: 4), 4 and 1 tokens.
func TestRepackAgrees(t *testing.T) {
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q6_K} {
		t.Run(typ.String(), func(t *testing.T) { testRepackAgrees(t, typ) })
	}
}

func testRepackAgrees(t *testing.T, typ quant.Type) {
	if quant.Repacked(typ, 16) == nil {
		t.Skip("no repacked kernel for this type on this CPU")
	}
	path := synthFile(t, synth.Spec{Arch: "llama", Dim: 768, Layers: 2, Heads: 12, FFN: 1024, Vocab: 300, Ctx: 64, Type: typ, Seed: 5})
	on := loadModel(t, path, Options{Threads: 2})
	off := loadModel(t, path, Options{Threads: 2, NoRepack: true})
	prompt := []int32{1, 200, 201, 202, 17, 90}
	cont, _ := generate(t, on.NewSession(), prompt, Params{MaxTokens: 32})
	seq := append(slices.Clone(prompt), cont...)
	lOn, err := on.NewSession().Logits(seq)
	if err != nil {
		t.Fatal(err)
	}
	lOff, err := off.NewSession().Logits(seq)
	if err != nil {
		t.Fatal(err)
	}
	var first, scale float64
	for j := range lOn[0] {
		first = max(first, math.Abs(float64(lOn[0][j]-lOff[0][j])))
		scale = max(scale, math.Abs(float64(lOff[0][j])))
	}
	if first > 1e-5*scale {
		t.Errorf("first position: logits differ by %g, more than 1e-5 of %g", first, scale)
	}
	agree, worst := 0, 0.0
	for p := range lOn {
		a, b := logSoftmax(lOn[p]), logSoftmax(lOff[p])
		if argmax(lOn[p]) == argmax(lOff[p]) {
			agree++
		}
		top := slices.Clone(b)
		slices.Sort(top)
		cut := top[len(top)-10]
		for j := range b {
			if b[j] >= cut {
				worst = max(worst, math.Abs(a[j]-b[j]))
			}
		}
	}
	t.Logf("first position differs by %.3g of %.3g; argmax agrees at %d/%d; max |Δ logprob| over the top 10 = %.3g", first, scale, agree, len(lOn), worst)
	if agree < len(lOn)-2 || worst > 0.25 {
		t.Errorf("argmax agrees at %d/%d positions, |Δ logprob| up to %g: want all but two and at most 0.25", agree, len(lOn), worst)
	}
}

// TestPageInSkipping: Warmup's page-in reads no byte inside the spans of
// the rearranged matrices, and every page outside them.
func TestPageInSkipping(t *testing.T) {
	data := make([]byte, 64<<10)
	data[16384] = 1 // a page start inside the skipped span
	skip := []span{{16000, 40000}}
	if got := pageInSkipping(data, skip); got != 0 {
		t.Errorf("page-in read inside the skipped span (%d)", got)
	}
	if got := pageInSkipping(data, nil); got != 1 {
		t.Errorf("page-in without spans = %d, want the byte at 16384", got)
	}
	data[16384], data[44096] = 0, 2 // read after the span (every 4 KiB from its end)
	if got := pageInSkipping(data, skip); got != 2 {
		t.Errorf("page-in after the span = %d, want 2", got)
	}
}

// TestRepackTied: with the output tied to the token embedding (no
// output.weight), the output gets a rearranged copy of its own while the
// embedding's lookups keep reading the file's layout, and the first
// position's logits agree with the model on the file's layout.
func TestRepackTied(t *testing.T) {
	rp := quant.Repacked(quant.Q8_0, 300) // the 300-row output: the row-by-row layout
	if rp == nil {
		t.Skip("no repacked Q8_0 kernel on this CPU")
	}
	src := synthFile(t, synth.Spec{Arch: "llama", Dim: 512, Layers: 1, Heads: 8, FFN: 1024, Vocab: 300, Ctx: 64, Type: quant.Q8_0, Seed: 6})
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var g gguf.Writer
	for _, kv := range f.KV {
		if kv.Key != "general.alignment" {
			g.Add(kv.Key, kv.Value)
		}
	}
	for i := range f.Tensors {
		if tn := &f.Tensors[i]; tn.Name != "output.weight" {
			g.AddTensor(tn.Name, tn.Type, tn.Dims, tn.Data)
		}
	}
	path := filepath.Join(t.TempDir(), "tied.gguf")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteTo(out); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	on := loadModel(t, path, Options{Threads: 2})
	off := loadModel(t, path, Options{Threads: 2, NoRepack: true})
	if on.w.output.kern != rp.Kernel || inFile(on, on.w.output.data) || !inFile(on, on.w.tokenEmbd.data) || on.w.tokenEmbd.repacked != "" {
		t.Fatalf("tied output: output repacked %q (in the file %v), embedding repacked %q", on.w.output.repacked, inFile(on, on.w.output.data), on.w.tokenEmbd.repacked)
	}
	for _, sp := range on.released {
		if e := on.w.tokenEmbd.data; uintptrOf(on.file.Data())+uintptr(sp.lo) <= uintptrOf(e) && uintptrOf(e) < uintptrOf(on.file.Data())+uintptr(sp.hi) {
			t.Errorf("the embedding's bytes are released: %v", sp)
		}
	}
	prompt := []int32{1, 20, 30}
	lOn, err := on.NewSession().Logits(prompt)
	if err != nil {
		t.Fatal(err)
	}
	lOff, err := off.NewSession().Logits(prompt)
	if err != nil {
		t.Fatal(err)
	}
	var worst, scale float64
	for j := range lOn[0] {
		worst = max(worst, math.Abs(float64(lOn[0][j]-lOff[0][j])))
		scale = max(scale, math.Abs(float64(lOff[0][j])))
	}
	if worst > 1e-5*scale {
		t.Errorf("first position: logits differ by %g, more than 1e-5 of %g", worst, scale)
	}
}

// TestClipSpans: the parts of the rearranged matrices' spans inside one
// chunk of the hash, which it hands back as it goes.
func TestClipSpans(t *testing.T) {
	spans := []span{{0, 10}, {20, 30}, {40, 50}}
	got := clipSpans(spans, 5, 45)
	want := []span{{5, 10}, {20, 30}, {40, 45}}
	if !slices.Equal(got, want) {
		t.Errorf("clipSpans(%v, 5, 45) = %v, want %v", spans, got, want)
	}
	if got := clipSpans(spans, 10, 20); len(got) != 0 {
		t.Errorf("a chunk between spans got %v", got)
	}
}

// TestKernelSummaryTypes: a model with two rearranged types (a Q4_K_M
// file's Q6_K output and Q4_K layers) names each, once.
func TestKernelSummaryTypes(t *testing.T) {
	w := &weights{layers: make([]layer, 2)}
	w.output = matrix{typ: quant.Q6_K, repacked: "avx512-vnni"}
	for i := range w.layers {
		for _, m := range []*matrix{&w.layers[i].wq, &w.layers[i].wGate} {
			*m = matrix{typ: quant.Q4_K, repacked: "avx512-vnni"}
		}
		w.layers[i].wDown = matrix{typ: quant.Q6_K, repacked: "avx512-vnni"}
	}
	want := "avx512-vnni on Q6_K rearranged at load; avx512-vnni on Q4_K rearranged at load; " + quant.Accel()
	if got := w.kernelSummary(); got != want {
		t.Errorf("kernelSummary = %q, want %q", got, want)
	}
}
