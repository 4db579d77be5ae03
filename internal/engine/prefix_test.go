package engine

import (
	"context"
	"slices"
	"testing"
)

// TestReusePrefix checks that a prompt sharing a prefix with what the
// session ran last runs only the rest, and answers exactly as a fresh
// session running all of it: the cache holds the prompt and the tokens
// fed back, but not the last token sampled, which was never run.
func TestReusePrefix(t *testing.T) {
	m := bundledModel(t, Options{BatchSize: 4})
	reuse := Params{MaxTokens: 6, ReusePrefix: true}
	s := m.NewSession()
	first, res := generate(t, s, onceUpon, reuse)
	if res.CachedTokens != 0 {
		t.Errorf("first call: %d cached tokens, want 0", res.CachedTokens)
	}
	// A conversation going on: the prompt, the whole answer, more text.
	next := slices.Concat(onceUpon, first, []int32{261, 378, 403})
	got, res := generate(t, s, next, reuse)
	if want := len(onceUpon) + len(first) - 1; res.CachedTokens != want {
		t.Errorf("second call: %d cached tokens, want %d (the prompt and the answer but its last token)", res.CachedTokens, want)
	}
	want, fresh := generate(t, m.NewSession(), next, Params{MaxTokens: 6})
	if fresh.CachedTokens != 0 {
		t.Errorf("without ReusePrefix: %d cached tokens", fresh.CachedTokens)
	}
	if !slices.Equal(got, want) {
		t.Errorf("with the prefix reused: %v; run whole: %v", got, want)
	}

	// The same prompt again: all but its last token are reused.
	again, res := generate(t, s, next, reuse)
	if res.CachedTokens != len(next)-1 || !slices.Equal(again, want) {
		t.Errorf("the same prompt again: %d cached (want %d), answer %v (want %v)", res.CachedTokens, len(next)-1, again, want)
	}

	// A prompt that departs early reuses only what it shares.
	other := slices.Concat(onceUpon[:3], []int32{500, 501})
	got, res = generate(t, s, other, reuse)
	want, _ = generate(t, m.NewSession(), other, Params{MaxTokens: 6})
	if res.CachedTokens != 3 || !slices.Equal(got, want) {
		t.Errorf("a prompt sharing 3 tokens: %d cached, answer %v (want 3, %v)", res.CachedTokens, got, want)
	}

	// Without ReusePrefix the cache is written again from position 0.
	if _, res = generate(t, s, other, Params{MaxTokens: 6}); res.CachedTokens != 0 {
		t.Errorf("ReusePrefix off: %d cached tokens", res.CachedTokens)
	}
}

// TestReuseAfterCancel checks that a cancelled answer leaves the cache
// claiming only what was run, so the next prompt is answered as a fresh
// session answers it.
func TestReuseAfterCancel(t *testing.T) {
	m := bundledModel(t, Options{BatchSize: 4})
	s := m.NewSession()
	ctx, cancel := context.WithCancel(context.Background())
	var cut []int32
	_, err := s.Generate(ctx, onceUpon, Params{MaxTokens: 20, ReusePrefix: true}, func(tok Token) error {
		cut = append(cut, tok.ID)
		if len(cut) == 3 {
			cancel()
		}
		return nil
	})
	if err == nil {
		t.Fatal("no error from a cancelled answer")
	}
	next := slices.Concat(onceUpon, cut, []int32{261})
	got, res := generate(t, s, next, Params{MaxTokens: 6, ReusePrefix: true})
	want, _ := generate(t, m.NewSession(), next, Params{MaxTokens: 6})
	if res.CachedTokens < len(onceUpon) || res.CachedTokens > len(next)-1 || !slices.Equal(got, want) {
		t.Errorf("after a cancelled answer: %d cached of %d, answer %v (want %v)", res.CachedTokens, len(next), got, want)
	}
	if n := s.Cached(next); n != len(next) {
		t.Errorf("Cached after the answer: %d, want the whole prompt (%d)", n, len(next))
	}

	// Logits writes the cache from position 0: nothing is claimed after.
	if _, err := s.Logits(onceUpon[:2]); err != nil {
		t.Fatal(err)
	}
	if n := s.Cached(next); n != 0 {
		t.Errorf("Cached after Logits: %d, want 0", n)
	}
}

// TestPrefillLogitsOnce checks that a prompt prefilled in several
// batches reads the output matrix once, for its last token, and each
// decode step once more: the batches before the last need no logits (on
// a 0.5B qwen2 file the output matrix is 145 MB, a tenth of a 256-token
// prefill's time when it was read for every batch of 32).
func TestPrefillLogitsOnce(t *testing.T) {
	m := bundledModel(t, Options{BatchSize: 4})
	s := m.NewSession()
	prompt := slices.Concat(onceUpon, onceUpon[1:], []int32{261, 378}) // 11 tokens: batches of 4, 4, 3
	before := s.st.outputs
	got, res := generate(t, s, prompt, Params{MaxTokens: 5, IgnoreEOS: true})
	if n := s.st.outputs - before; n != 1+res.OutputTokens-1 {
		t.Errorf("%d forward passes computed logits for an 11-token prompt in batches of 4 and %d tokens, want %d", n, res.OutputTokens, res.OutputTokens)
	}
	// The answer is the one-token-at-a-time model's.
	want, _ := generate(t, bundledModel(t, Options{BatchSize: 1}).NewSession(), prompt, Params{MaxTokens: 5, IgnoreEOS: true})
	if !slices.Equal(got, want) {
		t.Errorf("batches of 4: %v; one at a time: %v", got, want)
	}
}

// countdownCtx is a context whose Err turns to Canceled on its n-th call:
// a cancellation that lands in the middle of a forward pass.
type countdownCtx struct {
	context.Context
	n, calls int
}

func (c *countdownCtx) Err() error {
	c.calls++
	if c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

// TestCancelInsideABatch checks that a cancellation is seen between the
// layers of a prefill batch, not only between batches, and that the
// half-run batch is not taken for cached: the next answer is a fresh
// session's.
func TestCancelInsideABatch(t *testing.T) {
	m := bundledModel(t, Options{BatchSize: 64})
	if len(m.w.layers) < 3 {
		t.Skipf("the bundled model has %d layers", len(m.w.layers))
	}
	s := m.NewSession()
	prompt := slices.Concat(onceUpon, onceUpon[1:], onceUpon[1:]) // one batch
	// Err's calls: the check before the batch, then one before each layer.
	ctx := &countdownCtx{Context: context.Background(), n: 3}
	res, err := s.Generate(ctx, prompt, Params{MaxTokens: 5, ReusePrefix: true}, func(Token) error {
		t.Error("a token came out of a cancelled prefill")
		return nil
	})
	if err == nil || res.StopReason != "cancelled" {
		t.Fatalf("err %v, result %+v: want a cancelled prefill", err, res)
	}
	// Had the pass run on, Err would be asked before each of the other
	// layers too; after the stop, Generate asks it once more, for the
	// error it returns.
	if ctx.calls != 4 {
		t.Errorf("Err was asked %d times, want 4: the pass did not stop at the layer where it turned", ctx.calls)
	}
	if n := s.Cached(prompt); n != 0 {
		t.Errorf("after a batch cut short, the cache claims %d tokens", n)
	}
	got, _ := generate(t, s, prompt, Params{MaxTokens: 5, ReusePrefix: true})
	want, _ := generate(t, m.NewSession(), prompt, Params{MaxTokens: 5})
	if !slices.Equal(got, want) {
		t.Errorf("after a cut batch: %v; a fresh session: %v", got, want)
	}
}
