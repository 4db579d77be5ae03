package profiling_test

import (
	"context"
	"io"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/engine"
)

// BenchmarkProfileOverhead is what a CPU profile costs the embedded
// engine over a run: each op generates the same 64 greedy tokens
// blockSize times without a profile and blockSize times with one running
// (started before the block, stopped after it, neither timed; written to
// io.Discard), the two blocks in turn first, so that a noisy machine's
// spells fall on both alike; on/off is the ratio of their times. A block
// rather than one generation: the profiler's first moments (its buffers,
// its writer goroutine) belong to the start of a run, not to every token.
//
//	go test ./internal/profiling -run - -bench ProfileOverhead -count 6
//
// TOKENPULSE_BENCH_MODEL names another GGUF file (default: the bundled
// model).
func BenchmarkProfileOverhead(b *testing.B) {
	const blockSize = 20
	m, err := engine.Load(context.Background(), engine.Options{ModelPath: os.Getenv("TOKENPULSE_BENCH_MODEL"), Ctx: 256})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	s := m.NewSession()
	prompt := []int32{1, 403, 407, 261, 378}
	gen := func() {
		if _, err := s.Generate(context.Background(), prompt, engine.Params{MaxTokens: 64}, func(engine.Token) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	gen() // page the weights in
	var off, on time.Duration
	block := func() time.Duration {
		t0 := time.Now()
		for range blockSize {
			gen()
		}
		return time.Since(t0)
	}
	profiled := func() time.Duration {
		if err := pprof.StartCPUProfile(io.Discard); err != nil {
			b.Skip(err)
		}
		defer pprof.StopCPUProfile()
		return block()
	}
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so that neither is always second.
		if i%2 == 0 {
			off += block()
			on += profiled()
		} else {
			on += profiled()
			off += block()
		}
	}
	b.ReportMetric(float64(off.Nanoseconds())/float64(b.N*blockSize), "ns-off/gen")
	b.ReportMetric(float64(on.Nanoseconds())/float64(b.N*blockSize), "ns-on/gen")
	b.ReportMetric(float64(on)/float64(off), "on/off")
}
