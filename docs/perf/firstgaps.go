//go:build ignore

// firstgaps measures issue 20's item 5: whether the first decode steps
// after a batched prefill are slower than later ones, and whether that
// depends on how the prompt was prefilled. For each prefill batch size
// it loads the model (engine.Load with that BatchSize), and in each
// round, for each model in turn, runs a fresh prompt of -prompt tokens
// and decodes -n greedy tokens, timing every decode step (the gap from
// one token's emit to the next's). It prints, per batch size, the median
// over rounds of each of the first steps and of the steps from -settle
// on, and each first step's ratio to that settled median. Rounds
// interleave the batch sizes so that a noisy spell of a shared machine
// falls on all alike.
//
//	go run docs/perf/firstgaps.go -model 125m-q4_k.gguf -threads 1
//	go run docs/perf/firstgaps.go -model 05b-q4_0.gguf -batches 1,8,32 -rounds 30
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/engine"
)

func main() {
	model := flag.String("model", "", "GGUF file (default: the bundled model)")
	threads := flag.Int("threads", 1, "engine threads")
	batches := flag.String("batches", "1,32", "prefill batch sizes, comma-separated")
	promptLen := flag.Int("prompt", 80, "prompt tokens")
	n := flag.Int("n", 40, "tokens decoded a round")
	rounds := flag.Int("rounds", 20, "rounds")
	first := flag.Int("first", 6, "first steps printed one by one")
	settle := flag.Int("settle", 20, "steps from this one on are the settled ones")
	pause := flag.Duration("pause", 0, "sleep between prefill and decode (a test of the CPU clock idea)")
	probe := flag.Bool("probe", false, "time a fixed integer loop right after the prefill and after the last step, to tell a slower clock (the loop slows too) from colder caches (it does not)")
	flag.Parse()
	if *settle >= *n || *first >= *settle {
		log.Fatal("want -first < -settle < -n")
	}

	var sizes []int
	for _, f := range strings.Split(*batches, ",") {
		b, err := strconv.Atoi(f)
		if err != nil || b < 1 {
			log.Fatalf("bad batch size %q", f)
		}
		sizes = append(sizes, b)
	}
	sessions := make([]*engine.Session, len(sizes))
	for i, b := range sizes {
		m, err := engine.Load(context.Background(), engine.Options{ModelPath: *model, Threads: *threads, BatchSize: b, Ctx: *promptLen + *n + 8})
		if err != nil {
			log.Fatal(err)
		}
		if _, err := m.Warmup(context.Background()); err != nil {
			log.Fatal(err)
		}
		sessions[i] = m.NewSession()
	}
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		return strings.Join(strings.Fields(string(b))[:3], " ")
	}
	fmt.Printf("load average %s; %d-token prompt, %d decoded, %d threads\n", load(), *promptLen, *n, *threads)

	// steps[i][k] holds decode step k's durations over rounds; probes[i]
	// the probe loop's after the prefill and after the last step.
	steps := make([][][]float64, len(sizes))
	probes := make([][2][]float64, len(sizes))
	for i := range steps {
		steps[i] = make([][]float64, *n-1)
	}
	for r := range *rounds {
		for i, s := range sessions {
			// A prompt unlike the last one's, so nothing is reused.
			prompt := make([]int32, *promptLen)
			for k := range prompt {
				prompt[k] = int32(3 + (r*7919+k*104729)%250)
			}
			var at []time.Time
			_, err := s.Generate(context.Background(), prompt, engine.Params{MaxTokens: *n, IgnoreEOS: true}, func(engine.Token) error {
				if len(at) == 0 && *pause > 0 {
					time.Sleep(*pause)
				}
				if *probe && (len(at) == 0 || len(at) == *n-1) {
					k := min(len(at), 1)
					probes[i][k] = append(probes[i][k], spin())
				}
				at = append(at, time.Now())
				return nil
			})
			if err != nil {
				log.Fatal(err)
			}
			for k := 1; k < len(at); k++ {
				steps[i][k-1] = append(steps[i][k-1], float64(at[k].Sub(at[k-1]))/1e6)
			}
		}
	}
	fmt.Printf("%-6s", "batch")
	for k := 1; k <= *first; k++ {
		fmt.Printf(" %14s", fmt.Sprintf("step %d ms", k))
	}
	fmt.Printf(" %14s\n", fmt.Sprintf("steps %d+ ms", *settle))
	for i, b := range sizes {
		var settled []float64
		for k := *settle - 1; k < len(steps[i]); k++ {
			settled = append(settled, median(steps[i][k]))
		}
		base := median(settled)
		fmt.Printf("%-6d", b)
		for k := 0; k < *first; k++ {
			m := median(steps[i][k])
			fmt.Printf(" %14s", fmt.Sprintf("%.2f (%.2fx)", m, m/base))
		}
		fmt.Printf(" %14.2f\n", base)
	}
	if *probe {
		fmt.Println("probe loop ms (the same integer work): right after the prefill, after the last step")
		for i, b := range sizes {
			fmt.Printf("%-6d %8.3f %8.3f (%.2fx)\n", b, median(probes[i][0]), median(probes[i][1]), median(probes[i][0])/median(probes[i][1]))
		}
	}
	fmt.Printf("load average %s\n", load())
}

// spinSink keeps the probe loop from being optimised away.
var spinSink uint64

// spin runs a fixed chain of dependent integer operations (about a
// millisecond at 3 GHz) and returns its duration in ms: its time scales
// with the core's clock and with nothing in memory.
func spin() float64 {
	t := time.Now()
	x := spinSink | 1
	for range 1 << 20 {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	spinSink = x
	return float64(time.Since(t)) / 1e6
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
