package main

import "testing"

func TestPrintableKeepsTextAndNeutralisesControls(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Once upon a time,\n\tthere", "Once upon a time,\n\tthere"},
		{"\x1b[2Jboom\a", "\uFFFD[2Jboom\uFFFD"},
		{"back\rspace\x7f", "back\uFFFDspace\uFFFD"},
		{"故事", "故事"},
	} {
		if got := printable(tc.in); got != tc.want {
			t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
