package engine

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Params control generation. The zero value decodes greedily until the
// end of the context or an end-of-generation token.
type Params struct {
	// MaxTokens caps the tokens generated; 0 means until the context is
	// full.
	MaxTokens int
	// Temperature divides the logits; 0 (or less) means greedy decoding.
	Temperature float32
	// TopK keeps the K most likely tokens; 0 keeps all.
	TopK int
	// TopP keeps the smallest set of most likely tokens whose probability
	// reaches TopP; 0 or 1 keeps all.
	TopP float32
	// MinP drops tokens less likely than MinP times the most likely one; 0
	// keeps all.
	MinP float32
	// RepeatPenalty divides positive (multiplies negative) logits of the
	// tokens seen in the last RepeatWindow tokens; 0 or 1 is off.
	RepeatPenalty float32
	// Seed makes sampling repeatable: the same seed, prompt and parameters
	// give the same tokens.
	Seed uint64
	// IgnoreEOS never samples an end-of-generation token (their logits
	// are masked), so generation runs to MaxTokens or the context's end:
	// llama.cpp's and vLLM's ignore_eos, for fixed-length load tests.
	IgnoreEOS bool
	// ReusePrefix keeps the keys and values the session's cache already
	// holds for the prompt's first tokens (the longest prefix it shares
	// with what the previous call ran: a system prompt, the earlier turns
	// of a conversation) and runs only the rest: llama-server's
	// cache_prompt, on by default there. Off, every prompt token is run.
	ReusePrefix bool
}

// RepeatWindow is how many recent tokens the repetition penalty looks at.
const RepeatWindow = 64

// How sampling stays fast without changing what it samples
//
// Sampling draws from softmax(logits/T), restricted by top-k, min-p and
// top-p. None of it sorts the vocabulary, and none of it allocates:
//
//   - Plain temperature (the server's default) and min-p: one pass for the
//     maximum, one pass that computes for every token a cheap upper bound
//     ŵ of its weight w = e^((l-max)/T) (expBound: a multiply and an
//     integer add, ŵ/w between 1 and 1.0615), stores it and sums it by
//     blocks of sumBlock tokens. The draw picks a token in proportion to ŵ
//     (walk the block sums, scan one block) and keeps it with probability
//     w/ŵ, with the exact e^x of that one token; otherwise it draws again.
//     Rejection sampling: what comes out is exactly proportional to w. The
//     order of the tokens changes which token a given uniform number picks,
//     not the distribution.
//   - Top-k: a k-element min-heap over the logits (one compare per token
//     once it holds k), then the softmax over those k, by inverse CDF.
//   - Top-p: the mass needs every exact weight: one pass computes them with
//     expNeg (within one float32 ulp of math.Exp) and a histogram of the
//     weights' float32 bit patterns (sixteen buckets an octave). Walking the
//     buckets from the top finds the one where the cumulative mass reaches
//     TopP: every token in a higher bucket is in the nucleus, and only the
//     tokens of that bucket are sorted to find where it ends.
//
// The departures from the exact distribution are rounding (the weights of
// top-k and top-p are float32, as before) and weights below e^-87 (a
// probability under 2e-38 of the most likely token's), which are 0.

// candidate is a token and its logit during sampling.
type candidate struct {
	id int32
	v  float32
}

const (
	// sumBlock is how many tokens share a block sum for the draw.
	sumBlock = 256
	// histShift keeps a float32 weight's exponent and top 4 mantissa bits
	// as its top-p bucket: 16 buckets an octave. Weights are at most 1, so
	// their bits are below 1<<30 (2.0).
	histShift   = 19
	histBuckets = 1 << (30 - histShift)
)

// sampler picks the next token from logits. Its buffers are allocated once
// per session; picking a token allocates nothing.
type sampler struct {
	cands  []candidate // (vocab) the top-k heap; the top-p nucleus
	w      []float32   // (vocab) weights exp((l-max)/T)
	blocks []float64   // (vocab/sumBlock rounded up) sums of w by block
	hist   []float64   // (histBuckets) top-p: weight by bucket
	rng    *rand.Rand
	pcg    *rand.PCG
}

