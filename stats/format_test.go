package stats

import "testing"

func TestFormatLimit(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{120, "ms", "120 ms"},
		{0.001, "ms", "0.001 ms"}, // 1 µs: not "0 ms"
		{2.5, "%", "2.5%"},
		{3, "", "3"},
		{1.5, "/s", "1.5 /s"},
	} {
		if got := FormatLimit(tc.v, tc.unit); got != tc.want {
			t.Errorf("FormatLimit(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}
