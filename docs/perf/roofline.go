//go:build ignore

// roofline measures this machine's two limits for the embedded engine and
// the share of each that prefill and decode reach on a model file:
//
//   - int8 multiply-adds per second: the engine's own integer kernels
//     (Q8_0, Q4_0 and Q4_K, in their AVX-512 VNNI layouts where the CPU has
//     them, else AVX2, NEON or Go; row by row and batched) over weights
//     that stay in the L2 cache, one goroutine per thread; the fastest is
//     the limit. It is what our kernels reach, a floor under the
//     instruction's peak. Prefill is compute
//     bound: its share is (int8 MACs per token × prefill tok/s) / limit.
//   - streaming read bandwidth: the fastest of a plain read (the
//     runtime's memmove into a buffer that stays in L1) and the engine's
//     own Q8_0, Q4_0 and Q4_K kernels streaming weights (they prefetch, and
//     read faster than a plain loop on one core), over a buffer the size
//     of the model's weights and over a 1 GiB one, one goroutine per
//     thread.
//     Decode is bound by reading every weight once a token: its share is
//     (weight bytes per token × decode tok/s) / bandwidth.
//
// Per token, a model reads every 2-D weight except token_embd (a row
// lookup; when the output is tied to it, it is read as the output) and
// does one multiply-add per weight element; attention over the cache
// (about 2·layers·ctx·kv_dim MACs a token) is left out, so at short
// contexts the shares are a slight underestimate.
//
// Both limits are rates per second of the measuring threads' own CPU
// time (getrusage RUSAGE_THREAD), so other processes on a shared machine
// do not lower them. The engine's rates are given twice: by the wall
// clock, as a user sees them (on a loaded machine their shares are
// understated), and per second of the process's CPU time times the
// threads, the same basis as the limits (workers that spin while waiting
// count as busy, so this errs low too, less so).
//
// The engine runs in this process (engine.Load, a 256-token prompt for
// prefill, 64 greedy tokens for decode). Rounds interleave everything
// (limits and engine, each thread count) so a noisy spell of a shared
// machine falls on all alike; the table gives medians and the load
// average before and after.
//
//	go run docs/perf/roofline.go -model 05b-q4_0.gguf
//	go run docs/perf/roofline.go -model 1b-q4_k_m.gguf -threads 1,2 -rounds 5
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

func main() {
	model := flag.String("model", "", "GGUF model file")
	threadList := flag.String("threads", "1,2", "comma-separated thread counts")
	rounds := flag.Int("rounds", 3, "rounds (medians are printed)")
	dur := flag.Duration("dur", 400*time.Millisecond, "time per limit measurement")
	flag.Parse()
	if *model == "" {
		fmt.Fprintln(os.Stderr, "usage: go run docs/perf/roofline.go -model FILE.gguf [-threads 1,2] [-rounds 3]")
		os.Exit(2)
	}
	var threads []int
	for _, s := range strings.Split(*threadList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-threads %q", *threadList))
		}
		threads = append(threads, n)
	}
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), slices.Max(threads)))

	wBytes, macs, err := perToken(*model)
	if err != nil {
		fail(err)
	}
	fmt.Printf("model %s: %.1f MiB of weights read and %.3g int8 MACs per token\n", *model, float64(wBytes)/(1<<20), float64(macs))
	kern := quant.Accel()
	for _, t := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_K} {
		if r := quant.Repacked(t, 64); r != nil {
			kern += fmt.Sprintf(", %v %s", t, r.Name)
		}
	}
	fmt.Printf("kernels %s; load average %s\n", kern, loadavg())

	models := map[int]*engine.Model{}
	for _, t := range threads {
		m, err := engine.Load(context.Background(), engine.Options{ModelPath: *model, Threads: t, Ctx: 512})
		if err != nil {
			fail(err)
		}
		defer m.Close()
		models[t] = m
	}
	prompt := models[threads[0]].Tokenizer().Encode(strings.Repeat("ab ", 254), true, false)

	small, large := int(min(wBytes, 1<<30)), 1<<30
	type sample struct{ mac, bwModel, bwLarge, prefill, decode, prefillCPU, decodeCPU []float64 }
	res := map[int]*sample{}
	for _, t := range threads {
		res[t] = &sample{}
	}
	for r := 0; r < *rounds; r++ {
		for _, t := range threads {
			s := res[t]
			s.mac = append(s.mac, macRate(t, *dur))
			s.bwModel = append(s.bwModel, readRate(small, t, *dur))
			s.bwLarge = append(s.bwLarge, readRate(large, t, *dur))
			e, err := engineRates(models[t], t, prompt)
			if err != nil {
				fail(err)
			}
			s.prefill, s.decode = append(s.prefill, e.prefill), append(s.decode, e.decode)
			s.prefillCPU, s.decodeCPU = append(s.prefillCPU, e.prefillCPU), append(s.decodeCPU, e.decodeCPU)
			fmt.Fprintf(os.Stderr, "round %d, %d thread(s): %.1f GMAC/s, %.1f / %.1f GB/s, prefill %.1f (CPU %.1f) tok/s, decode %.1f (CPU %.1f) tok/s\n",
				r+1, t, last(s.mac)/1e9, last(s.bwModel)/1e9, last(s.bwLarge)/1e9, e.prefill, e.prefillCPU, e.decode, e.decodeCPU)
		}
	}
	fmt.Printf("medians of %d rounds; load average after %s\n\n", *rounds, loadavg())
	fmt.Println("| threads | int8 MAC limit | read limit (model-sized / 1 GiB) | prefill tok/s, wall (CPU) | prefill share of MAC limit, wall (CPU) | decode tok/s, wall (CPU) | decode share of model-sized read limit, wall (CPU) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, t := range threads {
		s := res[t]
		mac, bwm, bwl := median(s.mac), median(s.bwModel), median(s.bwLarge)
		p, d, pc, dc := median(s.prefill), median(s.decode), median(s.prefillCPU), median(s.decodeCPU)
		pm, dm := float64(macs), float64(wBytes)
		fmt.Printf("| %d | %.0f GMAC/s | %.1f / %.1f GB/s | %.0f (%.0f) | %.0f%% (%.0f%%) | %.1f (%.1f) | %.0f%% (%.0f%%) |\n",
			t, mac/1e9, bwm/1e9, bwl/1e9, p, pc, 100*p*pm/mac, 100*pc*pm/mac, d, dc, 100*d*dm/bwm, 100*dc*dm/bwm)
	}
}

