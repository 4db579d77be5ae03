package suite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestImportNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  WHAT'S the Capital   of Australia?!  ", "whats the capital of australia"},
		{"hello,world", "hello world"},
		{"Ｈｅｌｌｏ　Ｗｏｒｌｄ！", "hello world"},
		{"你好，世界！", "你好世界"},
		{"孩子发烧 38.5 度", "孩子发烧38 5度"},
		{"zero\u200bwidth", "zerowidth"},
		{"?!", "?!"},
		{"  ", ""},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestImportJaccard(t *testing.T) {
	base := "Explain how a heat pump works in winter, including what happens to its efficiency as the outdoor temperature drops below freezing."
	tests := []struct {
		a, b string
		want float64
	}{
		{base, base, 1},
		{base, strings.ToUpper(base), 1},
		// 20 bigrams; one more word at the end adds one: 20/21.
		{base, base + " Thanks", 20.0 / 21},
		// One word changed in the middle: two bigrams of 20 differ.
		{base, strings.Replace(base, "outdoor", "outside", 1), 18.0 / 22},
		{"a b c", "d e f", 0},
		{"one", "one", 1},
		{"一二三四", "一二三五", 2.0 / 4}, // CJK characters are words
	}
	for _, tt := range tests {
		if got := Jaccard(tt.a, tt.b); fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", tt.want) {
			t.Errorf("Jaccard(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestImportDedupe(t *testing.T) {
	long := "Explain how a heat pump works in winter, including what happens to its efficiency as the outdoor temperature drops below freezing, and whether I need a backup heater."
	texts := []string{
		"What's the capital of Australia?",
		"what's the capital of australia",       // exact
		long,                                    //
		long + " Thanks!",                       // near: 28/29
		strings.Replace(long, "heat", "air", 1), // 26 of 30 shared: 0.87, kept
		"What's the capital of Austria?",        // short texts differ by a word: kept
		"",                                      // normalises to "": kept (no bigram)
		"",                                      // exact
	}
	verdicts, of := Dedupe(texts, DefaultNearDuplicate)
	want := []Duplicate{Unique, Exact, Unique, Near, Unique, Unique, Unique, Exact}
	if !reflect.DeepEqual(verdicts, want) {
		t.Errorf("verdicts %v, want %v", verdicts, want)
	}
	if wantOf := []int{-1, 0, -1, 2, -1, -1, -1, 6}; !reflect.DeepEqual(of, wantOf) {
		t.Errorf("of %v, want %v", of, wantOf)
	}
	// Near-duplicate removal off.
	verdicts, _ = Dedupe(texts, -1)
	if verdicts[3] != Unique || verdicts[1] != Exact {
		t.Errorf("near off: verdicts %v", verdicts)
	}
}

// bruteDedupe is Dedupe's definition, pair by pair.
func bruteDedupe(texts []string, near float64) []Duplicate {
	out := make([]Duplicate, len(texts))
	seen := map[string]bool{}
	var kept []map[uint64]bool
	for i, t := range texts {
		n := Normalize(t)
		if seen[n] {
			out[i] = Exact
			continue
		}
		seen[n] = true
		x := map[uint64]bool{}
		for _, h := range shingles(n) {
			x[h] = true
		}
		if len(x) == 0 {
			continue
		}
		for _, y := range kept {
			common := 0
			for h := range x {
				if y[h] {
					common++
				}
			}
			if float64(common)/float64(len(x)+len(y)-common) >= near-1e-9 {
				out[i] = Near
				break
			}
		}
		if out[i] == Unique {
			kept = append(kept, x)
		}
	}
	return out
}

// TestImportDedupeMatchesPairwise checks the MinHash index against
// comparing every pair, on texts made to be similar.
func TestImportDedupeMatchesPairwise(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	vocab := strings.Fields("the a of to and in is it you that he was for on are with as his they be at one have this from or had by hot word but what some we can out other were all there when up use your how said an each she 天 地 人 和 水 火")
	var base []string
	for range 60 {
		n := 1 + r.IntN(25)
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(12)] // a small vocabulary: many shared bigrams
		}
		base = append(base, strings.Join(w, " "))
	}
	var texts []string
	for range 400 {
		w := strings.Fields(base[r.IntN(len(base))])
		switch r.IntN(4) {
		case 0: // change a word
			w[r.IntN(len(w))] = vocab[r.IntN(len(vocab))]
		case 1: // add one
			w = append(w, vocab[r.IntN(len(vocab))])
		case 2: // drop one
			if len(w) > 1 {
				i := r.IntN(len(w))
				w = append(w[:i], w[i+1:]...)
			}
		}
		texts = append(texts, strings.Join(w, " "))
	}
	for _, near := range []float64{0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1} {
		got, _ := Dedupe(texts, near)
		want := bruteDedupe(texts, near)
		if !reflect.DeepEqual(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("near %v: text %d %q: got %v, want %v", near, i, texts[i], got[i], want[i])
					break
				}
			}
		}
		counts := map[Duplicate]int{}
		for _, v := range got {
			counts[v]++
		}
		if near == 0.9 && (counts[Near] == 0 || counts[Exact] == 0) {
			t.Errorf("near %v: %v: the test should hold duplicates of both kinds", near, counts)
		}
	}
}

