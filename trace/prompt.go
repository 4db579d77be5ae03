package trace

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Counter counts the tokens of a text in a vocabulary
// (*tokencount.Counter is one).
type Counter interface {
	Count(text string) int
}

// Prompter writes prompts of an exact length in tokens of one
// vocabulary: English words drawn from a generator seeded per block, so
// that the same block (a Mooncake hash id) is the same text in every
// prompt that holds it, and a server's prefix cache finds it again.
//
// A prompt's text is its blocks' texts one after another, each of
// [BlockTokens] tokens but the last; words are separated by single
// spaces, and the vocabularies tokenpulse reads (SentencePiece and
// byte-level BPE alike) split tokens at a word's leading space, so a
// block's tokens do not depend on the block before. The whole text is
// counted once more and its unshared tail corrected by one-token words
// should the two disagree.
type Prompter struct {
	tok Counter
	// head[i] and mid[i] are the tokens of words[i] at the start of a
	// prompt and after a space.
	words     []string
	head, mid []int
	// fill and fillHead are one-token words (after a space, at the start).
	fill, fillHead string
	seed           uint64
}

// words is the dictionary prompts are written from.
var dictionary = strings.Fields(`the a and to of in was he she it they said
one day little big girl boy time mom dad friend happy sad play ran saw
tree park ball cat dog bird sun sky water house door home find found
look looked want wanted help helped very good new old red blue green
small long fast slow walk talk went came make made can could would will
not no yes all some many more like liked love loved with for from on at
by up down out over under into after before then when where what who
how why this that these those there here now again away back each every
people world year work school book story night morning light dark tree
river hill road city car bus train boat fish food apple cake bread milk
table chair bed room window garden flower grass rain snow wind cold warm
hot bright quiet loud soft hard open close begin end first last next
other same different great small high low left right near far early late`)

// The PCG streams of shared blocks (named by a hash id) and of a
// prompt's own blocks.
const (
	sharedStream = 0x736861726564 // "shared"
	ownStream    = 0x6f776e       // "own"
)

// NewPrompter returns a Prompter on vocabulary tok; seed varies the
// texts (the same seed, the same texts).
func NewPrompter(tok Counter, seed uint64) (*Prompter, error) {
	p := &Prompter{tok: tok, seed: seed}
	// A word's tokens after a space are counted after another word: a
	// SentencePiece vocabulary also counts its own prefix space at the
	// text's start, which " w" alone would add.
	ref := dictionary[0]
	base := tok.Count(ref)
	for _, w := range dictionary {
		h, m := tok.Count(w), tok.Count(ref+" "+w)-base
		if h < 1 || m < 1 {
			continue
		}
		p.words, p.head, p.mid = append(p.words, w), append(p.head, h), append(p.mid, m)
		if m == 1 && p.fill == "" {
			p.fill = w
		}
		if h == 1 && p.fillHead == "" {
			p.fillHead = w
		}
	}
	if p.fill == "" || p.fillHead == "" {
		return nil, errors.New("the vocabulary has no one-token English word to pad prompts with")
	}
	return p, nil
}

// Prompt returns the text of e's prompt: exactly e.Input tokens, its
// blocks those of e.HashIDs (the rest e's own).
func (p *Prompter) Prompt(e Entry) (string, error) {
	var b strings.Builder
	blocks := (e.Input + BlockTokens - 1) / BlockTokens
	for k := range blocks {
		n := min(BlockTokens, e.Input-k*BlockTokens)
		var rng *rand.Rand
		if k < len(e.HashIDs) {
			rng = rand.New(rand.NewPCG(uint64(e.HashIDs[k])^p.seed, sharedStream))
		} else {
			rng = rand.New(rand.NewPCG(uint64(e.Line)<<20|uint64(k)^p.seed, ownStream))
		}
		p.block(&b, rng, k == 0, n)
	}
	text := b.String()
	// Correct the tail should a boundary have tokenized otherwise.
	for range 8 {
		got := p.tok.Count(text)
		switch {
		case got == e.Input:
			return text, nil
		case got < e.Input:
			text += strings.Repeat(" "+p.fill, e.Input-got)
		default:
			i := strings.LastIndexByte(text, ' ')
			if i <= 0 {
				text = p.fillHead
				continue
			}
			text = text[:i]
		}
	}
	return "", fmt.Errorf("%d: cannot write a prompt of exactly %d tokens in this vocabulary", e.Line, e.Input)
}

// block writes n tokens of words drawn from rng; first: at the prompt's
// start (no leading space).
func (p *Prompter) block(b *strings.Builder, rng *rand.Rand, first bool, n int) {
	for n > 0 {
		i := rng.IntN(len(p.words))
		w, c := p.words[i], p.mid[i]
		if first {
			c = p.head[i]
		}
		if c > n {
			w, c = p.fill, 1
			if first {
				w = p.fillHead
			}
		}
		if !first {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		n -= c
		first = false
	}
}