// perToken returns the weight bytes a decode step reads and the
// multiply-adds a token costs: every 2-D tensor but token_embd, which is
// counted only when it doubles as the output (tied).
func perToken(path string) (bytes, macs uint64, err error) {
	f, err := gguf.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	_, hasOutput := f.Tensor("output.weight")
	for _, t := range f.Tensors {
		if len(t.Dims) < 2 || (t.Name == "token_embd.weight" && hasOutput) {
			continue
		}
		bytes += uint64(len(t.Data))
		macs += t.Elements()
	}
	return bytes, macs, nil
}

// rates are the engine's speeds in one run: by the wall clock, and per
// second of the process's CPU time times the threads (what it would do
// with its cores to itself; workers that spin while waiting count as
// busy, so this errs low).
type rates struct{ prefill, decode, prefillCPU, decodeCPU float64 }

// engineRates runs one prefill of prompt and 64 greedy tokens on t
// threads.
func engineRates(m *engine.Model, t int, prompt []int32) (rates, error) {
	s := m.NewSession()
	c0 := processCPU()
	var c1 time.Duration
	res, err := s.Generate(context.Background(), prompt, engine.Params{MaxTokens: 65, IgnoreEOS: true}, func(engine.Token) error {
		if c1 == 0 {
			c1 = processCPU()
		}
		return nil
	})
	c2 := processCPU()
	if err != nil {
		return rates{}, err
	}
	n := float64(res.OutputTokens - 1)
	return rates{
		prefill:    float64(res.PromptTokens) / res.Prefill.Seconds(),
		decode:     n / res.Decode.Seconds(),
		prefillCPU: float64(res.PromptTokens) / (c1 - c0).Seconds() * float64(t),
		decodeCPU:  n / (c2 - c1).Seconds() * float64(t),
	}, nil
}

