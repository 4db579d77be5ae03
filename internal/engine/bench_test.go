package engine

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
)

// benchModels are the models the benchmarks run: the bundled stories260K
// and 125M-shaped synthetic models (dim 768, 12 layers, 12 heads, ffn 3072,
// vocab 32000), synthesised once per run into a temporary directory. A
// name ending in -norepack loads its model's file with Options.NoRepack,
// for A/B of the kernel on weights rearranged at load
// (-bench 'Decode/synth125M-Q8_0' runs both).
var benchModels = []struct {
	name string
	spec *synth.Spec // nil: the bundled model
}{
	{"stories260K", nil},
	{"synth125M-Q8_0", &synth.Spec{Arch: "llama", Dim: 768, Layers: 12, Heads: 12, FFN: 3072, Vocab: 32000, Ctx: 2048, Type: quant.Q8_0, Seed: 1}},
	{"synth125M-Q8_0-norepack", &synth.Spec{Arch: "llama", Dim: 768, Layers: 12, Heads: 12, FFN: 3072, Vocab: 32000, Ctx: 2048, Type: quant.Q8_0, Seed: 1}},
	{"synth125M-Q4_K", &synth.Spec{Arch: "llama", Dim: 768, Layers: 12, Heads: 12, FFN: 3072, Vocab: 32000, Ctx: 2048, Type: quant.Q4_K, Seed: 1}},
}

var (
	benchDirOnce sync.Once
	benchDir     string
	benchFiles   sync.Map // name -> path
)

// benchModelPath returns the file of a synthetic benchmark model, writing
// it on first use.
func benchModelPath(b *testing.B, name string, sp synth.Spec) string {
	b.Helper()
	benchDirOnce.Do(func() {
		d, err := os.MkdirTemp("", "tokenpulse-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	})
	if p, ok := benchFiles.Load(name); ok {
		return p.(string)
	}
	path := filepath.Join(benchDir, name+".gguf")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := synth.Write(w, sp); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	benchFiles.Store(name, path)
	return path
}

// TestMain removes the synthesised benchmark models.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func benchLoad(b *testing.B, i int, ctx int) *Model {
	b.Helper()
	bm := benchModels[i]
	path := ""
	file, noRepack := strings.CutSuffix(bm.name, "-norepack")
	if bm.spec != nil {
		path = benchModelPath(b, file, *bm.spec)
	} else {
		ctx = 0 // the model's own 128
	}
	// Reset the peak RSS (VmHWM) so each benchmark reports its own.
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	// Threads follow -cpu (GOMAXPROCS): go test -bench Decode -cpu 1,2.
	m := loadModel(b, path, Options{Ctx: ctx, Threads: runtime.GOMAXPROCS(0), NoRepack: noRepack})
	if _, err := m.Warmup(b.Context()); err != nil {
		b.Fatal(err)
	}
	return m
}

// peakRSS returns the process's peak resident set (VmHWM) in MiB, or 0
// where /proc is absent.
func peakRSS() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkDecode measures one decode step (forward of one token at a
// growing position, then greedy sampling) per op: tok/s, µs/token, the
// standard deviation of the per-token time as a percentage of its mean,
// and the peak RSS.
func BenchmarkDecode(b *testing.B) {
	for i, bm := range benchModels {
		b.Run(bm.name, func(b *testing.B) {
			m := benchLoad(b, i, 512)
			s := m.NewSession()
			prompt := []int32{1, 403, 407, 261, 378}
			for p := 0; p < len(prompt); p++ {
				m.forward(s.st, prompt[p:p+1], p, true, nil)
			}
			pos := len(prompt)
			durs := make([]float64, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for n := 0; n < b.N; n++ {
				t0 := time.Now()
				s.one[0] = argmax(s.st.logits)
				m.forward(s.st, s.one[:], pos, true, nil)
				durs = append(durs, float64(time.Since(t0).Nanoseconds()))
				pos++
				if pos == m.ctx {
					pos = len(prompt)
				}
			}
			b.StopTimer()
			reportTokens(b, durs)
			reportCPU(b, cpu0, b.N)
		})
	}
}

// BenchmarkPrefill measures prompt processing of 64 tokens in batches
// per op.
func BenchmarkPrefill(b *testing.B) {
	const n = 64
	for i, bm := range benchModels {
		b.Run(bm.name, func(b *testing.B) {
			m := benchLoad(b, i, 512)
			s := m.NewSession()
			prompt := make([]int32, n)
			for j := range prompt {
				prompt[j] = int32(3 + j*7%(m.cfg.Vocab-3))
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for k := 0; k < b.N; k++ {
				for pos := 0; pos < n; pos += m.batch {
					e := min(pos+m.batch, n)
					m.forward(s.st, prompt[pos:e], pos, e == n, nil)
				}
			}
			b.StopTimer()
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(n/sec, "tok/s")
			b.ReportMetric(sec*1e6/n, "µs/token")
			b.ReportMetric(peakRSS(), "peakRSS-MiB")
			reportCPU(b, cpu0, b.N*n)
		})
	}
}

func reportTokens(b *testing.B, durs []float64) {
	var sum float64
	for _, d := range durs {
		sum += d
	}
	mean := sum / float64(len(durs))
	var ss float64
	for _, d := range durs {
		ss += (d - mean) * (d - mean)
	}
	std := 0.0
	if len(durs) > 1 {
		std = math.Sqrt(ss / float64(len(durs)-1))
	}
	b.ReportMetric(1e9/mean, "tok/s")
	b.ReportMetric(mean/1e3, "µs/token")
	b.ReportMetric(100*std/mean, "std%")
	// Low quantiles of the per-token time: on a shared machine the mean
	// carries every token another process delayed; the 10th percentile
	// shows the speed of the tokens nothing disturbed (compare runs of the
	// same positions).
	sorted := slices.Clone(durs)
	slices.Sort(sorted)
	b.ReportMetric(sorted[len(sorted)/10]/1e3, "p10-µs/token")
	b.ReportMetric(sorted[len(sorted)/2]/1e3, "p50-µs/token")
	b.ReportMetric(peakRSS(), "peakRSS-MiB")
}

// reportCPU reports the CPU time per token summed over all threads: on a
// shared machine it shows the work done apart from the time spent waiting
// for a core.
func reportCPU(b *testing.B, cpu0 int64, tokens int) {
	if cpu0 == 0 || tokens == 0 {
		return
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e3/float64(tokens), "cpu-µs/token")
}