// TestImportDedupeMany plants near duplicates among tens of thousands of
// distinct prompts and finds exactly those.
func TestImportDedupeMany(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	word := func() string {
		b := make([]byte, 3+r.IntN(6))
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(b)
	}
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = word()
	}
	var texts []string
	var planted []int
	for i := range 30000 {
		if i%10 == 9 { // a near duplicate of an earlier (not planted) prompt: one word more
			k := r.IntN(i)
			k -= k % 10 // 0, 10, ... are never planted
			texts = append(texts, texts[k]+" "+vocab[r.IntN(len(vocab))])
			planted = append(planted, i)
			continue
		}
		w := make([]string, 20+r.IntN(20))
		for j := range w {
			w[j] = vocab[r.IntN(len(vocab))]
		}
		texts = append(texts, strings.Join(w, " "))
	}
	verdicts, of := Dedupe(texts, DefaultNearDuplicate)
	var near []int
	for i, v := range verdicts {
		if v != Unique {
			near = append(near, i)
			// Two plants on one prompt may pick the same word: exact.
			if i%10 != 9 || of[i] < 0 || of[i] >= i {
				t.Errorf("text %d: verdict %v of %d", i, v, of[i])
			}
		}
	}
	if len(near) != len(planted) {
		t.Errorf("%d near duplicates found, %d planted", len(near), len(planted))
	}
}

// templatedPrompts returns n prompts of one 60-word template whose slots
// (every fifth word) each take one of 3 words, drawn with seed: with 12
// slots, as in the probe, a prompt is a near duplicate (Jaccard
// 57/61) of the 24 that differ from it in one slot, and similar (0.6–0.87)
// to thousands more.
func templatedPrompts(n, slots int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	vocab := strings.Fields("the a of to and in is it you that he was for on are with as his they be at one have this from or had by hot word but what some we can out other were all there when up use your how said an each she which do their time if will way about many then them write would like so these her long make thing see him two has look more day could go come did number sound no most people my over know water than call first who may down side been now find any new work part take get place made live")
	tmpl := make([]string, 60)
	for i := range tmpl {
		tmpl[i] = vocab[r.IntN(len(vocab))]
	}
	out := make([]string, n)
	w := make([]string, len(tmpl))
	for i := range out {
		copy(w, tmpl)
		for s := range slots {
			w[2+5*s] = fmt.Sprintf("slot%d%c", s, 'a'+r.IntN(3))
		}
		out[i] = strings.Join(w, " ")
	}
	return out
}

// TestImportDedupeTemplatedMatchesPairwise checks the MinHash index
// against comparing every pair on templated prompts, where near
// duplicates come in large overlapping groups and most pairs sit just
// below the threshold.
func TestImportDedupeTemplatedMatchesPairwise(t *testing.T) {
	for _, tc := range []struct {
		n, slots int
		near     float64
	}{
		{1000, 7, 0.9}, {1500, 12, 0.9}, {1000, 7, 0.8}, {1000, 7, 0.93}, {800, 7, 0.6},
	} {
		texts := templatedPrompts(tc.n, tc.slots, uint64(tc.n+tc.slots))
		got, of := Dedupe(texts, tc.near)
		want := bruteDedupe(texts, tc.near)
		counts := map[Duplicate]int{}
		for i := range got {
			counts[got[i]]++
			if got[i] != want[i] {
				t.Errorf("%+v: text %d: got %v, want %v", tc, i, got[i], want[i])
				break
			}
			if got[i] == Near && Jaccard(texts[i], texts[of[i]]) < tc.near-1e-9 {
				t.Errorf("%+v: text %d dropped as a near duplicate of %d, Jaccard %v", tc, i, of[i], Jaccard(texts[i], texts[of[i]]))
			}
		}
		if counts[Near] < tc.n/50 {
			t.Errorf("%+v: %v: the test should hold many near duplicates", tc, counts)
		}
	}
}

