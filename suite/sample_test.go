package suite

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// mkSuite builds a suite of categories named c0, c1, ... with the given
// weights and prompt counts.
func mkSuite(weights []float64, sizes []int) *Suite {
	s := &Suite{Name: "t", Language: "en"}
	for i, w := range weights {
		c := Category{Name: fmt.Sprintf("c%d", i), Weight: w}
		for j := range sizes[i] {
			c.Prompts = append(c.Prompts, Prompt{ID: fmt.Sprintf("c%d-p%d", i, j), Text: "x", Category: c.Name})
		}
		s.Categories = append(s.Categories, c)
	}
	return s
}

func countBy(ps []Prompt, key func(Prompt) string) map[string]int {
	m := map[string]int{}
	for _, p := range ps {
		m[key(p)]++
	}
	return m
}

func byCategory(p Prompt) string { return p.Category }
func byID(p Prompt) string       { return p.ID }

func TestApportion(t *testing.T) {
	// Worked by hand: quota = n*w/sum(w), floors first, the rest by
	// largest remainder (earlier first on ties), then at least one each
	// when n ≥ k.
	tests := []struct {
		name    string
		weights []float64
		n       int
		want    []int
	}{
		{"exact", []float64{45, 35, 20}, 100, []int{45, 35, 20}},
		{"twenty", []float64{45, 35, 20}, 20, []int{9, 7, 4}},
		{"tie goes to earlier", []float64{45, 35, 20}, 10, []int{5, 3, 2}},           // 4.5 3.5 2.0
		{"remainders", []float64{45, 35, 20}, 7, []int{3, 3, 1}},                     // 3.15 2.45 1.40
		{"three of three", []float64{45, 35, 20}, 3, []int{1, 1, 1}},                 // 1.35 1.05 0.60
		{"fewer than categories", []float64{45, 35, 20}, 2, []int{1, 1, 0}},          // 0.90 0.70 0.40
		{"one", []float64{45, 35, 20}, 1, []int{1, 0, 0}},                            // 0.45 0.35 0.20
		{"zero", []float64{45, 35, 20}, 0, []int{0, 0, 0}},                           //
		{"at least one each", []float64{1, 1, 98}, 3, []int{1, 1, 1}},                // 0.03 0.03 2.94 -> 0 0 3
		{"donor is most over quota", []float64{1, 50, 49}, 4, []int{1, 2, 1}},        // 0.04 2.00 1.96 -> 0 2 2; c2 is 0.04 over, c1 0
		{"single category", []float64{7}, 5, []int{5}},                               //
		{"fractional weights", []float64{0.1, 0.2, 0.7}, 10, []int{1, 2, 7}},         //
		{"equal weights", []float64{1, 1, 1}, 10, []int{4, 3, 3}},                    // 3.33 each, tie -> first
		{"large n", []float64{45, 35, 20}, 1001, []int{451, 350, 200}},               // 450.45 350.35 200.2
		{"many light categories", []float64{10, 1, 1, 1}, 4, []int{1, 1, 1, 1}},      // 3.08 .31 .31 .31 -> 3 1 0 0 -> donor c0 twice
		{"light ones first", []float64{1, 1, 1, 10}, 4, []int{1, 1, 1, 1}},           //
		{"n below k keeps heaviest", []float64{1, 10, 5}, 2, []int{0, 1, 1}},         // .125 1.25 .625
		{"weights need not sum to 100", []float64{3, 1}, 8, []int{6, 2}},             //
		{"exact with minimum", []float64{90, 5, 5}, 10, []int{8, 1, 1}},              // 9 .5 .5 -> 9 1 0 -> c2 takes from c0
		{"quota exactly integer", []float64{1, 3}, 4, []int{1, 3}},                   //
		{"tiny weight", []float64{1e-9, 1}, 2, []int{1, 1}},                          //
		{"tiny weight below k", []float64{1e-9, 1}, 1, []int{0, 1}},                  //
		{"huge weights", []float64{1e300, 1e300}, 3, []int{2, 1}},                    //
		{"odd split", []float64{2, 2, 2, 2, 2, 2, 2}, 3, []int{1, 1, 1, 0, 0, 0, 0}}, //
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := apportion(tt.weights, tt.n)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("apportion(%v, %d): got %v, want %v", tt.weights, tt.n, got, tt.want)
			}
			sum := 0
			for _, c := range got {
				sum += c
			}
			if sum != tt.n {
				t.Errorf("counts sum to %d, want %d", sum, tt.n)
			}
		})
	}
}

