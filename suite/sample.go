package suite

import (
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// Sample draws n prompts, stratified by category weight, reproducibly from
// seed:
//
//  1. Each category's count is its share of n by weight, rounded by the
//     largest-remainder method (ties go to the earlier category). When n is
//     at least the number of categories, every category gets at least one:
//     a category left at zero takes one from the category whose count most
//     exceeds its exact share.
//  2. Within a category, prompts are drawn without replacement in a seeded
//     shuffle; when the count exceeds the category's prompts, a fresh
//     shuffle follows (never starting with the prompt that ended the last
//     one), so every prompt is used once before any is used twice.
//  3. The categories are interleaved evenly: the j-th of a category's m
//     prompts is placed at (j+u)/m of the run, u a seeded offset, so every
//     stretch of the run holds about the same mix as the whole.
//
// Categories with weight ≤ 0 or no prompts are left out. The same suite,
// n and seed always give the same sample; a category's draw depends only
// on the seed and its own name and prompts, not on the other categories.
// Sample returns nil for n ≤ 0.
func (s *Suite) Sample(n int, seed uint64) []Prompt {
	if s == nil || n <= 0 {
		return nil
	}
	var cats []*Category
	var weights []float64
	for i := range s.Categories {
		c := &s.Categories[i]
		if c.Weight > 0 && len(c.Prompts) > 0 && !math.IsInf(c.Weight, 0) {
			cats = append(cats, c)
			weights = append(weights, c.Weight)
		}
	}
	if len(cats) == 0 {
		return nil
	}
	counts := apportion(weights, n)
	groups := make([][]Prompt, len(cats))
	for i, c := range cats {
		groups[i] = draw(c, counts[i], seed)
	}
	return interleave(groups, seed)
}

// apportion splits n among the weights (all > 0) by the largest-remainder
// method; when n ≥ len(weights) each gets at least one.
func apportion(weights []float64, n int) []int {
	k := len(weights)
	counts := make([]int, k)
	if k == 0 || n <= 0 {
		return counts
	}
	var total float64
	for _, w := range weights {
		total += w
	}
	quota := make([]float64, k)
	given := 0
	for i, w := range weights {
		quota[i] = float64(n) * w / total
		counts[i] = int(math.Floor(quota[i]))
		given += counts[i]
	}
	// Hand out the rest by largest remainder, earlier category first on
	// ties; take back by smallest remainder should rounding have
	// overshot.
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return quota[order[a]]-float64(counts[order[a]]) > quota[order[b]]-float64(counts[order[b]])
	})
	for i := 0; given < n; i = (i + 1) % k {
		counts[order[i]]++
		given++
	}
	for i := k - 1; given > n; i = (i + k - 1) % k {
		if counts[order[i]] > 0 {
			counts[order[i]]--
			given--
		}
	}
	if n < k {
		return counts
	}
	for i := range counts {
		if counts[i] > 0 {
			continue
		}
		donor := -1
		for j := range counts {
			if counts[j] > 1 && (donor < 0 || float64(counts[j])-quota[j] > float64(counts[donor])-quota[donor]) {
				donor = j
			}
		}
		counts[donor]--
		counts[i]++
	}
	return counts
}

// draw returns m prompts of c: successive seeded shuffles of its prompts.
func draw(c *Category, m int, seed uint64) []Prompt {
	out := make([]Prompt, 0, m)
	r := newRNG(seed, "category:"+c.Name)
	perm := make([]int, len(c.Prompts))
	prev := -1
	for len(out) < m {
		for i := range perm {
			perm[i] = i
		}
		r.shuffle(perm)
		if len(perm) > 1 && perm[0] == prev {
			j := 1 + r.below(len(perm)-1)
			perm[0], perm[j] = perm[j], perm[0]
		}
		for _, i := range perm {
			if len(out) == m {
				break
			}
			p := c.Prompts[i]
			p.Category = c.Name
			out = append(out, p)
			prev = i
		}
	}
	return out
}

// interleave merges the groups, spreading each evenly over the result.
func interleave(groups [][]Prompt, seed uint64) []Prompt {
	type slot struct {
		key  float64
		rank int // seeded order of the group, to break ties
		g, j int // groups[g][j]
	}
	r := newRNG(seed, "order")
	rank := make([]int, len(groups))
	for i := range rank {
		rank[i] = i
	}
	r.shuffle(rank)
	var slots []slot
	for g, items := range groups {
		u := r.float()
		for j := range items {
			slots = append(slots, slot{key: (float64(j) + u) / float64(len(items)), rank: rank[g], g: g, j: j})
		}
	}
	sort.Slice(slots, func(a, b int) bool {
		if slots[a].key != slots[b].key {
			return slots[a].key < slots[b].key
		}
		if slots[a].rank != slots[b].rank {
			return slots[a].rank < slots[b].rank
		}
		return slots[a].j < slots[b].j
	})
	out := make([]Prompt, len(slots))
	for i, s := range slots {
		out[i] = groups[s.g][s.j]
	}
	return out
}

// rng is a PCG stream with our own bounded draws and shuffle, so that a
// sample stays the same across Go releases.
type rng struct{ src *rand.PCG }

// newRNG returns the stream for seed named by label.
func newRNG(seed uint64, label string) rng {
	h := fnv.New64a()
	h.Write([]byte(label))
	return rng{src: rand.NewPCG(seed, h.Sum64())}
}

// below returns a uniform integer in [0, n), n > 0 (Lemire's method).
func (r rng) below(n int) int {
	bound := uint64(n)
	threshold := -bound % bound
	for {
		hi, lo := bits.Mul64(r.src.Uint64(), bound)
		if lo >= threshold {
			return int(hi)
		}
	}
}

// shuffle permutes v uniformly (Fisher–Yates).
func (r rng) shuffle(v []int) {
	for i := len(v) - 1; i > 0; i-- {
		j := r.below(i + 1)
		v[i], v[j] = v[j], v[i]
	}
}

// float returns a uniform float64 in [0, 1).
func (r rng) float() float64 {
	return float64(r.src.Uint64()>>11) / (1 << 53)
}
