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
}

// RepeatWindow is how many recent tokens the repetition penalty looks at.
const RepeatWindow = 64

// candidate is a token and its logit (then probability) during sampling.
type candidate struct {
	id int32
	v  float32
}

// sampler picks the next token from logits. Its buffers are allocated once
// per session; picking a token allocates nothing.
type sampler struct {
	cands []candidate // (vocab)
	rng   *rand.Rand
	pcg   *rand.PCG
}

func newSampler(vocab int) *sampler {
	pcg := rand.NewPCG(0, 0)
	return &sampler{cands: make([]candidate, vocab), pcg: pcg, rng: rand.New(pcg)}
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
	c := s.cands[:len(logits)]
	for i, v := range logits {
		c[i] = candidate{int32(i), v}
	}
	// Top-k: a partial sort keeps the k best at the front.
	if p.TopK > 0 && p.TopK < len(c) {
		selectTop(c, p.TopK)
		c = c[:p.TopK]
	}
	slices.SortFunc(c, byValueDesc)
	// Softmax with temperature.
	mx := c[0].v
	var sum float64
	for i := range c {
		e := math.Exp(float64((c[i].v - mx) / p.Temperature))
		c[i].v = float32(e)
		sum += e
	}
	inv := float32(1 / sum)
	for i := range c {
		c[i].v *= inv
	}
	// Min-p, relative to the most likely token.
	if p.MinP > 0 {
		cut := c[0].v * p.MinP
		n := 1
		for n < len(c) && c[n].v >= cut {
			n++
		}
		c = c[:n]
	}
	// Top-p: the smallest prefix whose mass reaches TopP.
	if p.TopP > 0 && p.TopP < 1 {
		var cum float32
		n := 0
		for n < len(c) {
			cum += c[n].v
			n++
			if cum >= p.TopP {
				break
			}
		}
		c = c[:n]
	}
	var total float32
	for _, x := range c {
		total += x.v
	}
	r := s.rng.Float32() * total
	for _, x := range c {
		r -= x.v
		if r < 0 {
			return x.id
		}
	}
	return c[len(c)-1].id
}

// selectTop moves the k largest candidates to c[:k] (in no order):
// quickselect, expected linear time.
func selectTop(c []candidate, k int) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		pivot := c[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for byValueDesc(c[i], pivot) < 0 {
				i++
			}
			for byValueDesc(c[j], pivot) > 0 {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}
