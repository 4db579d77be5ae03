package tokenizer

import "unicode"

// A pre-tokenizer cuts text into words before BPE runs on each word, as
// the regular expressions of a Hugging Face tokenizer do. Go's regexp has
// no lookahead, so each expression llama.cpp uses is written out by hand
// over code points, following llama.cpp's unicode.cpp. A stage takes the
// lengths (in code points) of the pieces so far and cuts each of them
// further; the text between matches is kept as pieces of its own.
type stage func(cpts []rune, pieces []int) []int

// preKind names a family of pre-tokenizer expressions.
type preKind uint8

const (
	preDefault preKind = iota // llama.cpp's fallback for BPE vocabularies
	preGPT2                   // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
	preLlama3                 // (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	preQwen2                  // as llama-3 with \p{N} (one digit at a time)
	preSmolLM                 // \p{N} first, then the GPT-2 expression
)

// preSpec is what a tokenizer.ggml.pre value selects in llama.cpp.
type preSpec struct {
	kind         preKind
	ignoreMerges bool // a word that is already a token is not merged
	addBOS       bool // llama.cpp's default for add_bos_token
}

// preTable lists the tokenizer.ggml.pre values whose expressions this
// package implements, mapped as llama.cpp's llama-vocab.cpp maps them.
var preTable = map[string]preSpec{
	"default": {kind: preDefault},

	"gpt-2": {kind: preGPT2}, "phi-2": {kind: preGPT2}, "jina-es": {kind: preGPT2},
	"jina-de": {kind: preGPT2}, "gigachat": {kind: preGPT2}, "jina-v2-es": {kind: preGPT2},
	"jina-v2-de": {kind: preGPT2}, "a.x-4.0": {kind: preGPT2}, "mellum": {kind: preGPT2},
	"modern-bert": {kind: preGPT2}, "exaone4": {kind: preGPT2}, "mpt": {kind: preGPT2},
	"olmo": {kind: preGPT2}, "jais": {kind: preGPT2}, "trillion": {kind: preGPT2},
	"granite-docling": {kind: preGPT2},

	"llama3":    {kind: preLlama3, ignoreMerges: true, addBOS: true},
	"llama-v3":  {kind: preLlama3, ignoreMerges: true, addBOS: true},
	"llama-bpe": {kind: preLlama3, ignoreMerges: true, addBOS: true},
	"falcon3":   {kind: preLlama3, ignoreMerges: true, addBOS: true},
	"falcon-h1": {kind: preLlama3, ignoreMerges: true, addBOS: true},
	"pixtral":   {kind: preLlama3, ignoreMerges: true, addBOS: true},
	"midm-2.0":  {kind: preLlama3, ignoreMerges: true, addBOS: true},
	"lfm2":      {kind: preLlama3, ignoreMerges: true, addBOS: true},
	"dbrx":      {kind: preLlama3}, "smaug-bpe": {kind: preLlama3},

	"qwen2": {kind: preQwen2}, "deepseek-r1-qwen": {kind: preQwen2}, "megrez": {kind: preQwen2},
	"stablelm2": {kind: preQwen2}, "hunyuan": {kind: preQwen2},

	"smollm": {kind: preSmolLM}, "starcoder": {kind: preSmolLM}, "refact": {kind: preSmolLM},
	"command-r": {kind: preSmolLM}, "codeshell": {kind: preSmolLM}, "exaone": {kind: preSmolLM},
	"minerva-7b": {kind: preSmolLM},
}

// stages returns the splitting stages of k, applied in order.
func (k preKind) stages() []stage {
	switch k {
	case preGPT2:
		return []stage{splitGPT2}
	case preLlama3:
		return []stage{func(c []rune, p []int) []int { return splitLlama3(c, p, 3, false) }}
	case preQwen2:
		// llama.cpp runs this one through std::regex on a text where every
		// code point is collapsed to a byte; there an unassigned code point
		// counts as [^\s\p{L}\p{N}], which the hand-written llama-3 splitter
		// does not do.
		return []stage{func(c []rune, p []int) []int { return splitLlama3(c, p, 1, true) }}
	case preSmolLM:
		return []stage{splitEach(isNumber), splitGPT2}
	}
	return []stage{
		splitRuns(func(r rune) bool { return isPunct(r) || isDefaultSym(r) }),
		splitGPT2,
		splitRuns(isNumber),
		splitDigits3,
	}
}

