package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refProbs is the distribution sampling must follow, computed the plain
// way: sort all tokens (logit descending, id ascending on ties), keep the
// top k, softmax in float64, keep the prefix min-p keeps and the prefix
// whose mass reaches TopP, renormalise.
func refProbs(logits []float32, p Params) []float64 {
	ids := make([]int, len(logits))
	for i := range ids {
		ids[i] = i
	}
	slices.SortFunc(ids, func(a, b int) int {
		if c := cmp.Compare(logits[b], logits[a]); c != 0 {
			return c
		}
		return a - b
	})
	if p.TopK > 0 && p.TopK < len(ids) {
		ids = ids[:p.TopK]
	}
	w := make([]float64, len(ids))
	var z float64
	for i, id := range ids {
		w[i] = math.Exp((float64(logits[id]) - float64(logits[ids[0]])) / float64(p.Temperature))
		z += w[i]
	}
	n := len(ids)
	if p.MinP > 0 {
		m := 1
		for m < n && w[m] >= float64(p.MinP) {
			m++
		}
		n = m
	}
	if p.TopP > 0 && p.TopP < 1 {
		var cum float64
		m := 0
		for m < len(ids) {
			cum += w[m] / z
			m++
			if cum >= float64(p.TopP) {
				break
			}
		}
		n = min(n, m)
	}
	probs := make([]float64, len(logits))
	var kept float64
	for _, x := range w[:n] {
		kept += x
	}
	for i, id := range ids[:n] {
		probs[id] = w[i] / kept
	}
	return probs
}

// chiSquareCritical is the chi-square value a correct sampler exceeds with
// probability about 3e-5 (z = 4, Wilson–Hilferty).
func chiSquareCritical(df int) float64 {
	d := float64(df)
	h := 2 / (9 * d)
	return d * math.Pow(1-h+4*math.Sqrt(h), 3)
}

// checkDistribution draws n tokens (seeded, so the test is repeatable) and
// fails if a token outside the support comes out, or if the counts are
// further from the reference than chi-square allows.
func checkDistribution(t *testing.T, logits []float32, p Params, n int) {
	t.Helper()
	want := refProbs(logits, p)
	smp := newSampler(len(logits))
	smp.seed(12345)
	counts := make([]int, len(logits))
	l := slices.Clone(logits)
	for range n {
		counts[smp.sample(l, &p, nil)]++
	}
	// Chi-square over bins of consecutive tokens expecting at least 20
	// draws each (a token alone when it expects that many).
	var chi2, e, o float64
	df := -1
	for i, c := range counts {
		if want[i] == 0 {
			if c != 0 {
				t.Errorf("token %d (probability 0) drawn %d times", i, c)
			}
			continue
		}
		e += want[i] * float64(n)
		o += float64(c)
		if e >= 20 {
			chi2 += (o - e) * (o - e) / e
			df++
			e, o = 0, 0
		}
	}
	if e > 0 { // the remainder: a bin of its own, under 20 but not empty
		chi2 += (o - e) * (o - e) / e
		df++
	}
	if df == 0 {
		return // one token: nothing to compare
	}
	if crit := chiSquareCritical(df); chi2 > crit {
		t.Errorf("chi-square %.1f over %d degrees of freedom > %.1f: counts do not follow the softmax", chi2, df, crit)
	}
}

