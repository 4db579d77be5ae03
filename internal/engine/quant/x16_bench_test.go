//go:build linux

package quant

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkX16Prefill is a prefill's matrix product on one thread: 64
// tokens against a 2048×2048 matrix (the 1B models' attention widths), on
// the file's layout (DotQRows token by token) and on the type's 16-row
// layout (MatMulQ) where this CPU has one. Besides the wall-clock rate
// it reports cpu-tok/s, tokens per second of this thread's CPU time,
// which a busy machine descheduling the benchmark does not skew.
func BenchmarkX16Prefill(b *testing.B) {
	const n, rows, batch = 2048, 2048, 64
	for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q6_K} {
		for _, rearranged := range []bool{false, true} {
			k, _ := Lookup(typ)
			rp := Repacked(typ, rows)
			name := typ.String() + "-file"
			if rearranged {
				if rp == nil || rp.Rows != x16Rows {
					continue
				}
				name = typ.String() + "-" + rp.Name + "-16"
			}
			b.Run(name, func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				rb := n / k.BlockSize * k.BlockBytes
				w := make([]byte, rb*rows)
				src := make([]float32, n)
				for i := 0; i < rows; i++ {
					for j := range src {
						src[j] = float32(r.NormFloat64())
					}
					k.Quantize(w[i*rb:(i+1)*rb], src)
				}
				if rearranged {
					rp.Repack(w, append([]byte(nil), w...), n)
					k = rp.Kernel
				}
				ldx := k.ActRowBytes(n)
				xq := make([]byte, batch*ldx)
				for t := 0; t < batch; t++ {
					k.QuantizeAct(xq[t*ldx:(t+1)*ldx], randActs(r, n))
				}
				out := make([]float32, batch*rows)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := threadCPU(b)
				for b.Loop() {
					if rearranged {
						k.MatMulQ(out, rows, xq, ldx, batch, w)
						continue
					}
					for t := 0; t < batch; t++ {
						k.DotQRows(out[t*rows:(t+1)*rows], xq[t*ldx:(t+1)*ldx], w)
					}
				}
				b.ReportMetric(float64(batch)*float64(b.N)/(float64(threadCPU(b)-cpu0)/1e9), "cpu-tok/s")
			})
		}
	}
}

// threadCPU returns this thread's CPU time in nanoseconds.
func threadCPU(b *testing.B) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