func TestSampleProportions(t *testing.T) {
	s := mkSuite([]float64{45, 35, 20}, []int{30, 30, 30})
	for _, n := range []int{1, 2, 3, 7, 10, 20, 100, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			got := s.Sample(n, 7)
			if len(got) != n {
				t.Fatalf("got %d prompts, want %d", len(got), n)
			}
			want := apportion([]float64{45, 35, 20}, n)
			counts := countBy(got, byCategory)
			for i, w := range want {
				if c := counts[fmt.Sprintf("c%d", i)]; c != w {
					t.Errorf("category c%d: got %d prompts, want %d", i, c, w)
				}
			}
		})
	}
}

func TestSampleDeterministic(t *testing.T) {
	s := mkSuite([]float64{45, 35, 20}, []int{30, 30, 30})
	a, b := s.Sample(50, 42), s.Sample(50, 42)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed gave different samples:\n%v\n%v", ids(a), ids(b))
	}
	if c := s.Sample(50, 43); reflect.DeepEqual(ids(a), ids(c)) {
		t.Errorf("seeds 42 and 43 gave the same sample %v", ids(a))
	}
	// A category's draw depends on its own name and prompts only: adding
	// a category leaves the order within the others unchanged when their
	// counts stay the same.
	s2 := mkSuite([]float64{45, 35, 20, 100}, []int{30, 30, 30, 5})
	within := func(ps []Prompt, cat string) []string {
		var out []string
		for _, p := range ps {
			if p.Category == cat {
				out = append(out, p.ID)
			}
		}
		return out
	}
	x, y := s.Sample(20, 9), s2.Sample(40, 9)
	for _, cat := range []string{"c0", "c1", "c2"} {
		if got, want := within(y, cat), within(x, cat); !reflect.DeepEqual(got, want) {
			t.Errorf("category %s: got %v with a fourth category, want %v", cat, got, want)
		}
	}
}

func ids(ps []Prompt) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func TestSampleWithoutReplacement(t *testing.T) {
	s := mkSuite([]float64{1, 1}, []int{10, 3})
	for seed := range uint64(50) {
		got := s.Sample(20, seed) // 10 from c0 (each once), 10 from c1 (3 prompts cycled)
		per := countBy(got, byID)
		for j := range 10 {
			if c := per[fmt.Sprintf("c0-p%d", j)]; c != 1 {
				t.Fatalf("seed %d: c0-p%d drawn %d times, want 1", seed, j, c)
			}
		}
		// 10 draws over 3 prompts: whole shuffles first, so each prompt
		// 3 or 4 times.
		for j := range 3 {
			if c := per[fmt.Sprintf("c1-p%d", j)]; c < 3 || c > 4 {
				t.Fatalf("seed %d: c1-p%d drawn %d times, want 3 or 4", seed, j, c)
			}
		}
		// No prompt twice in a row within a category, even across a
		// reshuffle.
		var prev string
		for _, p := range got {
			if p.Category != "c1" {
				continue
			}
			if p.ID == prev {
				t.Fatalf("seed %d: %s drawn twice in a row in %v", seed, p.ID, ids(got))
			}
			prev = p.ID
		}
	}
}

func TestSampleFirstCycleIsPrefix(t *testing.T) {
	// Within a category, the first len(prompts) draws use every prompt once.
	s := mkSuite([]float64{1}, []int{7})
	got := s.Sample(23, 5)
	for cycle := 0; cycle+7 <= 23; cycle += 7 {
		if c := countBy(got[cycle:cycle+7], byID); len(c) != 7 {
			t.Errorf("draws %d..%d: got %d distinct prompts, want 7: %v", cycle, cycle+6, len(c), ids(got))
		}
	}
}

