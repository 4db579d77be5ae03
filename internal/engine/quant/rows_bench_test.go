//go:build linux

package quant

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// benchBigRows is the number of rows BenchmarkDotQRowsBig streams: 196608
// rows of 768 Q8_0 elements are 160 MB, about the 125M model's weights.
var benchBigRows = 196608

// BenchmarkDotQRowsBig streams a weight matrix far larger than the L2
// cache (768-element rows, as the 125M model's projections) the way
// decode does: every row once a pass, through DotQRows in chunks of 96
// rows, so what it measures is how well a kernel keeps memory busy
// (prefetch distance and kind). Besides the wall-clock rate it reports
// cpuGB/s, gigabytes of encoded weights per second of this thread's CPU
// time, which a busy machine descheduling the benchmark does not skew.
func BenchmarkDotQRowsBig(b *testing.B) {
	cases := []struct {
		name string
		typ  Type
		rp   *Repacker // non-nil: the rows rearranged for this kernel
	}{{"Q8_0", Q8_0, nil}, {"Q4_K", Q4_K, nil}, {"Q4_0", Q4_0, nil}, {"Q5_0", Q5_0, nil}, {"Q6_K", Q6_K, nil}}
	for _, typ := range []Type{Q8_0, Q4_0, Q5_0, Q4_K, Q6_K} {
		for _, rows := range []int{1, 16} { // the row-by-row layout, the 16-row groups
			if rp := Repacked(typ, rows); rp != nil && rp.Rows == rows {
				cases = append(cases, struct {
					name string
					typ  Type
					rp   *Repacker
				}{fmt.Sprintf("%v-%s-%d", typ, rp.Name, rp.Rows), typ, rp})
			}
		}
	}
	for _, c := range cases {
		typ := c.typ
		b.Run(c.name, func(b *testing.B) {
			k, _ := Lookup(typ)
			const n, chunk = 768, 96
			rows := benchBigRows
			rb := n / k.BlockSize * k.BlockBytes
			r := rand.New(rand.NewPCG(1, 2))
			src := make([]float32, n)
			w := make([]byte, rb*rows)
			for i := 0; i < rows; i++ {
				for j := range src {
					src[j] = float32(r.NormFloat64())
				}
				k.Quantize(w[i*rb:(i+1)*rb], src)
			}
			if c.rp != nil {
				c.rp.Repack(w, append([]byte(nil), w...), n)
				k = c.rp.Kernel
			}
			xq := make([]byte, k.ActRowBytes(n))
			k.QuantizeAct(xq, src)
			out := make([]float32, rows)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var ru0, ru1 unix.Rusage
			if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru0); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				for lo := 0; lo < rows; lo += chunk {
					k.DotQRows(out[lo:lo+chunk], xq, w[lo*rb:(lo+chunk)*rb])
				}
			}
			if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru1); err != nil {
				b.Fatal(err)
			}
			cpu := (ru1.Utime.Nano() + ru1.Stime.Nano()) - (ru0.Utime.Nano() + ru0.Stime.Nano())
			b.ReportMetric(float64(len(w))*float64(b.N)/float64(cpu), "cpuGB/s")
			b.SetBytes(int64(len(w)))
		})
	}
}
