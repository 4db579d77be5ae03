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
// engine: each op generates the same 64 greedy tokens twice, without and
// with a CPU profile running, in turn first (written to io.Discard; starting and
// stopping it are not timed), so that a noisy machine's spells fall on
// both alike; on/off is the ratio of their times:
//
//	go test ./internal/profiling -run - -bench ProfileOverhead -count 6
//
// TOKENPULSE_BENCH_MODEL names another GGUF file (default: the bundled
// model).
func BenchmarkProfileOverhead(b *testing.B) {
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
	timed := func() time.Duration { t0 := time.Now(); gen(); return time.Since(t0) }
	profiled := func() time.Duration {
		if err := pprof.StartCPUProfile(io.Discard); err != nil {
			b.Skip(err)
		}
		defer pprof.StopCPUProfile()
		return timed()
	}
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so that neither is always second.
		if i%2 == 0 {
			off += timed()
			on += profiled()
		} else {
			on += profiled()
			off += timed()
		}
	}
	b.ReportMetric(float64(off.Nanoseconds())/float64(b.N), "ns-off/op")
	b.ReportMetric(float64(on.Nanoseconds())/float64(b.N), "ns-on/op")
	b.ReportMetric(float64(on)/float64(off), "on/off")
}
