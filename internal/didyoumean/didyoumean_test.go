package didyoumean

import "testing"

func TestSuggest(t *testing.T) {
	known := []string{"requests", "report", "rate"}
	for s, want := range map[string]string{"reqests": "requests", "Report": "report", "rat": "rate", "zzzz": "", "": ""} {
		if got := Suggest(s, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", s, got, want)
		}
	}
}