func newSampler(vocab int) *sampler {
	pcg := rand.NewPCG(0, 0)
	return &sampler{
		cands:  make([]candidate, vocab),
		w:      make([]float32, vocab),
		blocks: make([]float64, (vocab+sumBlock-1)/sumBlock),
		hist:   make([]float64, histBuckets),
		pcg:    pcg,
		rng:    rand.New(pcg),
	}
}

func (s *sampler) seed(seed uint64) { s.pcg.Seed(seed, 0x9e3779b97f4a7c15) }

// argmax returns the index of the largest value (the first on ties).
func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

// maxOf returns the largest of x (not empty).
func maxOf(x []float32) float32 {
	m0, m1, m2, m3 := x[0], x[0], x[0], x[0]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		if v[0] > m0 {
			m0 = v[0]
		}
		if v[1] > m1 {
			m1 = v[1]
		}
		if v[2] > m2 {
			m2 = v[2]
		}
		if v[3] > m3 {
			m3 = v[3]
		}
	}
	for ; i < len(x); i++ {
		if x[i] > m0 {
			m0 = x[i]
		}
	}
	return max(m0, m1, m2, m3)
}

// expNeg returns e^x for x ≤ 0, within one float32 ulp of
// float32(math.Exp(x)), and 0 below -87 (and for NaN). With n the nearest
// integer to 32x/ln2, e^x = 2^(n>>5) · 2^((n&31)/32) · e^r for
// |r| ≤ ln2/64, the middle factor from a table and e^r by its Taylor series
// to degree 3 (truncation error below 6e-10 relative), in float64.
// expWeights inlines the same.
func expNeg(x float32) float32 {
	if !(x >= -87) {
		return 0
	}
	d := float64(x)
	t := d*(32*log2e) + roundMagic
	n := math.Float64bits(t) - math.Float64bits(roundMagic) // two's complement
	r := d - (t-roundMagic)*(ln2/32)
	p := exp2Frac[n&31] * (1 + r*(1+r*(1.0/2+r*(1.0/6))))
	return float32(math.Float64frombits(math.Float64bits(p) + uint64(int64(n)>>5)<<52))
}

const (
	log2e      = 1.4426950408889634
	ln2        = 0.6931471805599453
	roundMagic = 1.5 * (1 << 52) // adding it rounds to an integer, kept in the low bits
)

// exp2Frac[j] is 2^(j/32).
var exp2Frac = func() (t [32]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 32)
	}
	return t
}()

// expWeights sets w[i] = expNeg((l[i]-mx)*invT) and returns the sum of w:
// expNeg written out, as the compiler does not inline it.
func expWeights(w, l []float32, mx, invT float32) float64 {
	w = w[:len(l)]
	var sum float64
	for i, v := range l {
		x := (v - mx) * invT
		var e float32
		if x >= -87 {
			d := float64(x)
			t := d*(32*log2e) + roundMagic
			n := math.Float64bits(t) - math.Float64bits(roundMagic)
			r := d - (t-roundMagic)*(ln2/32)
			p := exp2Frac[n&31] * (1 + r*(1+r*(1.0/2+r*(1.0/6))))
			e = float32(math.Float64frombits(math.Float64bits(p) + uint64(int64(n)>>5)<<52))
		}
		w[i] = e
		sum += float64(e)
	}
	return sum
}

func byValueDesc(a, b candidate) int {
	switch {
	case a.v > b.v:
		return -1
	case a.v < b.v:
		return 1
	}
	return int(a.id - b.id)
}

// sample picks a token from logits (modified in place by the repetition
// penalty) given the recent tokens.
func (s *sampler) sample(logits []float32, p *Params, recent []int32) int32 {
	if p.RepeatPenalty > 0 && p.RepeatPenalty != 1 {
		for i, t := range recent {
			if slices.Contains(recent[:i], t) {
				continue // penalise each token once
			}
			if logits[t] > 0 {
				logits[t] /= p.RepeatPenalty
			} else {
				logits[t] *= p.RepeatPenalty
			}
		}
	}
	if p.Temperature <= 0 || p.TopK == 1 {
		return argmax(logits)
	}
	// Min-p keeps the tokens whose weight (1 for the most likely) reaches
	// MinP; above 1 it keeps the most likely, like MinP 1.
	minP := min(max(p.MinP, 0), 1)
	topP := p.TopP > 0 && p.TopP < 1
	var tok int32
	switch {
	case p.TopK > 0 && p.TopK < len(logits):
		tok = s.sampleTopK(logits, p, minP, topP)
	case topP:
		tok = s.sampleTopP(logits, p, minP)
	default:
		tok = s.sampleAll(logits, p.Temperature, minP)
	}
	if tok < 0 { // no finite weight: NaN or infinite logits
		return argmax(logits)
	}
	return tok
}

