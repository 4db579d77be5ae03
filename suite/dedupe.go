package suite

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"unicode"
)

// DefaultNearDuplicate is the Jaccard similarity of word-bigram sets at or
// above which Dedupe drops a prompt as a near-duplicate of an earlier one.
const DefaultNearDuplicate = 0.9

// Normalize returns the form of text that exact duplicate detection
// compares: lower case, full-width ASCII folded to ASCII, punctuation and
// symbols removed, runs of white space made one space (none next to a CJK
// character), trimmed. Text made
// only of punctuation and symbols normalises to itself with white space
// collapsed, so that "?" and "!" stay apart.
func Normalize(text string) string {
	var b strings.Builder
	space := false
	var prev rune
	for _, r := range text {
		if 0xFF01 <= r && r <= 0xFF5E {
			r -= 0xFEE0 // full-width ASCII
		} else if r == 0x3000 {
			r = ' '
		}
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.Is(unicode.Cf, r):
			continue // zero-width and other format characters
		case unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.IsControl(r):
			// Punctuation separates words: "a,b" is "a b".
			space = space || b.Len() > 0 && r != '\'' && r != '’'
			continue
		}
		// No space next to a CJK character: "你好，世界" is "你好世界".
		if space && !isCJK(r) && !isCJK(prev) {
			b.WriteByte(' ')
		}
		space = false
		r = unicode.ToLower(r)
		b.WriteRune(r)
		prev = r
	}
	if b.Len() == 0 {
		return strings.Join(strings.Fields(text), " ")
	}
	return b.String()
}

// isCJK reports whether r is written without spaces between words (Han,
// kana, Hangul): each such character is a word of its own.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// words splits normalised text into words: runs of letters and digits,
// and each CJK character alone.
func words(norm string) []string {
	var out []string
	start := -1
	for i, r := range norm {
		switch {
		case isCJK(r):
			if start >= 0 {
				out = append(out, norm[start:i])
				start = -1
			}
			out = append(out, string(r))
		case r == ' ':
			if start >= 0 {
				out = append(out, norm[start:i])
				start = -1
			}
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, norm[start:])
	}
	return out
}

