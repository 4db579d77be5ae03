// Package tokenizer turns text into token ids and back for the embedded
// engine, from the vocabulary stored in a GGUF file, and gives the same ids
// llama.cpp gives for the same file.
//
// Two vocabulary kinds are supported, chosen by tokenizer.ggml.model:
//
//   - "llama": SentencePiece-style BPE (llama.cpp's SPM). Spaces are written
//     as U+2581 "▁", a space is put before the text (the add-space-prefix
//     rule), pairs of symbols are merged by the score of the token they
//     form, and characters missing from the vocabulary fall back to byte
//     tokens <0x00>..<0xFF>.
//   - "gpt2": byte-level BPE. The text is first cut into words by the
//     pre-tokenizer that tokenizer.ggml.pre names ("gpt-2", "llama-bpe"
//     for llama-3, "qwen2", "smollm", "default" and their aliases, written
//     by hand because Go's regexp has no lookahead), each byte is mapped
//     to a printable character, and merges are applied by rank.
//
// Special tokens (control, user-defined and unknown types), for example
// "<|im_start|>", are recognised in the text as single tokens when Encode
// is asked to parse them; user-defined ones always are, as in llama.cpp.
//
//	f, err := gguf.Open("model.gguf")
//	if err != nil { ... }
//	defer f.Close()
//	tok, err := tokenizer.FromGGUF(f)
//	if err != nil { ... }
//	ids := tok.Encode("Once upon a time", true, false) // [BOS, ...]
//	dec := tok.NewStreamDecoder()
//	for _, id := range generated {
//		if tok.IsEOG(id) { break }
//		fmt.Print(dec.Next(id)) // only whole UTF-8 characters
//	}
//
// Decode is the plain concatenation of token pieces, which is what a
// streaming client sees: it does not strip the leading space of an SPM text
// nor apply llama.cpp's clean-up of spaces before punctuation, both of which
// only llama_detokenize does. Control and unknown tokens decode to nothing.
//
// A Tokenizer is immutable after New and safe for concurrent use. A
// StreamDecoder holds the state of one stream and is not.
package tokenizer

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrUnsupported is wrapped by the errors for a vocabulary kind or
// pre-tokenizer this package does not implement.
var ErrUnsupported = errors.New("tokenizer: unsupported")

// Token types, the values of tokenizer.ggml.token_type.
const (
	TypeUndefined   int32 = 0
	TypeNormal      int32 = 1
	TypeUnknown     int32 = 2
	TypeControl     int32 = 3
	TypeUserDefined int32 = 4
	TypeUnused      int32 = 5
	TypeByte        int32 = 6
)

// Vocab is a vocabulary as a GGUF file stores it. New uses every field as
// given; FromGGUF fills in llama.cpp's defaults for absent keys.
type Vocab struct {
	Model  string    // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE)
	Pre    string    // tokenizer.ggml.pre, for "gpt2" only; "" means "default"
	Tokens []string  // token texts, indexed by id
	Scores []float32 // per token; nil means all 0 (merge priority for "llama")
	Types  []int32   // per token, Type* values; nil means all TypeNormal
	Merges []string  // "left right" pairs by rank, for "gpt2"

	// Special ids, -1 when none.
	BOS, EOS, UNK, PAD int32
	// EOT is the end-of-turn token; -1 makes New look for one by its text
	// ("<|eot_id|>", "<|im_end|>", "<|end|>", ...) as llama.cpp does.
	EOT int32
	// EOG lists further ids that end generation (EOS, EOT and tokens whose
	// text llama.cpp recognises, such as "<|endoftext|>", are added by New).
	EOG []int32

	AddBOS, AddEOS bool // Encode with addSpecial puts BOS first / EOS last
	AddSpacePrefix bool // "llama" only: a space goes before the text and after each special token
}

// kind of vocabulary.
type kind uint8

const (
	kindSPM kind = iota
	kindBPE
)

// attr is llama.cpp's llama_token_attr.
type attr uint16

const (
	attrUnknown attr = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte

	attrUndefined attr = 0
)

func typeAttr(t int32) attr {
	switch t {
	case TypeNormal:
		return attrNormal
	case TypeUnknown:
		return attrUnknown
	case TypeControl:
		return attrControl
	case TypeUserDefined:
		return attrUserDefined
	case TypeUnused:
		return attrUnused
	case TypeByte:
		return attrByte
	}
	return attrUndefined
}

// mergePair is one entry of the BPE merge table.
type mergePair struct{ left, right string }

// mergeVal is the rank of a merge and the token it makes (-1 if none).
type mergeVal struct{ rank, id int32 }