func isNumber(r rune) bool { return classOf(r) == clsNumber }

// isPunct is \p{P} as llama.cpp's collapsed expressions see it: ASCII
// punctuation, and other code points whose category is P unless they are
// whitespace.
func isPunct(r rune) bool {
	if r < 128 {
		return unicode.IsPunct(r)
	}
	return unicode.IsPunct(r) && !unicode.IsSpace(r)
}

func isDefaultSym(r rune) bool {
	switch r {
	case '$', '+', '<', '=', '>', '^', '~', '|':
		return true
	}
	return false
}

// splitMatches cuts each piece at the matches of match, which returns the
// length of the match starting at pos (0 for none) without looking past
// end. Matches and the gaps between them become pieces, as llama.cpp's
// unicode_regex_split_stl does.
func splitMatches(cpts []rune, pieces []int, match func(cpts []rune, pos, end int) int) []int {
	out := make([]int, 0, len(pieces))
	start := 0
	for _, n := range pieces {
		end := start + n
		gap := start
		for pos := start; pos < end; {
			m := match(cpts, pos, end)
			if m == 0 {
				pos++
				continue
			}
			if pos > gap {
				out = append(out, pos-gap)
			}
			out = append(out, m)
			pos += m
			gap = pos
		}
		if end > gap {
			out = append(out, end-gap)
		}
		start = end
	}
	return out
}

// splitEach is the expression [class]: each matching code point alone.
func splitEach(in func(rune) bool) stage {
	return func(cpts []rune, pieces []int) []int {
		return splitMatches(cpts, pieces, func(c []rune, pos, _ int) int {
			if in(c[pos]) {
				return 1
			}
			return 0
		})
	}
}

// splitRuns is the expression [class]+: maximal runs.
func splitRuns(in func(rune) bool) stage {
	return func(cpts []rune, pieces []int) []int {
		return splitMatches(cpts, pieces, func(c []rune, pos, end int) int {
			n := 0
			for pos+n < end && in(c[pos+n]) {
				n++
			}
			return n
		})
	}
}

// splitDigits3 is the expression [0-9][0-9][0-9].
func splitDigits3(cpts []rune, pieces []int) []int {
	digit := func(r rune) bool { return r >= '0' && r <= '9' }
	return splitMatches(cpts, pieces, func(c []rune, pos, end int) int {
		if pos+3 <= end && digit(c[pos]) && digit(c[pos+1]) && digit(c[pos+2]) {
			return 3
		}
		return 0
	})
}

// span gives the splitters bounded access to one piece.
type span struct {
	cpts     []rune
	ini, end int
	prev     int
	out      []int
}

const outOfRange rune = -1

func (s *span) cpt(pos int) rune {
	if pos >= s.ini && pos < s.end {
		return s.cpts[pos]
	}
	return outOfRange
}

func (s *span) cls(pos int) class {
	if pos >= s.ini && pos < s.end {
		return classOf(s.cpts[pos])
	}
	return clsNone
}

// add ends a piece at end and returns its length.
func (s *span) add(end int) int {
	n := end - s.prev
	if n > 0 {
		s.out = append(s.out, n)
	}
	s.prev = end
	return n
}