func TestSampleInterleaves(t *testing.T) {
	// Every prefix of the run holds close to the overall mix: the
	// j-th of a category's m prompts sits at (j+u)/m of the run.
	s := mkSuite([]float64{45, 35, 20}, []int{30, 30, 30})
	worst := 0.0
	for seed := range uint64(200) {
		for _, n := range []int{10, 20, 57, 100} {
			got := s.Sample(n, seed)
			total := countBy(got, byCategory)
			seen := map[string]int{}
			for i, p := range got {
				seen[p.Category]++
				for cat, m := range total {
					dev := float64(seen[cat]) - float64(i+1)*float64(m)/float64(n)
					if dev < 0 {
						dev = -dev
					}
					worst = max(worst, dev)
				}
			}
		}
	}
	// Bound: one item of the category itself plus rounding from the
	// others; a plain shuffle drifts by several.
	if worst >= 2 {
		t.Errorf("a prefix drifted %.2f prompts from its share, want < 2", worst)
	}
	t.Logf("largest prefix drift: %.2f prompts", worst)
}

func TestSampleEdgeCases(t *testing.T) {
	s := mkSuite([]float64{45, 35, 20}, []int{30, 30, 30})
	t.Run("n=0", func(t *testing.T) {
		if got := s.Sample(0, 1); len(got) != 0 {
			t.Errorf("got %d prompts, want 0", len(got))
		}
	})
	t.Run("negative n", func(t *testing.T) {
		if got := s.Sample(-3, 1); len(got) != 0 {
			t.Errorf("got %d prompts, want 0", len(got))
		}
	})
	t.Run("n below categories", func(t *testing.T) {
		got := s.Sample(2, 1)
		if c := countBy(got, byCategory); len(got) != 2 || c["c0"] != 1 || c["c1"] != 1 {
			t.Errorf("got %v, want one each from the two heaviest (c0, c1)", ids(got))
		}
	})
	t.Run("one category", func(t *testing.T) {
		one := mkSuite([]float64{3}, []int{4})
		got := one.Sample(9, 1)
		if c := countBy(got, byID); len(got) != 9 || len(c) != 4 {
			t.Errorf("got %v, want 9 draws covering all 4 prompts", ids(got))
		}
	})
	t.Run("one prompt repeated", func(t *testing.T) {
		one := mkSuite([]float64{1}, []int{1})
		got := one.Sample(3, 1)
		if want := []string{"c0-p0", "c0-p0", "c0-p0"}; !reflect.DeepEqual(ids(got), want) {
			t.Errorf("got %v, want %v", ids(got), want)
		}
	})
	t.Run("weightless and empty categories left out", func(t *testing.T) {
		odd := mkSuite([]float64{0, 1, 5}, []int{3, 3, 0})
		got := odd.Sample(4, 1)
		if c := countBy(got, byCategory); c["c1"] != 4 {
			t.Errorf("got %v, want all 4 from c1", ids(got))
		}
	})
	t.Run("nothing to draw", func(t *testing.T) {
		var nilSuite *Suite
		if got := nilSuite.Sample(3, 1); got != nil {
			t.Errorf("nil suite: got %v", got)
		}
		if got := (&Suite{}).Sample(3, 1); got != nil {
			t.Errorf("empty suite: got %v", got)
		}
	})
	t.Run("category is set", func(t *testing.T) {
		hand := &Suite{Categories: []Category{{Name: "x", Weight: 1, Prompts: []Prompt{{ID: "a"}}}}}
		if got := hand.Sample(1, 1); got[0].Category != "x" {
			t.Errorf("got category %q, want x", got[0].Category)
		}
	})
}

// TestSampleGolden pins the sample of a fixed suite and seed, so that a
// change to the sampling rule (which would change every recorded run's
// prompts) is noticed. Refresh with -update after a deliberate change.
func TestSampleGolden(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "small.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, seed := range []uint64{1, 2} {
		fmt.Fprintf(&b, "seed %d:", seed)
		for _, p := range s.Sample(12, seed) {
			fmt.Fprintf(&b, " %s", p.ID)
		}
		b.WriteString("\n")
	}
	path := filepath.Join("testdata", "sample.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func BenchmarkSample(b *testing.B) {
	s, err := Builtin("zh-medical")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s.Sample(1000, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/prompt")
}
