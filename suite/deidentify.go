package suite

import (
	"regexp"
	"strings"
)

// The placeholders Deidentify puts in place of personal data.
const (
	MaskPhone = "[PHONE]"
	MaskEmail = "[EMAIL]"
	MaskID    = "[ID]"
	MaskCard  = "[CARD]"
)

// MaskCounts counts the values Deidentify replaced, by placeholder
// ("[PHONE]", "[EMAIL]", "[ID]", "[CARD]").
type MaskCounts map[string]int

// Add adds o's counts to m.
func (m MaskCounts) Add(o MaskCounts) {
	for k, v := range o {
		m[k] += v
	}
}

// emailRE matches an e-mail address: a local part, @, and a domain whose
// last label is alphabetic. RE2 runs in linear time whatever the input.
var emailRE = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`)

// Deidentify replaces the personal data in text by typed placeholders and
// counts what it replaced:
//
//   - [EMAIL]: e-mail addresses.
//   - [ID]: Chinese resident identity numbers (18 characters, the last may
//     be X, written whole or 6-8-4) whose ISO 7064 MOD 11-2 check digit is
//     valid and whose birth date is plausible (year 1900–2099, month 01–12,
//     day 01–31); US social security numbers written 3-2-4 with dashes
//     (area not 000, 666 or 9xx; group not 00; serial not 0000).
//   - [CARD]: bank card numbers of 13–19 digits that pass the Luhn check,
//     written whole or in groups of four (the last group 1–4 digits; also
//     4-6-5 and 4-6-4) separated by single spaces or dashes.
//   - [PHONE]: numbers written with a leading + (8–15 digits, any of the
//     separators space, dash, dot and parentheses); mainland China mobile
//     numbers 1[3-9]XXXXXXXXX (whole or 3-4-4 with spaces, dashes or
//     dots: "138.1234.5678"); North American numbers
//     written 3-3-4 or 1-3-3-4 with separators, "(555) 234-5678"; and
//     national numbers with a trunk 0 written in at least two groups,
//     10–12 digits in all ("010-12345678", "020 7946 0958",
//     "06 12 34 56 78"), or 00 and an international number.
//
// Numbers are read as runs of ASCII digit groups joined by one or two of
// space, dash, dot and parentheses (ASCII or full-width, "（010）12345678");
// a run may touch letters or CJK text on either side ("电话138.1234.5678。").
// A value is a stretch of whole groups of
// a run, so a digit is never split from its neighbours, and a group after
// a dot (a decimal part) never starts a value. Everything else is left
// alone: years, dates, quantities, prices, times, version numbers, a bare
// ten-digit number, an 18-digit number whose check digit is wrong, a
// 16-digit number that fails Luhn. Full-width digits are not recognised.
func Deidentify(text string) (string, MaskCounts) {
	counts := MaskCounts{}
	text = emailRE.ReplaceAllStringFunc(text, func(string) string {
		counts[MaskEmail]++
		return MaskEmail
	})
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); {
		r, ok := scanRun(text, i)
		if !ok {
			i++
			continue
		}
		for g := 0; g < len(r.groups); {
			j, mask, start := r.match(text, g)
			if mask == "" {
				g++
				continue
			}
			b.WriteString(text[last:start])
			b.WriteString(mask)
			last = r.groups[j].end
			counts[mask]++
			g = j + 1
		}
		i = r.groups[len(r.groups)-1].end
	}
	if last == 0 {
		return text, counts
	}
	b.WriteString(text[last:])
	return b.String(), counts
}

// numRun is a run of digit groups and the separators between them.
type numRun struct {
	plus   bool     // the run starts with "+"
	groups []span   // the digit groups (a final X of an ID included)
	seps   []string // seps[k] is the text between groups k and k+1
}

type span struct{ start, end int }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// scanRun reads the run of digit groups that starts at i: a digit, or "+"
// or "(" before a digit, not preceded by a digit.
func scanRun(s string, i int) (numRun, bool) {
	var r numRun
	if i > 0 && isDigit(s[i-1]) {
		return r, false
	}
	j := i
	if s[j] == '+' {
		r.plus = true
		j++
	}
	j += openParenAt(s, j)
	if j >= len(s) || !isDigit(s[j]) {
		return r, false
	}
	total := 0 // digits in the run so far
	for {
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		total += k - j
		// An ID's check character X ends the run.
		if (k-j == 17 || total == 17) && k < len(s) && (s[k] == 'X' || s[k] == 'x') && (k+1 == len(s) || !isAlnum(s[k+1])) {
			r.groups = append(r.groups, span{j, k + 1})
			return r, true
		}
		r.groups = append(r.groups, span{j, k})
		sep := separatorAt(s, k)
		if sep == 0 || len(r.groups) >= 64 {
			return r, true
		}
		r.seps = append(r.seps, halfWidthParens.Replace(s[k:k+sep]))
		j = k + sep
	}
}

// separatorAt returns the length in bytes of the separator at k when a
// digit follows it, else 0. A separator is one of " ", "-", "." or a
// parenthesis, or one of each: ")", "(", ") ", " (", ")-", "-(". A
// parenthesis may be full-width, "（" or "）", as Chinese text writes an
// area code: "（010）12345678".
func separatorAt(s string, k int) int {
	kind, n := sepChar(s, k)
	if n == 0 {
		return 0
	}
	if k+n < len(s) && isDigit(s[k+n]) {
		return n
	}
	kind2, n2 := sepChar(s, k+n)
	if n2 == 0 || kind2 == kind || k+n+n2 >= len(s) || !isDigit(s[k+n+n2]) {
		return 0
	}
	return n + n2
}

// sepChar returns the kind ('-' for space, dash and dot; '(' for a
// parenthesis, ASCII or full-width) and the length in bytes of the
// separator character at k, or 0, 0.
func sepChar(s string, k int) (byte, int) {
	if k >= len(s) {
		return 0, 0
	}
	switch s[k] {
	case ' ', '-', '.':
		return '-', 1
	case '(', ')':
		return '(', 1
	}
	if strings.HasPrefix(s[k:], "（") || strings.HasPrefix(s[k:], "）") {
		return '(', len("（")
	}
	return 0, 0
}

// halfWidthParens writes full-width parentheses as ASCII ones, so that a
// run's separators compare alike whichever was written.
var halfWidthParens = strings.NewReplacer("（", "(", "）", ")")

// openParenAt returns the length in bytes of the opening parenthesis, "("
// or "（", at i, else 0.
func openParenAt(s string, i int) int {
	switch {
	case i < len(s) && s[i] == '(':
		return 1
	case strings.HasPrefix(s[i:], "（"):
		return len("（")
	}
	return 0
}

// openParenBefore returns the length in bytes of the opening parenthesis,
// "(" or "（", that ends just before i, else 0.
func openParenBefore(s string, i int) int {
	switch {
	case i > 0 && s[i-1] == '(':
		return 1
	case strings.HasSuffix(s[:i], "（"):
		return len("（")
	}
	return 0
}

// paren reports whether group g opens with "(" (or "（").
func (r *numRun) paren(s string, g int) bool {
	return openParenBefore(s, r.groups[g].start) > 0
}

// match looks for a value starting at group g, the longest first. It
// returns the last group of the value, its placeholder ("" when no value
// starts at g) and the byte offset where the replaced text starts: the
// first digit, or the "+" or "(" before it for a phone number.
func (r *numRun) match(s string, g int) (int, string, int) {
	if g > 0 && r.seps[g-1] == "." {
		return 0, "", 0 // a decimal part
	}
	// A value has 8 (a phone number with +) to 19 digits (a card), and
	// at most 6 groups unless it starts with "+".
	maxGroups := 6
	if g == 0 && r.plus {
		maxGroups = 19
	}
	var digits []int // digits[k]: digits in groups g..g+k
	for k, n := g, 0; k < len(r.groups) && k-g < maxGroups; k++ {
		n += r.groups[k].end - r.groups[k].start
		if n > 19 {
			break
		}
		digits = append(digits, n)
	}
	start := r.groups[g].start
	for j := g + len(digits) - 1; j >= g && digits[j-g] >= 8; j-- {
		if j+1 < len(r.groups) && r.seps[j] == "." {
			continue // would cut a decimal part off
		}
		v := r.value(s, g, j)
		switch {
		case v.isID():
			return j, MaskID, start
		case v.isCard():
			return j, MaskCard, start
		case v.isPhone():
			if v.paren {
				start -= openParenBefore(s, start)
			}
			if v.plus {
				start--
			}
			return j, MaskPhone, start
		}
	}
	return 0, "", 0
}

// value is a candidate: groups g..j of a run.
type value struct {
	digits string   // the groups' characters, concatenated
	sizes  []int    // the groups' lengths
	seps   []string // the separators between them
	plus   bool     // preceded by "+"
	paren  bool     // the first group is in parentheses: "(555) 234-5678"
}

func (r *numRun) value(s string, g, j int) value {
	v := value{plus: g == 0 && r.plus, seps: r.seps[g:j]}
	// "(" counts only as the opening of an area code: "(555) 234-5678".
	v.paren = r.paren(s, g) && j > g && strings.HasPrefix(r.seps[g], ")")
	var b strings.Builder
	for k := g; k <= j; k++ {
		b.WriteString(s[r.groups[k].start:r.groups[k].end])
		v.sizes = append(v.sizes, r.groups[k].end-r.groups[k].start)
	}
	v.digits = b.String()
	return v
}

// plain reports whether the value has no "+" and its separators are all
// the same, one of allowed. An opening parenthesis before it is left out
// of the value.
func (v value) plain(allowed ...string) bool {
	if v.plus {
		return false
	}
	for _, s := range v.seps {
		if s != v.seps[0] {
			return false
		}
		ok := false
		for _, a := range allowed {
			ok = ok || s == a
		}
		if !ok {
			return false
		}
	}
	return true
}

func (v value) shape(sizes ...int) bool {
	if len(sizes) != len(v.sizes) {
		return false
	}
	for i := range sizes {
		if sizes[i] != v.sizes[i] {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func (v value) isID() bool {
	d := v.digits
	if len(d) == 18 && (len(v.sizes) == 1 || v.shape(6, 8, 4)) && v.plain(" ", "-") {
		return validCNID(d)
	}
	if v.shape(3, 2, 4) && v.plain("-") {
		area, group, serial := d[0:3], d[3:5], d[5:9]
		return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
	}
	return false
}

// validCNID checks a Chinese resident identity number: 17 digits and a
// check character, ISO 7064 MOD 11-2, with a plausible birth date.
func validCNID(d string) bool {
	if len(d) != 18 || !allDigits(d[:17]) || d[0] == '0' {
		return false
	}
	weights := [17]int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i, w := range weights {
		sum += int(d[i]-'0') * w
	}
	check := "10X98765432"[sum%11]
	last := d[17]
	if last == 'x' {
		last = 'X'
	}
	if last != check {
		return false
	}
	year, month, day := atoi(d[6:10]), atoi(d[10:12]), atoi(d[12:14])
	return 1900 <= year && year <= 2099 && 1 <= month && month <= 12 && 1 <= day && day <= 31
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = 10*n + int(s[i]-'0')
	}
	return n
}

func (v value) isCard() bool {
	d := v.digits
	if len(d) < 13 || len(d) > 19 || !allDigits(d) || !v.plain(" ", "-") {
		return false
	}
	switch {
	case len(v.sizes) == 1, v.shape(4, 6, 5), v.shape(4, 6, 4):
	default:
		for i, n := range v.sizes {
			if i < len(v.sizes)-1 && n != 4 || i == len(v.sizes)-1 && (n < 1 || n > 4) {
				return false
			}
		}
	}
	return luhn(d)
}

// luhn reports whether the digits pass the Luhn check.
func luhn(d string) bool {
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if (len(d)-1-i)%2 == 1 {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}

func (v value) isPhone() bool {
	d := v.digits
	if !allDigits(d) {
		return false
	}
	if v.plus {
		return 8 <= len(d) && len(d) <= 15 && d[0] != '0'
	}
	// Parentheses: only around the first group.
	for k, s := range v.seps {
		if strings.Contains(s, "(") || strings.Contains(s, ")") && (k != 0 || !v.paren) {
			return false
		}
	}
	sameSeps := func(allowed string) bool {
		for _, s := range v.seps {
			s = strings.TrimPrefix(s, ")")
			if s != "" && (len(s) != 1 || !strings.Contains(allowed, s)) {
				return false
			}
		}
		return true
	}
	switch {
	case len(d) == 11 && d[0] == '1' && '3' <= d[1] && d[1] <= '9' &&
		(len(v.sizes) == 1 || v.shape(3, 4, 4) && v.plain(" ", "-", ".")):
		return true // mainland China mobile
	case v.shape(3, 3, 4) && d[0] >= '2' && sameSeps(" -."),
		v.shape(1, 3, 3, 4) && d[0] == '1' && d[1] >= '2' && !v.paren && sameSeps(" -."):
		return true // North America
	case strings.HasPrefix(d, "00") && len(v.sizes) >= 2 && 10 <= len(d) && len(d) <= 17 && d[2] != '0' && sameSeps(" -."):
		return true // 00 and an international number
	case 10 <= len(d) && len(d) <= 12 && d[0] == '0' && d[1] != '0' && len(v.sizes) >= 2 && sameSeps(" -."):
		return true // national number with a trunk 0
	}
	return false
}