func lowerASCII(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// contraction returns the length of 's, 't, 're, 've, 'm, 'll or 'd at pos
// (0 if none); fold makes it case-insensitive.
func (s *span) contraction(pos int, fold bool) int {
	if s.cpt(pos) != '\'' || pos+1 >= s.end {
		return 0
	}
	low := func(r rune) rune {
		if fold {
			return lowerASCII(r)
		}
		return r
	}
	a := low(s.cpt(pos + 1))
	switch a {
	case 's', 't', 'm', 'd':
		return 2
	}
	if pos+2 < s.end {
		b := low(s.cpt(pos + 2))
		if a == 'r' && b == 'e' || a == 'v' && b == 'e' || a == 'l' && b == 'l' {
			return 3
		}
	}
	return 0
}

// splitGPT2 is llama.cpp's unicode_regex_split_custom_gpt2:
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func splitGPT2(cpts []rune, pieces []int) []int {
	s := span{cpts: cpts, out: make([]int, 0, len(pieces))}
	start := 0
	for _, n := range pieces {
		s.ini, s.end, s.prev = start, start+n, start
		start += n
		for pos := s.ini; pos < s.end; {
			c := s.cpt(pos)
			f := s.cls(pos)
			if m := s.contraction(pos, false); m > 0 {
				pos += s.add(pos + m)
				continue
			}
			f2 := f
			if c == ' ' {
				f2 = s.cls(pos + 1)
			}
			if f2 == clsLetter || f2 == clsNumber || f2 == clsOther {
				want := f2
				if c == ' ' {
					pos++
				}
				for f2 == want {
					pos++
					f2 = s.cls(pos)
				}
				s.add(pos)
				continue
			}
			ws := 0
			for s.cls(pos+ws) == clsSpace {
				ws++
			}
			if ws > 1 && s.cpt(pos+ws) != outOfRange { // \s+(?!\S)
				pos += ws - 1
				s.add(pos)
				continue
			}
			if ws > 0 { // \s+
				pos += ws
				s.add(pos)
				continue
			}
			pos++ // no match: one code point alone
			s.add(pos)
		}
	}
	return s.out
}

// splitLlama3 is llama.cpp's unicode_regex_split_custom_llama3 with the
// digit group length as a parameter (3 for llama-3, 1 for qwen2):
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// undefOther makes unassigned code points count as [^\s\p{L}\p{N}].
func splitLlama3(cpts []rune, pieces []int, digits int, undefOther bool) []int {
	s := span{cpts: cpts, out: make([]int, 0, len(pieces))}
	defined := func(f class) bool { return f != clsNone && (undefOther || f != clsUndefined) }
	start := 0
	for _, n := range pieces {
		s.ini, s.end, s.prev = start, start+n, start
		start += n
		for pos := s.ini; pos < s.end; {
			c := s.cpt(pos)
			f := s.cls(pos)
			if m := s.contraction(pos, true); m > 0 {
				pos += s.add(pos + m)
				continue
			}
			// [^\r\n\p{L}\p{N}]?\p{L}+
			if !(c == '\r' || c == '\n' || f == clsNumber) {
				if f == clsLetter || s.cls(pos+1) == clsLetter {
					pos++
					for s.cls(pos) == clsLetter {
						pos++
					}
					s.add(pos)
					continue
				}
			}
			// \p{N}{1,digits}
			if f == clsNumber {
				ini := pos
				for s.cls(pos) == clsNumber {
					pos++
					if pos-ini >= digits {
						s.add(pos)
						ini = pos
					}
				}
				s.add(pos)
				continue
			}
			// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
			f2 := f
			if c == ' ' {
				f2 = s.cls(pos + 1)
			}
			punct := func(g class) bool {
				return g != clsSpace && g != clsLetter && g != clsNumber && defined(g)
			}
			if f2 != clsSpace && f2 != clsLetter && f2 != clsNumber && defined(f) {
				if c == ' ' {
					pos++
				}
				for punct(f2) {
					pos++
					f2 = s.cls(pos)
				}
				for c2 := s.cpt(pos); c2 == '\r' || c2 == '\n'; c2 = s.cpt(pos) {
					pos++
				}
				s.add(pos)
				continue
			}
			ws, lastNL := 0, 0
			for s.cls(pos+ws) == clsSpace {
				if c2 := s.cpt(pos + ws); c2 == '\r' || c2 == '\n' {
					lastNL = pos + ws + 1
				}
				ws++
			}
			if lastNL > 0 { // \s*[\r\n]+
				pos = lastNL
				s.add(pos)
				continue
			}
			if ws > 1 && s.cpt(pos+ws) != outOfRange { // \s+(?!\S)
				pos += ws - 1
				s.add(pos)
				continue
			}
			if ws > 0 { // \s+
				pos += ws
				s.add(pos)
				continue
			}
			pos++
			s.add(pos)
		}
	}
	return s.out
}