// sampleAll samples from the whole vocabulary: softmax(logits/T), less the
// tokens min-p drops. It draws a token in proportion to a bound ŵ ≥ w = e^x
// that costs a handful of instructions (expBound), then keeps it with
// probability w/ŵ, computing e^x for that one token, or draws again. A
// token comes out with probability ∝ ŵ · w/ŵ = w: the exact softmax, while
// ŵ ≤ 1.0615·w keeps more than 94% of the draws.
func (s *sampler) sampleAll(logits []float32, temp, minP float32) int32 {
	mx := maxOf(logits)
	invT := 1 / temp
	cut := float32(-87) // the weights below e^-87 (not 2e-38) are 0
	if minP > 0 {
		cut = max(cut, float32(math.Log(float64(minP))))
	}
	w := s.w[:len(logits)]
	blocks := s.blocks[:(len(logits)+sumBlock-1)/sumBlock]
	var total float64
	for b := range blocks {
		lo := b * sumBlock
		hi := min(lo+sumBlock, len(logits))
		sum := boundWeights(w[lo:hi], logits[lo:hi], mx, invT, cut)
		blocks[b] = sum
		total += sum
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return -1
	}
	for try := 0; ; try++ {
		i := drawBlocks(w, blocks, s.rng.Float64()*total)
		x := (logits[i] - mx) * invT
		// Past 64 rejections (odds below 1e-77) the bound would be broken.
		if s.rng.Float64()*float64(w[i]) < math.Exp(float64(x)) || try == 64 {
			return i
		}
	}
}

// expBound's constants: 2^y = e^x for y = x·log2(e); the float32 whose bits
// are y·2^23 + 127·2^23 is 2^⌊y⌋·(1+frac(y)) ≥ 2^y, at most
// max (1+f)/2^f = 1.0615 times 2^y. The rounding of x·boundScale (at most
// 96 units of the last place of the bits, |x| ≤ 87) and its truncation
// (towards 0, so upwards for x ≤ 0) are covered by the extra 256 units,
// 1.00003 times more.
const (
	boundScale = float32(log2e * (1 << 23))
	boundBias  = 127<<23 + 256
)

// expBound is an upper bound of e^x, -87 ≤ x ≤ 0, within 1.0615·e^x.
func expBound(x float32) float32 {
	return math.Float32frombits(uint32(int32(x*boundScale) + boundBias))
}

// boundWeights sets w[i] = expBound((l[i]-mx)*invT), or 0 where the
// argument is below cut, and returns the sum of w.
func boundWeights(w, l []float32, mx, invT, cut float32) float64 {
	w = w[:len(l)]
	var sum float64
	for i, v := range l {
		var e float32
		if x := (v - mx) * invT; x >= cut {
			e = math.Float32frombits(uint32(int32(x*boundScale) + boundBias))
		}
		w[i] = e
		sum += float64(e)
	}
	return sum
}

// drawBlocks returns the token whose interval holds r in the weights w,
// laid end to end, given their sums by block of sumBlock.
func drawBlocks(w []float32, blocks []float64, r float64) int32 {
	last := 0 // the start of the last block with weight
	for b, sum := range blocks {
		if sum == 0 {
			continue
		}
		lo := b * sumBlock
		if r < sum {
			return int32(lo) + drawIn(w[lo:min(lo+sumBlock, len(w))], r)
		}
		last = lo
		r -= sum
	}
	// Rounding left r beyond the total: the last token with weight.
	return int32(last) + drawIn(w[last:min(last+sumBlock, len(w))], math.Inf(1))
}

