package runner_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// Measure a run of a suite against an endpoint (here tokenpulse's mock,
// in process), judge it by the suite's thresholds, one of your own, a
// device tier and the error budget, and write its run.json.
func ExampleMeasure() {
	url, stop := startMock()
	defer stop()

	s, err := suite.Parse("mini", []byte(`
name: mini
language: en
categories:
  - name: short
    weight: 1
    max_tokens: 8
    thresholds: ["ttft.p95 < 5s"]
    prompts:
      - id: capital
        text: What is the capital of France?
`))
	if err != nil {
		panic(err)
	}
	rules, err := gate.Policy{Thresholds: []string{"e2e.p99 < 10s"}, Tier: "entry"}.Resolve()
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "tokenpulse-example")
	defer os.RemoveAll(dir)

	res, err := runner.Measure(context.Background(), runner.Spec{
		Suite:    s,
		Workload: bench.Workload{Requests: 5, Concurrency: 1, Seed: 1, Cold: true},
		Client:   &stream.Client{BaseURL: url, Model: mock.ModelName},
		Rules:    rules,
		Dir:      dir,
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d warm requests, %d cold\n", res.Run.Summary.Overall.Requests, res.Run.Summary.Cold.Requests)
	for _, v := range res.Run.Verdicts {
		fmt.Printf("[%s] %s passed=%v\n", v.Scope, v.Rule, v.Passed)
	}
	fmt.Println("all passed:", gate.Passed(res.Run.Verdicts))
	// Output:
	// 5 warm requests, 1 cold
	// [category:short] ttft.p95 < 5s passed=true
	// [overall] e2e.p99 < 10s passed=true
	// [overall] errors.rate <= 1% passed=true
	// [overall] ttft.p95 <= 420ms passed=true
	// [overall] gap.p95 <= 130ms passed=true
	// all passed: true
}

// startMock serves tokenpulse's mock on a loopback port.
func startMock() (url string, stop func()) {
	url, stop, err := mock.Serve(mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 6, TokensPerEvent: 1})
	if err != nil {
		panic(err)
	}
	return url, stop
}