// TestImportDedupeComparisons holds that the work grows with the input,
// not with its square: on the templated prompts (every one similar
// to thousands of others) and on a group of 5,000 near duplicates of one
// prompt, each prompt is compared in full with a bounded number of kept
// prompts. Comparing with every kept prompt sharing a rare bigram (the
// prefix filter this replaced) made 20,000 templated prompts take 109 s.
func TestImportDedupeComparisons(t *testing.T) {
	texts := templatedPrompts(20000, 12, 1)
	_, _, compared := dedupe(texts, DefaultNearDuplicate)
	t.Logf("20,000 templated prompts: %d comparisons, %.1f a prompt", compared, float64(compared)/20000)
	if compared > 250*len(texts) {
		t.Errorf("20,000 templated prompts: %d comparisons, want at most 250 a prompt", compared)
	}
	base := strings.Fields(templatedPrompts(1, 12, 2)[0])
	var group []string
	for i := range 5000 {
		group = append(group, strings.Join(append(base, fmt.Sprint("extra", i)), " "))
	}
	verdicts, _, compared := dedupe(group, DefaultNearDuplicate)
	if compared > len(group) || verdicts[0] != Unique || slices.Index(verdicts[1:], Unique) >= 0 {
		t.Errorf("5,000 near duplicates of one prompt: %d comparisons, want at most one a prompt, and all but the first dropped", compared)
	}
}

// TestDedupeRecall measures how often the MinHash index misses a pair of
// sets exactly at the threshold (no band in common), which would keep a
// near duplicate: at most 1 in 1,000 (lshBands aims at 1 in 10,000 for
// ideal hashes), over 10,000 pairs of hashed bigrams at each threshold.
func TestDedupeRecall(t *testing.T) {
	for _, tc := range []struct {
		n, common int // two sets of n bigrams, common of them shared
		near      float64
	}{
		{38, 36, 0.9}, {76, 72, 0.9}, {39, 38, 0.95}, {17, 14, 0.7}, {30, 20, 0.5}, {1, 1, 1},
	} {
		if j := float64(tc.common) / float64(2*tc.n-tc.common); math.Abs(j-tc.near) > 1e-12 {
			t.Fatalf("%+v: Jaccard %v, not the threshold", tc, j)
		}
		h := newMinHasher(lshBands(tc.near))
		kx, ky := make([]uint64, h.bands), make([]uint64, h.bands)
		const pairs = 10000
		misses := 0
		for p := range pairs {
			var x, y []uint64
			for e := range tc.n {
				x = append(x, bigramHash(strconv.Itoa(p), "e"+strconv.Itoa(e)))
				if e < tc.common {
					y = append(y, x[e])
				} else {
					y = append(y, bigramHash(strconv.Itoa(p), "f"+strconv.Itoa(e)))
				}
			}
			slices.Sort(x)
			slices.Sort(y)
			h.keys(x, kx)
			h.keys(y, ky)
			hit := false
			for j := range kx {
				hit = hit || kx[j] == ky[j]
			}
			if !hit {
				misses++
			}
		}
		t.Logf("near %v: %d rows × %d bands: %d of %d pairs at the threshold missed (%.4f%%)", tc.near, h.rows, h.bands, misses, pairs, 100*float64(misses)/pairs)
		if misses > pairs/1000 {
			t.Errorf("near %v: %d of %d pairs at the threshold missed, want at most 0.1%%", tc.near, misses, pairs)
		}
	}
}

// BenchmarkDedupeTemplated times Dedupe on the probe: 60-word
// prompts differing in 12 slots of 3 words each.
func BenchmarkDedupeTemplated(b *testing.B) {
	for _, n := range []int{5000, 20000, 100000} {
		texts := templatedPrompts(n, 12, 1)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				Dedupe(texts, DefaultNearDuplicate)
			}
		})
	}
}

// BenchmarkDedupeDistinct times Dedupe on 30,000 prompts of 20–40 words
// drawn from 5,000, nearly all distinct.
func BenchmarkDedupeDistinct(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 5))
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprint("w", r.Uint64()%1e9)
	}
	texts := make([]string, 30000)
	for i := range texts {
		w := make([]string, 20+r.IntN(20))
		for j := range w {
			w[j] = vocab[r.IntN(len(vocab))]
		}
		texts[i] = strings.Join(w, " ")
	}
	for range b.N {
		Dedupe(texts, DefaultNearDuplicate)
	}
}