// Tokenizer encodes and decodes text with one vocabulary. Build it with New
// or FromGGUF.
type Tokenizer struct {
	kind         kind
	pre          preSpec
	stages       []stage
	tokens       []string
	scores       []float32
	attrs        []attr
	ids          map[string]int32
	merges       map[mergePair]int32 // rank of each merge, by text
	mergeIDs     map[uint64]mergeVal // the same, by the ids of the two sides
	oddMerges    bool                // some merge has a side that is not a token
	byteIDs      [256]int32          // byte-level: the token of each byte's character
	pieces       []string            // decoded text of each id
	maxLen       int                 // bytes in the longest token text
	special      []int32             // special-token candidates, longest text first
	spmBytes     [256]int32
	eog          []bool
	bos, eos     int32
	eot, unk     int32
	pad          int32
	addBOS       bool
	addEOS       bool
	addSpacePref bool
}

// eotNames are the texts llama.cpp takes for an end-of-turn token, in the
// order this package prefers them when several are present.
var eotNames = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
	"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
	"<end_of_utterance>",
}

// eogNames are the texts llama.cpp treats as end of generation.
var eogNames = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
	"<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>",
	"_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>",
	"<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
}

// New checks v and builds its tokenizer. It fails when the model or
// pre-tokenizer is not supported (wrapping ErrUnsupported), when Scores or
// Types do not have one entry per token, when a token text repeats, when a
// special id is outside the vocabulary, or when AddBOS/AddEOS ask for a
// token that is not set.
func New(v Vocab) (*Tokenizer, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, errors.New("tokenizer: empty vocabulary")
	}
	if int64(n) > 1<<31-1 {
		return nil, fmt.Errorf("tokenizer: %d tokens is too many", n)
	}
	t := &Tokenizer{
		bos: v.BOS, eos: v.EOS, eot: v.EOT, unk: v.UNK, pad: v.PAD,
		addBOS: v.AddBOS, addEOS: v.AddEOS,
	}
	switch v.Model {
	case "llama":
		t.kind = kindSPM
		t.addSpacePref = v.AddSpacePrefix
	case "gpt2":
		t.kind = kindBPE
		pre := v.Pre
		if pre == "" {
			pre = "default"
		}
		spec, ok := preTable[pre]
		if !ok {
			return nil, fmt.Errorf("tokenizer: pre-tokenizer %q: %w", v.Pre, ErrUnsupported)
		}
		t.pre = spec
		t.stages = spec.kind.stages()
	default:
		return nil, fmt.Errorf("tokenizer: model %q: %w", v.Model, ErrUnsupported)
	}
	if v.Scores != nil && len(v.Scores) != n {
		return nil, fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) != n {
		return nil, fmt.Errorf("tokenizer: %d token types for %d tokens", len(v.Types), n)
	}
	for _, s := range []struct {
		name string
		id   int32
	}{{"BOS", v.BOS}, {"EOS", v.EOS}, {"UNK", v.UNK}, {"PAD", v.PAD}, {"EOT", v.EOT}} {
		if s.id < -1 || int(s.id) >= n {
			return nil, fmt.Errorf("tokenizer: %s id %d outside the vocabulary of %d tokens", s.name, s.id, n)
		}
	}
	for _, id := range v.EOG {
		if id < 0 || int(id) >= n {
			return nil, fmt.Errorf("tokenizer: end-of-generation id %d outside the vocabulary of %d tokens", id, n)
		}
	}
	if v.AddBOS && v.BOS < 0 {
		return nil, errors.New("tokenizer: AddBOS is set but there is no BOS token")
	}
	if v.AddEOS && v.EOS < 0 {
		return nil, errors.New("tokenizer: AddEOS is set but there is no EOS token")
	}

	t.tokens = make([]string, n)
	t.scores = make([]float32, n)
	t.attrs = make([]attr, n)
	t.ids = make(map[string]int32, n)
	for i, s := range v.Tokens {
		if s == "" { // as llama.cpp does
			s = "[EMPTY_" + strconv.Itoa(i) + "]"
		}
		if prev, dup := t.ids[s]; dup {
			return nil, fmt.Errorf("tokenizer: token %q has ids %d and %d", s, prev, i)
		}
		t.ids[s] = int32(i)
		t.tokens[i] = s
		t.maxLen = max(t.maxLen, len(s))
		t.attrs[i] = attrNormal
		if v.Types != nil {
			t.attrs[i] = typeAttr(v.Types[i])
		}
		if v.Scores != nil {
			t.scores[i] = v.Scores[i]
		}
	}

	if t.kind == kindBPE {
		t.merges = make(map[mergePair]int32, len(v.Merges))
		for i, m := range v.Merges {
			var p mergePair
			if k := strings.IndexByte(m[min(1, len(m)):], ' '); k >= 0 {
				k += min(1, len(m))
				p = mergePair{m[:k], m[k+1:]}
			}
			if _, ok := t.merges[p]; !ok {
				t.merges[p] = int32(i)
			}
		}
		t.mergeIDs = make(map[uint64]mergeVal, len(t.merges))
		for p, rank := range t.merges {
			l, okl := t.ids[p.left]
			r, okr := t.ids[p.right]
			if !okl || !okr {
				t.oddMerges = true
				continue
			}
			id, ok := t.ids[p.left+p.right]
			if !ok {
				id = -1
			}
			t.mergeIDs[uint64(l)<<32|uint64(r)] = mergeVal{rank: rank, id: id}
		}
		for b := range 256 {
			t.byteIDs[b] = -1
			if id, ok := t.ids[byteEnc[b]]; ok {
				t.byteIDs[b] = id
			}
		}
	}
	for b := range 256 {
		t.spmBytes[b] = t.byteToken(byte(b))
	}

	t.findEOG(v.EOG)

	for id, a := range t.attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.special = append(t.special, int32(id))
		}
	}
	slices.SortStableFunc(t.special, func(a, b int32) int {
		return cmp.Compare(len(t.tokens[b]), len(t.tokens[a]))
	})

	t.pieces = make([]string, n)
	for id := range t.tokens {
		t.pieces[id] = t.piece(int32(id))
	}
	return t, nil
}