// shingles returns the set of word bigrams of norm, hashed (bigramHash),
// in ascending order; a text of one word has that word as its only
// shingle.
func shingles(norm string) []uint64 {
	w := words(norm)
	var out []uint64
	switch len(w) {
	case 0:
	case 1:
		out = []uint64{fnvWord(fnvOffset, w[0])}
	default:
		out = make([]uint64, 0, len(w)-1)
		for i := 0; i+1 < len(w); i++ {
			out = append(out, bigramHash(w[i], w[i+1]))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// bigramHash is the 64-bit FNV-1a hash of a, a zero byte, b and a zero
// byte.
func bigramHash(a, b string) uint64 { return fnvWord(fnvWord(fnvOffset, a), b) }

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

// fnvWord continues FNV-1a hash h with word and a zero byte.
func fnvWord(h uint64, word string) uint64 {
	for i := 0; i < len(word); i++ {
		h = (h ^ uint64(word[i])) * fnvPrime
	}
	return h * fnvPrime
}

// Jaccard returns the Jaccard similarity of the word-bigram sets of a and
// b (after Normalize), the measure Dedupe compares with its threshold.
func Jaccard(a, b string) float64 {
	x, y := shingles(Normalize(a)), shingles(Normalize(b))
	if len(x) == 0 && len(y) == 0 {
		return 1
	}
	in := map[uint64]bool{}
	for _, h := range x {
		in[h] = true
	}
	common := 0
	for _, h := range y {
		if in[h] {
			common++
		}
	}
	return float64(common) / float64(len(x)+len(y)-common)
}

// Duplicate says why Dedupe dropped a text.
type Duplicate int

const (
	// Unique texts are kept.
	Unique Duplicate = iota
	// Exact duplicates normalise (Normalize) to the same text as an
	// earlier kept text.
	Exact
	// Near duplicates have a word-bigram Jaccard similarity at or above
	// the threshold with an earlier kept text.
	Near
)

// Dedupe decides, in order, which texts to keep: a text is dropped when it
// is an exact duplicate of a text kept before it (the same after
// Normalize) or, when near > 0, a near duplicate: the Jaccard similarity
// of their sets of word bigrams (words as in Normalize, each CJK character
// a word) is at least near. The first of a group is kept. It returns one
// verdict per text, and the index of the kept text each dropped one
// duplicates (-1 for kept texts). The result depends only on texts and
// near.
//
// Near duplicates are looked for among candidates, and each candidate is
// compared exactly: a kept text's bigram set is summarised by MinHash
// signatures cut into bands (locality-sensitive hashing, Broder 1997;
// Indyk and Motwani 1998), and a text is compared in full only with the
// kept texts that share a band with it. Two sets of similarity J share one
// of b bands of r hashes with probability 1 − (1 − J^r)^b; r and b are
// chosen for near (see lshBands) so that a pair at the threshold is found
// with probability at least 1 − lshMiss (99.99%), and a pair above it
// more surely. A removed text is never indexed, so a group of near
// duplicates costs one comparison per member, not one per pair. At the
// default 0.9 a text costs 504 hashes of each bigram, and 20,000
// templated prompts, every one similar to thousands of others, about 170
// comparisons each (TestImportDedupeComparisons; the prefix filter this
// replaced made 3,360); a 512-bit sketch of each set rules out most
// candidates before the merge (BenchmarkDedupeTemplated).
func Dedupe(texts []string, near float64) ([]Duplicate, []int) {
	verdict, of, _ := dedupe(texts, near)
	return verdict, of
}

// dedupe is Dedupe, and counts the candidate pairs it compared.
func dedupe(texts []string, near float64) (verdict []Duplicate, of []int, compared int) {
	verdict = make([]Duplicate, len(texts))
	of = make([]int, len(texts))
	for i := range of {
		of[i] = -1
	}
	first := map[string]int{}
	var candidates []int
	norms := make([]string, len(texts))
	for i, t := range texts {
		norms[i] = Normalize(t)
		if k, dup := first[norms[i]]; dup {
			verdict[i], of[i] = Exact, k
			continue
		}
		first[norms[i]] = i
		candidates = append(candidates, i)
	}
	if !(near > 0) || len(candidates) < 2 {
		return verdict, of, 0
	}
	near = math.Min(near, 1)

	h := newMinHasher(lshBands(near))
	sets := make([][]uint64, len(texts)) // bigram sets of the kept texts, sorted
	sketches := make([]bitSketch, len(texts))
	index := map[uint64]int32{} // band key -> 1 + its newest entry in chain
	var chain []lshEntry
	stamp := make([]int32, len(texts)) // stamp[k] == i+1: k already compared with i
	keys := make([]uint64, h.bands)
	for _, i := range candidates {
		x := shingles(norms[i])
		if len(x) == 0 {
			continue // nothing to compare; exact duplicates are already out
		}
		sx := sketch(x)
		h.keys(x, keys)
		dup := -1
	probe:
		for _, key := range keys {
			for e := index[key]; e > 0; e = chain[e-1].next {
				k := chain[e-1].text
				if stamp[k] == int32(i+1) {
					continue
				}
				stamp[k] = int32(i + 1)
				compared++
				if similar(x, sets[k], &sx, &sketches[k], near) {
					dup = int(k)
					break probe
				}
			}
		}
		if dup >= 0 {
			verdict[i], of[i] = Near, dup
			continue
		}
		sets[i], sketches[i] = x, sx
		for _, key := range keys {
			chain = append(chain, lshEntry{text: int32(i), next: index[key]})
			index[key] = int32(len(chain))
		}
	}
	return verdict, of, compared
}

// lshEntry is a kept text in a band's bucket, and the entry (1-based, 0
// for none) of the text indexed before it under the same key.
type lshEntry struct{ text, next int32 }

// lshMiss is the most that the probability of missing a pair at the
// threshold may be, for ideal hashes; TestDedupeRecall measures it.
const lshMiss = 1e-4

// maxHashes bounds the MinHash values of one text, rows times bands.
const maxHashes = 512

// lshBands returns the rows r and bands b of the MinHash index for
// threshold t: the most rows (at most 32; more rows make candidates
// below the threshold rarer) whose bands, at most maxHashes hashes in
// all, miss a pair of similarity t with probability (1 − t^r)^b ≤
// lshMiss. At 0.9 that is 14 rows of 36 bands. Below about 0.013 even one
// row needs more than maxHashes bands; that many are used.
func lshBands(t float64) (r, b int) {
	bands := func(r int) float64 {
		p := math.Pow(t, float64(r))
		if p >= 1 {
			return 1
		}
		return math.Ceil(math.Log(lshMiss) / math.Log1p(-p))
	}
	r, b = 1, int(bands(1))
	for rows := 2; rows <= 32; rows++ {
		if n := bands(rows); float64(rows)*n <= maxHashes {
			r, b = rows, int(n)
		}
	}
	return r, b
}

// minHasher computes the band keys of bigram sets.
type minHasher struct {
	rows, bands int
	mul, xor    []uint64 // hash k of a bigram h is (h ^ xor[k]) * mul[k]
	sig         []uint64
}

func newMinHasher(rows, bands int) *minHasher {
	h := &minHasher{rows: rows, bands: bands, sig: make([]uint64, rows*bands)}
	// Fixed seeds: the same texts always give the same verdicts.
	seed := uint64(0x9e3779b97f4a7c15)
	for range rows * bands {
		seed += 0x9e3779b97f4a7c15
		h.mul = append(h.mul, mix64(seed)|1)
		seed += 0x9e3779b97f4a7c15
		h.xor = append(h.xor, mix64(seed))
	}
	return h
}

// keys sets keys[j] to the key of band j of x's MinHash signature: the
// minimum of each of the band's rows hashes over x, hashed together with j.
func (h *minHasher) keys(x []uint64, keys []uint64) {
	// Four hashes at a time: each bigram is loaded once for four
	// independent minimums, which the processor computes side by side.
	k := 0
	for ; k+4 <= len(h.sig); k += 4 {
		m0, m1, m2, m3 := uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64)
		u0, u1, u2, u3 := h.mul[k], h.mul[k+1], h.mul[k+2], h.mul[k+3]
		x0, x1, x2, x3 := h.xor[k], h.xor[k+1], h.xor[k+2], h.xor[k+3]
		for _, v := range x {
			m0 = min(m0, (v^x0)*u0)
			m1 = min(m1, (v^x1)*u1)
			m2 = min(m2, (v^x2)*u2)
			m3 = min(m3, (v^x3)*u3)
		}
		h.sig[k], h.sig[k+1], h.sig[k+2], h.sig[k+3] = m0, m1, m2, m3
	}
	for ; k < len(h.sig); k++ {
		m := uint64(math.MaxUint64)
		for _, v := range x {
			m = min(m, (v^h.xor[k])*h.mul[k])
		}
		h.sig[k] = m
	}
	for j := range keys {
		key := uint64(j) + 1
		for _, m := range h.sig[j*h.rows : (j+1)*h.rows] {
			key = mix64(key ^ m)
		}
		keys[j] = key
	}
}

// mix64 is the finaliser of MurmurHash3: a bijection of 64-bit values that
// spreads every input bit over the output.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// bitSketch is a 512-bit summary of a bigram set: bit v>>55 is set for
// each bigram hash v. A bit set for x and not for y stands for at least
// one bigram of x that y lacks.
type bitSketch [8]uint64

func sketch(x []uint64) bitSketch {
	var s bitSketch
	for _, v := range x {
		s[v>>61] |= 1 << (v >> 55 & 63)
	}
	return s
}

// missing returns a lower bound of the elements of the set sketched by a
// that are not in the set sketched by b.
func (a *bitSketch) missing(b *bitSketch) int {
	n := 0
	for i := range a {
		n += bits.OnesCount64(a[i] &^ b[i])
	}
	return n
}

// similar reports whether sorted sets x and y, sketched by sx and sy, have
// a Jaccard similarity of at least t: size first, then the sketches, then
// a merge that stops as soon as either set has more elements outside the
// other than the threshold allows. The first two only rule out pairs that
// the merge would rule out.
func similar(x, y []uint64, sx, sy *bitSketch, t float64) bool {
	nx, ny := float64(len(x)), float64(len(y))
	if ny < t*nx-1e-9 || nx < t*ny-1e-9 {
		return false
	}
	// |x∩y| ≥ t·|x∪y| ⇔ |x∩y| ≥ t·(|x|+|y|)/(1+t).
	need := t*(nx+ny)/(1+t) - 1e-9
	outX, outY := nx-need, ny-need // how many of each may be missing from the other
	if float64(sx.missing(sy)) > outX || float64(sy.missing(sx)) > outY {
		return false
	}
	c, i, j := 0, 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			c++
			i++
			j++
		case x[i] < y[j]:
			i++
			if outX--; outX < 0 {
				return false
			}
		default:
			j++
			if outY--; outY < 0 {
				return false
			}
		}
	}
	return float64(c) >= need
}
