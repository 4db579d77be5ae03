package suite

import (
	"hash/fnv"
	"math"
	"sort"
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

// shingles returns the set of word bigrams of norm, hashed; a text of one
// word has that word as its only shingle.
func shingles(norm string) []uint64 {
	w := words(norm)
	hash := func(parts ...string) uint64 {
		h := fnv.New64a()
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		return h.Sum64()
	}
	set := map[uint64]bool{}
	switch len(w) {
	case 0:
	case 1:
		set[hash(w[0])] = true
	default:
		for i := 0; i+1 < len(w); i++ {
			set[hash(w[i], w[i+1])] = true
		}
	}
	out := make([]uint64, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	return out
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
// duplicates (-1 for kept texts).
//
// Near duplicates are found exactly, not estimated: bigrams are ordered
// rarest first, and two sets can reach similarity t only if they share a
// bigram among the first |x| − ⌈t·|x|⌉ + 1 of each ("prefix filtering",
// Chaudhuri et al. 2006; Bayardo et al. 2007) and their sizes are within a
// factor t; only such candidate pairs are compared in full. At the default
// 0.9 a prompt is compared with few others, so tens of thousands of
// prompts take a second or so.
func Dedupe(texts []string, near float64) ([]Duplicate, []int) {
	verdict := make([]Duplicate, len(texts))
	of := make([]int, len(texts))
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
		return verdict, of
	}
	near = math.Min(near, 1)

	sets := make(map[int][]uint64, len(candidates))
	freq := map[uint64]int{}
	for _, i := range candidates {
		sets[i] = shingles(norms[i])
		for _, h := range sets[i] {
			freq[h]++
		}
	}
	for _, s := range sets {
		sort.Slice(s, func(a, b int) bool {
			if freq[s[a]] != freq[s[b]] {
				return freq[s[a]] < freq[s[b]]
			}
			return s[a] < s[b]
		})
	}
	less := func(a, b uint64) bool {
		if freq[a] != freq[b] {
			return freq[a] < freq[b]
		}
		return a < b
	}
	prefix := func(n int) int {
		// ⌈t·n⌉ with a little slack for floating point.
		return n - int(math.Ceil(near*float64(n)-1e-9)) + 1
	}
	index := map[uint64][]int{} // bigram -> kept texts with it in their prefix
	seen := map[int]bool{}
	for _, i := range candidates {
		x := sets[i]
		if len(x) == 0 {
			continue // nothing to compare; exact duplicates are already out
		}
		clear(seen)
		dup := -1
	probe:
		for _, h := range x[:min(prefix(len(x)), len(x))] {
			for _, k := range index[h] {
				if seen[k] {
					continue
				}
				seen[k] = true
				y := sets[k]
				if float64(len(y)) < near*float64(len(x))-1e-9 || float64(len(x)) < near*float64(len(y))-1e-9 {
					continue
				}
				if common := overlap(x, y, less); float64(common) >= near*float64(len(x)+len(y)-common)-1e-9 {
					dup = k
					break probe
				}
			}
		}
		if dup >= 0 {
			verdict[i], of[i] = Near, dup
			continue
		}
		for _, h := range x[:min(prefix(len(x)), len(x))] {
			index[h] = append(index[h], i)
		}
	}
	return verdict, of
}

// overlap counts the elements two sets sorted by less have in common.
func overlap(x, y []uint64, less func(a, b uint64) bool) int {
	n, i, j := 0, 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			n++
			i++
			j++
		case less(x[i], y[j]):
			i++
		default:
			j++
		}
	}
	return n
}
