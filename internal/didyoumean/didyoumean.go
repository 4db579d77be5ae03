// Package didyoumean finds the known name a mistyped one most likely
// meant: the one rule behind the "did you mean" of suite fields and of
// command-line flags.
package didyoumean

import "strings"

// Suggest returns the known name closest to s, if it is a likely typo:
// within a Levenshtein distance of a third of the name's length (at
// least 1), compared case-insensitively; "" when none is.
func Suggest(s string, known []string) string {
	best, bestD := "", 0
	for _, k := range known {
		limit := max(1, len(k)/3)
		if d := distance(strings.ToLower(s), k); d <= limit && (best == "" || d < bestD) {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