// processCPU is the process's CPU time (user + system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// macRate is the int8 multiply-add rate of the fastest integer kernel
// the engine has (Q8_0, Q4_0 and Q4_K, their load-time layouts where the CPU
// has them; one input row at a time and, where there is one, the batched
// MatMulQ on 16 inputs) with t goroutines, each on its own weights (64
// rows of 4096: in L2) and inputs. Rates are per second of the
// goroutines' own CPU time (see cpuRate), and it returns the best.
func macRate(t int, dur time.Duration) float64 {
	const rows, cols, batch = 64, 4096, 16
	best := 0.0
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_K} {
		base, _ := quant.Lookup(typ)
		k := base
		var repack func(dst, src []byte, cols int)
		if r := quant.Repacked(typ, rows); r != nil {
			k, repack = r.Kernel, r.Repack
		}
		for _, batched := range []bool{false, true} {
			if batched && k.MatMulQ == nil {
				continue
			}
			best = max(best, cpuRate(t, dur, func(g int) func() float64 {
				rng := rand.New(rand.NewPCG(uint64(g), 1))
				x := make([]float32, rows*cols)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				rb := cols / base.BlockSize * base.BlockBytes
				w := make([]byte, rows*rb)
				for r := 0; r < rows; r++ {
					base.Quantize(w[r*rb:(r+1)*rb], x[r*cols:(r+1)*cols])
				}
				if repack != nil {
					p := make([]byte, len(w))
					repack(p, w, cols)
					w = p
				}
				ab := k.ActRowBytes(cols)
				xq := make([]byte, batch*ab)
				for b := 0; b < batch; b++ {
					k.QuantizeAct(xq[b*ab:(b+1)*ab], x[b*cols:(b+1)*cols])
				}
				out := make([]float32, batch*rows)
				return func() float64 {
					if batched {
						k.MatMulQ(out, rows, xq, ab, batch, w)
						return batch * rows * cols
					}
					k.DotQRows(out[:rows], xq[:ab], w)
					return rows * cols
				}
			}))
		}
	}
	return best
}

// cpuRate runs t goroutines, each on its own OS thread, calling the
// function setup(g) returns (which does some work and returns how much)
// for about dur of wall time, and returns the total work per second of
// each goroutine's own CPU time, summed: what t threads do when each has
// a core, which on a shared machine the wall clock would not show.
func cpuRate(t int, dur time.Duration, setup func(g int) func() float64) float64 {
	var wg sync.WaitGroup
	rates := make([]float64, t)
	var ready sync.WaitGroup
	ready.Add(t)
	startc := make(chan struct{})
	for g := 0; g < t; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			work := setup(g)
			work() // warm
			ready.Done()
			<-startc
			c0 := threadCPU()
			start := time.Now()
			n := 0.0
			for time.Since(start) < dur {
				n += work()
			}
			rates[g] = n / (threadCPU() - c0).Seconds()
		}()
	}
	ready.Wait()
	close(startc)
	wg.Wait()
	total := 0.0
	for _, r := range rates {
		total += r
	}
	return total
}

// threadCPU is the calling OS thread's CPU time (user + system).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		fail(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// readers are the ways readRate reads a buffer: the runtime's memmove
// (copy into a 32 KiB buffer that stays in L1; about what any plain
// loop without prefetching reaches on one core) and the engine's own
// weight kernels, Q8_0, Q4_0 and Q4_K in the layouts this CPU runs, which
// prefetch ahead and so read faster. The limit is the fastest.
var readers = []quant.Type{quant.F32, quant.Q8_0, quant.Q4_0, quant.Q4_K}

// readRate is the rate at which t goroutines read n bytes, each its own
// share over and over, by the fastest of readers, per second of their
// own CPU time (see cpuRate).
func readRate(n int, t int, dur time.Duration) float64 {
	best := 0.0
	for _, typ := range readers {
		best = max(best, cpuRate(t, dur, func(g int) func() float64 {
			size := n / t
			if typ == quant.F32 {
				part := make([]byte, size)
				for i := range part {
					part[i] = byte(i % 251) // every page written, none the zero page
				}
				dst := make([]byte, 32<<10)
				return func() float64 {
					for off := 0; off < len(part); off += len(dst) {
						copy(dst, part[off:])
					}
					return float64(len(part))
				}
			}
			const rows, cols = 64, 4096
			base, _ := quant.Lookup(typ)
			k := base
			rb := cols / base.BlockSize * base.BlockBytes
			x := make([]float32, rows*cols)
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			chunk := make([]byte, rows*rb)
			for r := 0; r < rows; r++ {
				base.Quantize(chunk[r*rb:(r+1)*rb], x[r*cols:(r+1)*cols])
			}
			if r := quant.Repacked(typ, rows); r != nil {
				k = r.Kernel
				p := make([]byte, len(chunk))
				r.Repack(p, chunk, cols)
				chunk = p
			}
			w := make([]byte, max(1, size/len(chunk))*len(chunk))
			for off := 0; off < len(w); off += len(chunk) {
				copy(w[off:], chunk)
			}
			xq := make([]byte, k.ActRowBytes(cols))
			k.QuantizeAct(xq, x[:cols])
			out := make([]float32, rows)
			return func() float64 {
				for off := 0; off < len(w); off += len(chunk) {
					k.DotQRows(out, xq, w[off:off+len(chunk)])
				}
				return float64(len(w))
			}
		}))
	}
	return best
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func last(v []float64) float64 { return v[len(v)-1] }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "roofline:", err)
	os.Exit(1)
}