// drawIn returns the index in w (with some weight) where the running sum
// passes r; the last index with weight if rounding leaves r beyond the sum.
func drawIn(w []float32, r float64) int32 {
	last := int32(-1)
	for i, e := range w {
		if e == 0 {
			continue
		}
		r -= float64(e)
		last = int32(i)
		if r < 0 {
			break
		}
	}
	return last
}

// sampleTopP samples from the nucleus of the whole vocabulary: the most
// likely tokens whose mass reaches TopP (then min-p).
func (s *sampler) sampleTopP(logits []float32, p *Params, minP float32) int32 {
	mx := maxOf(logits)
	invT := 1 / p.Temperature
	w := s.w[:len(logits)]
	hist := s.hist
	clear(hist)
	total := expWeights(w, logits, mx, invT)
	for _, e := range w {
		hist[math.Float32bits(e)>>histShift] += float64(e)
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return -1
	}
	// The bucket where the mass from the top reaches TopP.
	target := float64(p.TopP) * total
	var above float64 // mass of the buckets above cut
	cut := len(hist) - 1
	for ; cut > 0; cut-- {
		if above+hist[cut] >= target {
			break
		}
		above += hist[cut]
	}
	// The nucleus: every token above the cut bucket (from the front of
	// cands), then the cut bucket's most likely until the mass reaches
	// TopP (gathered at the back, sorted).
	c := s.cands[:len(logits)]
	n, back := 0, len(c)
	for i, e := range w {
		switch b := int(math.Float32bits(e) >> histShift); {
		case b > cut:
			c[n] = candidate{int32(i), logits[i]}
			n++
		case b == cut:
			back--
			c[back] = candidate{int32(i), logits[i]}
		}
	}
	edge := c[back:]
	slices.SortFunc(edge, byValueDesc)
	cum := above
	for _, x := range edge {
		c[n] = x
		n++
		if cum += float64(w[x.id]); cum >= target {
			break
		}
	}
	c = c[:n]
	var sum float64
	for _, x := range c {
		if e := w[x.id]; e >= minP {
			sum += float64(e)
		}
	}
	r := s.rng.Float64() * sum
	last := int32(-1)
	for _, x := range c {
		if e := w[x.id]; e >= minP && e > 0 {
			r -= float64(e)
			last = x.id
			if r < 0 {
				break
			}
		}
	}
	return last
}

// sampleTopK samples from the k most likely tokens (then min-p, top-p).
func (s *sampler) sampleTopK(logits []float32, p *Params, minP float32, topP bool) int32 {
	c := selectTopK(s.cands[:p.TopK], logits)
	if topP {
		slices.SortFunc(c, byValueDesc)
	}
	mx := c[0].v
	for _, x := range c {
		mx = max(mx, x.v)
	}
	invT := 1 / p.Temperature
	w := s.w[:len(c)]
	var total float64
	for i, x := range c {
		w[i] = expNeg((x.v - mx) * invT)
		total += float64(w[i])
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return -1
	}
	if topP {
		target := float64(p.TopP) * total
		var cum float64
		n := 0
		for n < len(w) {
			cum += float64(w[n])
			n++
			if cum >= target {
				break
			}
		}
		c, w = c[:n], w[:n]
	}
	var sum float64
	for i, e := range w {
		if e < minP {
			w[i] = 0
		}
		sum += float64(w[i])
	}
	i := drawIn(w, s.rng.Float64()*sum)
	if i < 0 {
		return -1
	}
	return c[i].id
}

// worse orders the top-k heap: the lower logit, on ties the later token
// (the sort puts the earlier first).
func worse(a, b candidate) bool { return a.v < b.v || a.v == b.v && a.id > b.id }

// selectTopK returns h filled with the len(h) most likely tokens of logits
// (as a heap, the least likely first): a min-heap of len(h) that a token
// enters only by beating its root.
func selectTopK(h []candidate, logits []float32) []candidate {
	k := len(h)
	for i := range h {
		h[i] = candidate{int32(i), logits[i]}
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	floor := h[0].v
	for i := k; i < len(logits); i++ {
		if v := logits[i]; v > floor {
			h[0] = candidate{int32(i), v}
			siftDown(h, 0)
			floor = h[0].v
		}
	}
	return h
}

func siftDown(h []candidate, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