// TestSampleDistribution holds every sampling path to the exact softmax:
// chi-square over many seeded draws against refProbs. The logits' gaps are
// not multiples of ln 2, so the bound the default path draws from (off by
// up to 6%, by a different factor for each token) would not pass for the
// softmax.
func TestSampleDistribution(t *testing.T) {
	small := []float32{2.0, 1.7, 1.3, 1.05, 0.6, 0.2, -0.3, -0.9, -1.45, -2.2, -3.1, -4.05}
	// A vocabulary over several sum blocks (the last one partial), with
	// runs of equal logits (ties at the top-k and top-p edges) and a tail
	// min-p drops.
	large := make([]float32, 3*sumBlock+77)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range large {
		large[i] = float32(r.IntN(12)) * 0.37
	}
	for i := 200; i < 2*sumBlock+30; i++ {
		large[i] = -9 // whole blocks of near-zero weight
	}
	cases := []struct {
		name   string
		logits []float32
		p      Params
		draws  int
	}{
		{"T=1", small, Params{Temperature: 1}, 200000},
		{"T=0.6", small, Params{Temperature: 0.6}, 200000},
		{"T=2.5", small, Params{Temperature: 2.5}, 200000},
		{"min-p 0.1", small, Params{Temperature: 1, MinP: 0.1}, 200000},
		{"top-k 5", small, Params{Temperature: 1.3, TopK: 5}, 200000},
		{"top-p 0.8", small, Params{Temperature: 1, TopP: 0.8}, 200000},
		{"top-p 0.95 T=2", small, Params{Temperature: 2, TopP: 0.95}, 200000},
		{"top-k 8 top-p 0.9", small, Params{Temperature: 1, TopK: 8, TopP: 0.9}, 200000},
		{"min-p 0.3 top-p 0.9", small, Params{Temperature: 1, MinP: 0.3, TopP: 0.9}, 200000},
		{"large T=1", large, Params{Temperature: 1}, 100000},
		{"large T=0.8 min-p 0.2", large, Params{Temperature: 0.8, MinP: 0.2}, 100000},
		{"large top-k 100", large, Params{Temperature: 1, TopK: 100}, 100000},
		{"large top-p 0.5", large, Params{Temperature: 1, TopP: 0.5}, 100000},
		{"large top-p 0.9 T=1.5", large, Params{Temperature: 1.5, TopP: 0.9}, 100000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkDistribution(t, c.logits, c.p, c.draws)
		})
	}
}

// TestSampleTies: equal logits are ranked by id, so top-k and top-p keep
// the first tokens, as the sort did.
func TestSampleTies(t *testing.T) {
	logits := []float32{1, 1, 1, 1, 1, 1, 1, 1}
	cases := []struct {
		p    Params
		want int // tokens 0..want-1, each equally likely
	}{
		{Params{Temperature: 1, TopK: 3}, 3},
		{Params{Temperature: 1, TopP: 0.5}, 4},  // 4 × 1/8 reaches 0.5 exactly
		{Params{Temperature: 1, TopP: 0.51}, 5}, // one more
		{Params{Temperature: 1, TopK: 6, TopP: 0.5}, 3},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c.p), func(t *testing.T) {
			want := refProbs(logits, c.p)
			for i, p := range want {
				if (i < c.want) != (p > 0) {
					t.Fatalf("reference %v, want the first %d tokens", want, c.want)
				}
			}
			checkDistribution(t, logits, c.p, 40000)
		})
	}
}

// TestSampleSeeded: greedy is the argmax; sampling with the same seed gives
// the same tokens, another seed other tokens.
func TestSampleSeeded(t *testing.T) {
	logits := benchLogits(5000)
	modes := []Params{
		{},
		{Temperature: 1},
		{Temperature: 0.7, MinP: 0.05},
		{Temperature: 1, TopK: 40},
		{Temperature: 1, TopP: 0.9},
		{Temperature: 0.8, TopK: 40, TopP: 0.9},
	}
	run := func(p Params, seed uint64) []int32 {
		smp := newSampler(len(logits))
		smp.seed(seed)
		out := make([]int32, 200)
		for i := range out {
			out[i] = smp.sample(logits, &p, nil)
		}
		return out
	}
	for _, p := range modes {
		a, b, c := run(p, 7), run(p, 7), run(p, 8)
		if !slices.Equal(a, b) {
			t.Errorf("%+v: seed 7 twice gave different tokens", p)
		}
		if p.Temperature == 0 {
			if i := slices.IndexFunc(a, func(x int32) bool { return x != argmax(logits) }); i >= 0 {
				t.Errorf("greedy token %d is %d, want the argmax %d", i, a[i], argmax(logits))
			}
			continue
		}
		if slices.Equal(a, c) {
			t.Errorf("%+v: seeds 7 and 8 gave the same 200 tokens", p)
		}
	}
}

