package suite

import (
	"fmt"
	"math/rand/v2"
	"reflect"
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

// TestImportDedupeMatchesPairwise checks the prefix filter against
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
