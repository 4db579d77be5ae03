//go:build linux

package quant

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkX16Prefill runs each assembly implementation of the 16-row
// Q4_0 and Q8_0 layouts on a prefill's shape: a batch of 256 tokens
// against 256 rows of 896 elements (the 0.5B model's width), about the
// tile of weights the engine hands a matrix-product kernel at a time
// (mulRowsQ's 256 KiB), which stays in the L2 cache. Besides the wall-clock rate it
// reports cpuGMAC/s, multiply-adds per nanosecond of this thread's CPU
// time, which a busy machine descheduling the benchmark does not skew.
func BenchmarkX16Prefill(b *testing.B) {
	const n, rows, batch = 896, 256, 256
	for i := range x16Layouts[:2] {
		l := &x16Layouts[i]
		for _, im := range x16AsmImpls(l.typ) {
			b.Run(fmt.Sprintf("%v/%s", l.typ, im.name), func(b *testing.B) {
				r := rand.New(rand.NewPCG(3, 4))
				nb := n / 32
				w := make([]byte, rows*nb*l.fileBytes)
				l.repack(w, l.randRows(r, nb, rows), n)
				ldx := nb * x16ActBytes
				xq := make([]byte, batch*ldx)
				for t := 0; t < batch; t++ {
					l.quantize(xq[t*ldx:], randActs(r, n))
				}
				out := make([]float32, batch*rows)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var ru0, ru1 unix.Rusage
				if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru0); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					im.f(out, rows, xq, ldx, batch, w, nb)
				}
				if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru1); err != nil {
					b.Fatal(err)
				}
				cpu := (ru1.Utime.Nano() + ru1.Stime.Nano()) - (ru0.Utime.Nano() + ru0.Stime.Nano())
				b.ReportMetric(float64(n*rows*batch)*float64(b.N)/float64(cpu), "cpuGMAC/s")
			})
		}
	}
}
