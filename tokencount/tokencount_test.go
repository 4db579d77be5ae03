package tokencount

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// events splits the pieces of ids into events of 1..maxPer tokens, as a
// server that batches would send them, and returns the text, the ends and
// the tokens of each event.
func events(c *Counter, ids []int32, maxPer int, r *rand.Rand) (string, []int, []int) {
	var text []byte
	var ends, counts []int
	for i := 0; i < len(ids); {
		k := min(1+r.IntN(maxPer), len(ids)-i)
		for _, id := range ids[i : i+k] {
			text = append(text, c.tok.Piece(id)...)
		}
		ends = append(ends, len(text))
		counts = append(counts, k)
		i += k
	}
	// A SentencePiece server drops the space prefix of the first token.
	if len(text) > 0 && text[0] == ' ' && c.tok.Piece(ids[0])[0] == ' ' {
		text = text[1:]
		for i := range ends {
			ends[i] = max(ends[i]-1, 0)
		}
	}
	return string(text), ends, counts
}

func checkRoundTrip(t *testing.T, c *Counter, texts []string) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range texts {
		ids := c.tok.Encode(s, false, false)
		for _, maxPer := range []int{1, 4} {
			text, ends, want := events(c, ids, maxPer, r)
			// The server's text is what its tokens decode to; its
			// own tokenization must give back the same tokens.
			if got := c.tok.Encode(text, false, false); !slices.Equal(got, ids) {
				t.Fatalf("%q: the server's text %q does not tokenize back to its tokens", s, text)
			}
			if got := c.PerEvent(text, ends); !slices.Equal(got, want) {
				t.Errorf("%s, %q, up to %d per event: counts %v, want %v", c.Name, s, maxPer, got, want)
			}
		}
	}
}

func TestPerEventBundled(t *testing.T) {
	c, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, c, []string{
		"Once upon a time, there was a little girl named Lily. She liked to play outside.",
		"The cat sat on the mat and looked at the big red ball.",
	})
}

func TestPerEventGPT2(t *testing.T) {
	c, err := Open(fixture.Path(t, "models/tokenizers/ggml-vocab-gpt-2.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkRoundTrip(t, c, []string{
		"Hello world! The quick brown fox jumps over the lazy dog, 123 times.",
		"Résumé naïve café — 東京 🙂",
	})
}

func TestSplitCharacterCountsWhereItEnds(t *testing.T) {
	c, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	// One event ends inside a word: the token is counted in the event
	// that completes it, and an event that completes nothing counts 0.
	text := "Once upon a time"
	ids := c.tok.Encode(text, false, false)
	first := len(c.tok.Piece(ids[0])) - 1 // the space prefix is not in the text
	ends := []int{first - 1, first, len(text)}
	got := c.PerEvent(text, ends)
	if got[0] != 0 || got[1] != 1 || got[0]+got[1]+got[2] != len(ids) {
		t.Errorf("counts %v for ends %v of %q (tokens %d), want [0 1 %d]", got, ends, text, len(ids), len(ids)-1)
	}
}
