package bench_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// Run a workload — a cold request, a warm-up and a seeded sample of a
// suite, two in flight — and get one record per request, the run file's.
// The target is tokenpulse's mock, in process.
func ExampleRunWorkload() {
	url, stop, err := mock.Serve(mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 5})
	if err != nil {
		panic(err)
	}
	defer stop()

	s, err := suite.Parse("two", []byte(`
name: two
language: en
categories:
  - {name: facts, weight: 2, max_tokens: 8, prompts: [{id: sky, text: "What colour is the sky?"}]}
  - {name: chat, weight: 1, max_tokens: 8, prompts: [{id: hello, text: "Say hello."}]}
`))
	if err != nil {
		panic(err)
	}
	cfg := bench.Config{Client: &stream.Client{BaseURL: url, Model: mock.ModelName}}
	w := bench.Workload{Suite: s, Requests: 6, Warmup: 1, Cold: true, Seed: 7, Concurrency: 2}
	res, err := bench.RunWorkload(context.Background(), cfg, w)
	if err != nil {
		panic(err)
	}
	var cold, warmup, measured, ok int
	for _, r := range res.Requests {
		switch {
		case r.Cold:
			cold++
		case r.Warmup:
			warmup++
		default:
			measured++
		}
		if r.OK() && r.OutputTokens == 5 && len(r.TokenTimesNS) == 5 {
			ok++
		}
	}
	fmt.Printf("%d cold, %d warm-up, %d measured; %d of %d streamed 5 tokens\n", cold, warmup, measured, ok, len(res.Requests))
	// Output:
	// 1 cold, 1 warm-up, 6 measured; 8 of 8 streamed 5 tokens
}

// An open loop: requests due on a seeded Poisson schedule whatever became
// of those before them. The schedule is the same for the same seed.
func ExampleArrival_Schedule() {
	a := bench.Arrival{Process: bench.ArrivalPoisson, Rate: 10, Max: 5}
	s1, err := a.Schedule(42)
	if err != nil {
		panic(err)
	}
	s2, _ := a.Schedule(42)
	fmt.Println(len(s1), "arrivals, the first at", s1[0])
	fmt.Println("same seed, same schedule:", fmt.Sprint(s1) == fmt.Sprint(s2))

	_, err = bench.Arrival{Process: bench.ArrivalGamma, Rate: 10, Max: 5}.Schedule(42)
	fmt.Println(err)
	// Output:
	// 5 arrivals, the first at 0s
	// same seed, same schedule: true
	// the burstiness must be a finite number > 0, not 0
}
