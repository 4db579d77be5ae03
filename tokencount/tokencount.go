// Package tokencount counts the output tokens of each event of a streamed
// answer with a model's own vocabulary, read from a GGUF file, so that
// per-token figures are exact against a server that neither reports usage
// nor says how many tokens an event carried (as GenAI-Perf does with a
// tokenizer).
//
// The whole answer is tokenized once, as the server's model would have
// produced it, and each token is counted in the event in which its last
// byte arrived: a token split across two events belongs to the second,
// and an event that completed no token counts 0.
//
//	c, err := tokencount.Open("model.gguf")
//	defer c.Close()
//	counts := c.PerEvent(text, ends) // ends[i]: len(text) after event i
//
// A Counter is safe for concurrent use.
package tokencount

import (
	"fmt"
	"path/filepath"

	"github.com/tokenpulse/tokenpulse/internal/engine/bundled"
	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/tokenizer"
)

// Counter counts tokens with one vocabulary.
type Counter struct {
	tok  *tokenizer.Tokenizer
	file *gguf.File
	// Name is where the vocabulary came from (the file's base name).
	Name string
}

// Open reads the vocabulary of the GGUF file at path (a model, or a
// vocabulary-only file such as llama.cpp's ggml-vocab-*.gguf). The file
// stays mapped until Close.
func Open(path string) (*Counter, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return &Counter{tok: tok, file: f, Name: filepath.Base(path)}, nil
}

// Bundled returns a counter on the vocabulary of tokenpulse's bundled
// model (stories260K), the one the embedded server speaks.
func Bundled() (*Counter, error) {
	f, err := gguf.Parse(bundled.Model)
	if err != nil {
		return nil, fmt.Errorf("bundled model: %w", err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("bundled model: %w", err)
	}
	return &Counter{tok: tok, Name: bundled.Name}, nil
}

// New returns a counter on a tokenizer already built (the embedded
// engine's own).
func New(tok *tokenizer.Tokenizer, name string) *Counter {
	return &Counter{tok: tok, Name: name}
}

// Close releases the file Open mapped.
func (c *Counter) Close() error {
	if c.file == nil {
		return nil
	}
	return c.file.Close()
}

// Count returns the number of tokens of text (no BOS or EOS; special
// tokens' texts spelled out, as a model's output is).
func (c *Counter) Count(text string) int { return len(c.tok.Encode(text, false, false)) }

// PerEvent returns, for each event, the tokens whose last byte it
// delivered. text is the whole answer and ends[i] the length of text
// after event i (non-decreasing). The counts add up to Count(text) when
// the last end is len(text).
func (c *Counter) PerEvent(text string, ends []int) []int {
	out := make([]int, len(ends))
	if len(ends) == 0 {
		return out
	}
	ids := c.tok.Encode(text, false, false)
	// Token i ends at byte cum[i] of the decoded pieces. Decoding may add
	// bytes before the text (SentencePiece's space prefix) or change
	// them (invalid UTF-8 replaced); the pieces are aligned to the text
	// from its end, where they agree.
	total := 0
	for _, id := range ids {
		total += len(c.tok.Piece(id))
	}
	shift := total - len(text)
	pos, e := 0, 0
	for _, id := range ids {
		pos += len(c.tok.Piece(id))
		end := min(max(pos-shift, 0), len(text))
		for e < len(ends)-1 && ends[e] < end {
			e++
		}
		out[e]++
	}
	return out
}
