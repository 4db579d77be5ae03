package tokenizer

import "unicode"

// class is the coarse Unicode class the pre-tokenizers look at. It follows
// llama.cpp's code-point flags: whitespace wins over the general category;
// letters (L*), numbers (N*) and everything else that is assigned (marks,
// punctuation, symbols, separators, controls, surrogates, private use) are
// told apart; unassigned code points are clsUndefined; clsNone marks a
// position outside the piece being split.
type class uint8

const (
	clsNone class = iota
	clsUndefined
	clsSpace
	clsLetter
	clsNumber
	clsOther
)

var asciiClass = func() (t [128]class) {
	for r := range rune(128) {
		t[r] = classOfSlow(r)
	}
	return t
}()

func classOf(r rune) class {
	if r >= 0 && r < 128 {
		return asciiClass[r]
	}
	return classOfSlow(r)
}

func classOfSlow(r rune) class {
	switch {
	case r < 0 || r > unicode.MaxRune:
		return clsUndefined
	case unicode.IsSpace(r):
		return clsSpace
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	case unicode.In(r, unicode.M, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs):
		return clsOther
	}
	return clsUndefined
}

// utf8Len is llama.cpp's unicode_len_utf8: the length a sequence claims
// from its first byte alone (a stray continuation byte counts as one).
func utf8Len(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// decodeCpts splits s into code points the way llama.cpp's
// unicode_cpts_from_utf8 does: sequences are decoded from their lead byte
// without rejecting overlong forms or surrogates, and a byte that does not
// start a complete sequence becomes U+FFFD. Code points above U+10FFFF
// (which llama.cpp cannot encode again) also become U+FFFD.
func decodeCpts(s string, buf []rune) []rune {
	for i := 0; i < len(s); {
		r, n := decodeCpt(s, i)
		buf = append(buf, r)
		i += n
	}
	return buf
}

func decodeCpt(s string, i int) (rune, int) {
	const bad = 0xFFFD
	c := s[i]
	cont := func(k int) bool { return i+k < len(s) && s[i+k]&0xC0 == 0x80 }
	switch {
	case c&0x80 == 0:
		return rune(c), 1
	case c&0x40 == 0:
		return bad, 1
	case c&0x20 == 0:
		if !cont(1) {
			return bad, 1
		}
		return rune(c&0x1F)<<6 | rune(s[i+1]&0x3F), 2
	case c&0x10 == 0:
		if !cont(1) || !cont(2) {
			return bad, 1
		}
		return rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
	case c&0x08 == 0:
		if !cont(1) || !cont(2) || !cont(3) {
			return bad, 1
		}
		r := rune(c&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F)
		if r > unicode.MaxRune {
			return bad, 1
		}
		return r, 4
	}
	return bad, 1
}

// appendCpt encodes r as llama.cpp's unicode_cpt_to_utf8 does (surrogates
// included, unlike utf8.AppendRune).
func appendCpt(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
	case r < 0x10000:
		return append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
	}
	return append(b, 0xF0|byte(r>>18), 0x80|byte(r>>12&0x3F), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
}

// byteEnc maps each byte to the printable character GPT-2's byte-level BPE
// uses for it (bytes that are printable Latin-1 stand for themselves, the
// other 68 are moved to U+0100 and up); byteDec is its inverse.
var byteEnc, byteDec = func() (enc [256]string, dec map[rune]byte) {
	dec = make(map[rune]byte, 256)
	n := 0
	for b := range 256 {
		r := rune(b)
		if !(b >= 0x21 && b <= 0x7E || b >= 0xA1 && b <= 0xAC || b >= 0xAE) {
			r = rune(256 + n)
			n++
		}
		enc[b] = string(r)
		dec[r] = byte(b)
	}
	return enc, dec
}()
