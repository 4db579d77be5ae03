//go:build ignore

// mooncake-sample writes a Mooncake-format trace (JSONL, one request a
// line) for bench --trace to replay: bursty arrivals (gamma
// inter-arrivals of shape 0.5 at -rate requests/s), prompt and answer
// lengths that fit the bundled model's context of 512 tokens, and users
// whose requests share their first 512-token block (the same hash id),
// as a chat session's system prompt and history would.
//
//	go run docs/perf/mooncake-sample.go -n 200 -rate 4 > sample.jsonl
//	tokenpulse bench --trace sample.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
)

func main() {
	n := flag.Int("n", 200, "requests")
	rate := flag.Float64("rate", 4, "mean arrival rate, requests/s")
	users := flag.Int("users", 12, "users; a user's requests share their first block")
	maxIn := flag.Int("max-input", 360, "longest prompt, tokens")
	maxOut := flag.Int("max-output", 120, "longest answer, tokens")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	rng := rand.New(rand.NewPCG(*seed, 0x6d6f6f6e63616b65))
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	const shape = 0.5 // burstier than Poisson: coefficient of variation √2
	t := 0.0
	next := 1000 // hash ids of blocks no one shares
	for range *n {
		user := rng.IntN(*users)
		in := 32 + rng.IntN(*maxIn-31)
		out := 8 + rng.IntN(*maxOut-7)
		// Two requests in three continue a user's session (shared
		// first block); the rest start afresh.
		id := user
		if rng.IntN(3) == 0 {
			id, next = next, next+1
		}
		enc.Encode(map[string]any{
			"timestamp": math.Round(t), "input_length": in, "output_length": out,
			"hash_ids": []int{id},
		})
		t += gamma(rng, shape) / shape / *rate * 1000
	}
}

// gamma draws a gamma variate of the given shape (< 1) and scale 1:
// Marsaglia and Tsang's method on shape+1, boosted by U^(1/shape).
func gamma(rng *rand.Rand, shape float64) float64 {
	d := shape + 1 - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v * math.Pow(1-rng.Float64(), 1/shape)
		}
	}
}