// findEOG picks the end-of-turn token when none was given and builds the
// end-of-generation set, marking those tokens as control as llama.cpp does.
func (t *Tokenizer) findEOG(extra []int32) {
	if t.eot < 0 {
		for _, name := range eotNames {
			if id, ok := t.ids[name]; ok {
				t.eot = id
				break
			}
		}
	}
	if t.eot >= 0 {
		t.attrs[t.eot] |= attrControl
	}
	t.eog = make([]bool, len(t.tokens))
	for _, id := range extra {
		t.eog[id] = true
	}
	for _, name := range eogNames {
		if id, ok := t.ids[name]; ok {
			t.eog[id] = true
			t.attrs[id] |= attrControl
		}
	}
	for _, id := range []int32{t.eos, t.eot} {
		if id >= 0 {
			t.eog[id] = true
		}
	}
	// llama.cpp's workarounds: with <|return|> and <|call|> (gpt-oss) or
	// <|calls|> and <|flush|> (solar-open), <|end|> does not end generation;
	// with <|tool_response> (gemma-4), </s> does not.
	has := func(name string) bool { id, ok := t.ids[name]; return ok && t.eog[id] }
	if end, ok := t.ids["<|end|>"]; ok && t.eog[end] &&
		(has("<|return|>") && has("<|call|>") || has("<|calls|>") && has("<|flush|>")) {
		t.eog[end] = false
		t.attrs[end] = attrUserDefined
	}
	if s, ok := t.ids["</s>"]; ok && t.eog[s] && has("<|tool_response>") {
		t.eog[s] = false
		t.attrs[s] = attrNormal
	}
}

