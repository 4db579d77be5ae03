package suite

import (
	"errors"
	"testing"
)

// FuzzParse holds that Parse never panics, that every failure is located
// (*Error), and that whatever it accepts can be sampled as promised.
func FuzzParse(f *testing.F) {
	f.Add([]byte(small))
	f.Add([]byte("name: x\nlanguage: en\ncategories:\n  - {name: a, weight: 1, prompts: [{id: a1, text: hi}]}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("name: x\nlanguage: en\ncategories: [&c {name: a, weight: 1, prompts: [{id: a1, text: hi}]}, *c]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if len(s.Categories) == 0 {
			t.Fatal("accepted a suite without categories")
		}
		ids := map[string]bool{}
		for _, c := range s.Categories {
			if !(c.Weight > 0) || len(c.Prompts) == 0 {
				t.Fatalf("accepted category %q with weight %v and %d prompts", c.Name, c.Weight, len(c.Prompts))
			}
			for _, p := range c.Prompts {
				if ids[p.ID] || p.ID == "" || p.Text == "" {
					t.Fatalf("accepted prompt %+v (duplicate or empty)", p)
				}
				ids[p.ID] = true
			}
		}
		for _, n := range []int{1, len(s.Categories), 17} {
			got := s.Sample(n, 3)
			if len(got) != n {
				t.Fatalf("Sample(%d): got %d prompts", n, len(got))
			}
			if n >= len(s.Categories) && len(countBy(got, byCategory)) != len(s.Categories) {
				t.Fatalf("Sample(%d) left out a category", n)
			}
		}
	})
}