// TestSampleAllocatesNothing: a token costs no allocation at a real
// vocabulary size, on every path.
func TestSampleAllocatesNothing(t *testing.T) {
	logits := benchLogits(32000)
	smp := newSampler(len(logits))
	for _, p := range []Params{
		{Temperature: 1},
		{Temperature: 1, MinP: 0.05},
		{Temperature: 1, TopK: 40},
		{Temperature: 1, TopP: 0.9},
		{Temperature: 1, TopK: 40, TopP: 0.9, MinP: 0.05},
		{Temperature: 1, RepeatPenalty: 1.1},
	} {
		recent := []int32{1, 2, 3, 2}
		if a := testing.AllocsPerRun(20, func() { smp.sample(logits, &p, recent) }); a != 0 {
			t.Errorf("%+v: %v allocations per token", p, a)
		}
	}
}

// TestSampleExpNeg: the exponential of the top-p and top-k weights is
// within one float32 ulp of math.Exp, 1 at 0, and 0 for -Inf, NaN and
// below -87.
func TestSampleExpNeg(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	check := func(x float32) {
		got, want := expNeg(x), float32(math.Exp(float64(x)))
		if d := math.Float32bits(got) - math.Float32bits(want); d+1 > 2 {
			t.Fatalf("expNeg(%v) = %v, math.Exp %v", x, got, want)
		}
	}
	for i := range 1000000 {
		check(-87 * float32(i) / 1000000)
		check(-float32(r.Float64() * 87))
		check(-float32(r.Float64() * 1e-3))
	}
	// expWeights is expNeg written out: the same bits, and their sum.
	l := make([]float32, 20000)
	for i := range l {
		l[i] = float32(r.Float64()*100 - 95)
	}
	l[0] = 5 // the maximum
	w := make([]float32, len(l))
	sum := expWeights(w, l, 5, 1)
	var want float64
	for i, v := range l {
		if e := expNeg(v - 5); w[i] != e {
			t.Fatalf("expWeights: e^%v = %v, expNeg %v", v-5, w[i], e)
		}
		want += float64(w[i])
	}
	if sum != want {
		t.Errorf("expWeights sum %v, want %v", sum, want)
	}
	if got := expNeg(0); got != 1 {
		t.Errorf("expNeg(0) = %v, want 1", got)
	}
	for _, x := range []float32{-87.0001, -100, float32(math.Inf(-1)), float32(math.NaN())} {
		if got := expNeg(x); got != 0 {
			t.Errorf("expNeg(%v) = %v, want 0", x, got)
		}
	}
}

// TestSampleExpBound: the default path is exact only if expBound is an
// upper bound of e^x; it is efficient because it is a tight one.
func TestSampleExpBound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	worst := 1.0
	check := func(x float32) {
		b, e := float64(expBound(x)), math.Exp(float64(x))
		if b < e {
			t.Fatalf("expBound(%v) = %v < e^x = %v", x, b, e)
		}
		worst = max(worst, b/e)
	}
	for i := range 1000000 {
		check(-87 * float32(i) / 1000000)
		check(-float32(r.Float64() * 87))
		check(-float32(r.Float64() * 1e-3))
		// Near each power of two of e^x, where the bound is tightest.
		k := -float32(r.IntN(126))
		check((k + float32(r.Float64()*1e-4-5e-5)) * float32(math.Ln2))
	}
	for x := float32(0); x >= -87; x = math.Nextafter32(x, -1) * 1.0001 {
		check(x)
	}
	if worst > 1.0616 {
		t.Errorf("expBound is up to %v × e^x, want at most 1.0616", worst)
	}
}