// byteToken is llama.cpp's byte_to_token for SentencePiece vocabularies:
// <0xXX>, else the byte itself as a token, else UNK (-1 if none).
func (t *Tokenizer) byteToken(b byte) int32 {
	const hex = "0123456789ABCDEF"
	if id, ok := t.ids[string([]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'})]; ok {
		return id
	}
	if id, ok := t.ids[string([]byte{b})]; ok {
		return id
	}
	return t.unk
}

// piece is llama.cpp's token_to_piece with special = false.
func (t *Tokenizer) piece(id int32) string {
	a, text := t.attrs[id], t.tokens[id]
	switch {
	case a&(attrUnknown|attrControl) != 0:
		return ""
	case a&attrUserDefined != 0:
		return text
	case a&attrNormal != 0:
		if t.kind == kindSPM {
			return strings.ReplaceAll(text, "▁", " ")
		}
		return decodeByteLevel(text)
	case a&attrByte != 0:
		if len(text) == 6 && strings.HasPrefix(text, "<0x") && text[5] == '>' {
			if b, err := strconv.ParseUint(text[3:5], 16, 8); err == nil {
				return string([]byte{byte(b)})
			}
		}
		if len(text) == 1 { // a byte stored as itself
			return text
		}
	}
	return ""
}

// decodeByteLevel maps the characters of a byte-level BPE token back to
// bytes; a character outside the byte map is written as llama.cpp writes
// it.
func decodeByteLevel(text string) string {
	var b []byte
	for i := 0; i < len(text); {
		r, n := decodeCpt(text, i)
		if c, ok := byteDec[r]; ok {
			b = append(b, c)
		} else {
			b = append(b, "[UNK_BYTE_0x"...)
			for _, c := range []byte(text[i : i+n]) {
				b = append(b, fmt.Sprintf("%02x", c)...)
			}
			b = append(b, text...)
			b = append(b, ']')
		}
		i += n
	}
	return string(b)
}

// VocabSize returns the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// BOS returns the beginning-of-sequence id, or -1.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the end-of-sequence id, or -1.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT returns the end-of-turn id, or -1.
func (t *Tokenizer) EOT() int32 { return t.eot }

// AddBOS reports whether Encode with addSpecial puts BOS first.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// IsEOG reports whether id ends generation (EOS, EOT and the other
// end-of-generation tokens).
func (t *Tokenizer) IsEOG(id int32) bool {
	return id >= 0 && int(id) < len(t.eog) && t.eog[id]
}

// IsControl reports whether id is a control token (it decodes to nothing).
func (t *Tokenizer) IsControl(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&attrControl != 0
}

// Text returns the vocabulary text of id as stored ("▁Hello", "<0x0A>",
// "<|im_end|>"), or "" when id is outside the vocabulary.
func (t *Tokenizer) Text(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// Lookup returns the id whose vocabulary text is exactly text.
func (t *Tokenizer) Lookup(text string) (int32, bool) {
	id, ok := t.ids[text]
	return id, ok
}

// Piece returns the bytes id stands for in output text: spaces for "▁" in
// SentencePiece tokens, the byte of a byte token (possibly part of a
// character), nothing for control and unknown tokens or an id outside the
// vocabulary.
func (t *Tokenizer) Piece(id int32) string {
	if id < 0 || int(id) >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// Decode concatenates the pieces of ids. The result may hold invalid UTF-8
// when the ids split a character.
func (t *Tokenizer) Decode(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(t.Piece(id))
	}
	return b.String()
}

// Encode returns the ids of text. With addSpecial, BOS and EOS are added
// as the vocabulary asks (AddBOS, AddEOS); with parseSpecial, the texts of
// control tokens (such as "<|im_start|>" or "<s>") become those tokens
// instead of being spelled out. Invalid UTF-8 is accepted: SentencePiece
// vocabularies keep its bytes through byte tokens, byte-level BPE replaces
// each bad byte with U+FFFD as llama.cpp does.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	out := make([]int32, 0, len(text)/3+2)
	if addSpecial && t.addBOS {
		out = append(out, t.bos)
	}
	frags := t.partition(text, parseSpecial)
	switch t.kind {
	case kindSPM:
		prevSpecial := true
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f.tok)
				prevSpecial = true
				continue
			}
			s := text[f.start:f.end]
			if t.addSpacePref && prevSpecial {
				s = " " + s
			}
			out = t.encodeSPM(strings.ReplaceAll(s, " ", "▁"), out)
			prevSpecial = false
		}
	case kindBPE:
		for _, f := range frags {
			if f.tok >= 0 {
				out = append(out, f.tok)
				continue
			}
			out = t.encodeBPE(text[f.start:f.end], out)
		}
	}
	if addSpecial && t.addEOS {
		out = append(out, t.eos)
	}
	return out
}

// fragment is a special token (tok >= 0) or the raw text [start, end).
type fragment struct {
	tok        int32
	start, end int
}

// partition cuts text around special tokens, longest first, as llama.cpp's
// tokenizer_st_partition does. Control and unknown tokens are only looked
// for when parseSpecial is set; user-defined tokens always are. (llama.cpp
// also strips the whitespace after special tokens for models named Phi-3;
// this package does not.)
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{tok: -1, start: 0, end: len(text)}}
	var next []fragment
	for _, id := range t.special {
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue
		}
		word := t.tokens[id]
		found := false
		for _, f := range frags {
			if f.tok < 0 && strings.Contains(text[f.start:f.end], word) {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		next = next[:0]
		for _, f := range frags {
			if f.tok >= 0 {
				next = append(next, f)
				continue
			}
			start, end := f.start, f.end
			for {
				i := strings.Index(text[start:end], word)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{tok: -1, start: start, end: start + i})
				}
				next = append(next, fragment{tok: id})
				start += i + len(word)
			}
			if start < end {
				next = append(next, fragment{tok: -1, start: start, end: end})
			}
		}
		frags, next = next, frags
	}
	return frags
}
