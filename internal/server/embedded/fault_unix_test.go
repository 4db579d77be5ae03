//go:build unix

package embedded

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// TestTruncatedModelIsBroken: the served GGUF truncated underneath a warm
// backend (its mapping then raises SIGBUS) fails the request with an error
// wrapping server.ErrBroken, the process goes on, and so does every later
// request.
func TestTruncatedModelIsBroken(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Spec{Arch: "llama", Dim: 256, Layers: 2, Heads: 4, FFN: 512, Vocab: 300, Ctx: 64, Type: quant.Q8_0, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Load(t.Context(), Options{Engine: engine.Options{ModelPath: path, Threads: 2}, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Warmup(t.Context()); err != nil {
		t.Fatal(err)
	}
	req := &server.GenRequest{Prompt: "hello", MaxTokens: 4}
	if _, err := b.Generate(t.Context(), req, func(server.Piece) error { return nil }); err != nil {
		t.Fatalf("before truncation: %v", err)
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		req := &server.GenRequest{Prompt: "hello", MaxTokens: 4}
		_, err := b.Generate(t.Context(), req, func(server.Piece) error { return nil })
		if !errors.Is(err, server.ErrBroken) || !errors.Is(err, engine.ErrModelFault) {
			t.Fatalf("request %d after truncation: err = %v, want ErrBroken and engine.ErrModelFault", i, err)
		}
		t.Log(err)
	}
}
