package stats

import "strconv"

// FormatLimit writes a threshold's limit exactly as its rule gives it,
// with its unit: "120 ms", "0.001 ms", "5%", "2". Every writer that shows
// a limit (the reports, the alerts) uses it, so that a limit reads the
// same everywhere and a small one is never rounded to 0.
func FormatLimit(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	switch unit {
	case "":
		return s
	case "%":
		return s + "%"
	}
	return s + " " + unit
}
