package mock

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// fakeClock jumps to each deadline instead of sleeping; work adds time
// as if emitting took that long.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newFakeClock() *fakeClock { return &fakeClock{now: epoch} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	return nil
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// run generates one request and returns the pieces' offsets from epoch.
func run(t *testing.T, b *Backend, req *server.GenRequest, onEmit func(server.Piece)) ([]server.Piece, []time.Duration, server.GenResult, error) {
	t.Helper()
	var pieces []server.Piece
	var offs []time.Duration
	res, err := b.Generate(context.Background(), req, func(p server.Piece) error {
		pieces = append(pieces, p)
		offs = append(offs, p.At.Sub(epoch))
		if onEmit != nil {
			onEmit(p)
		}
		return nil
	})
	return pieces, offs, res, err
}

func ms(xs ...int) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPacingIsAbsolute(t *testing.T) {
	clk := newFakeClock()
	b := New(Profile{TTFT: 150 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 5}, clk)
	// Each emit takes 7 ms: sleeping ITL after each emit would drift to
	// 150, 177, 204...; absolute deadlines keep 150, 170, 190...
	_, offs, res, err := run(t, b, &server.GenRequest{Prompt: "hi"}, func(server.Piece) { clk.advance(7 * time.Millisecond) })
	if err != nil {
		t.Fatal(err)
	}
	if want := ms(150, 170, 190, 210, 230); !reflect.DeepEqual(offs, want) {
		t.Errorf("emit times = %v, want %v", offs, want)
	}
	if got, want := res.OutputTokens, 5; got != want {
		t.Errorf("OutputTokens = %d, want %d", got, want)
	}
	if got, want := res.FinishReason, "stop"; got != want {
		t.Errorf("FinishReason = %q, want %q", got, want)
	}
	if got, want := res.Prefill, 150*time.Millisecond; got != want {
		t.Errorf("Prefill = %v, want %v", got, want)
	}
	if got, want := res.Decode, 80*time.Millisecond; got != want {
		t.Errorf("Decode = %v, want %v", got, want)
	}
}

func TestAtIsStampedAtEmit(t *testing.T) {
	// A token whose deadline has passed (the previous emit was slow) is
	// stamped when it actually leaves, not with its deadline.
	clk := newFakeClock()
	b := New(Profile{TTFT: 10 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 3}, clk)
	first := true
	_, offs, _, err := run(t, b, &server.GenRequest{}, func(server.Piece) {
		if first {
			clk.advance(50 * time.Millisecond)
			first = false
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := ms(10, 60, 60); !reflect.DeepEqual(offs, want) {
		t.Errorf("emit times = %v, want %v", offs, want)
	}
}

func TestMaxTokensCaps(t *testing.T) {
	b := New(Profile{ITL: time.Millisecond, Tokens: 30}, newFakeClock())
	pieces, _, res, err := run(t, b, &server.GenRequest{MaxTokens: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(pieces), 4; got != want {
		t.Errorf("pieces = %d, want %d", got, want)
	}
	if got, want := res.FinishReason, "length"; got != want {
		t.Errorf("FinishReason = %q, want %q", got, want)
	}
}

func TestIgnoreEOSRunsToMaxTokens(t *testing.T) {
	b := New(Profile{ITL: time.Millisecond, Tokens: 3}, newFakeClock())
	pieces, _, res, err := run(t, b, &server.GenRequest{MaxTokens: 9, IgnoreEOS: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) != 9 || res.FinishReason != "length" {
		t.Errorf("ignore_eos with max_tokens 9: %d tokens, finish %q; want 9, length", len(pieces), res.FinishReason)
	}
	// Without ignore_eos the profile's answer ends first.
	pieces, _, res, _ = run(t, b, &server.GenRequest{MaxTokens: 9}, nil)
	if len(pieces) != 3 || res.FinishReason != "stop" {
		t.Errorf("max_tokens 9 alone: %d tokens, finish %q; want 3, stop", len(pieces), res.FinishReason)
	}
}

func TestTokensPerEvent(t *testing.T) {
	b := New(Profile{TTFT: 100 * time.Millisecond, ITL: 10 * time.Millisecond, Tokens: 7, TokensPerEvent: 3}, newFakeClock())
	pieces, offs, res, err := run(t, b, &server.GenRequest{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	var text strings.Builder
	for _, p := range pieces {
		counts = append(counts, p.Tokens)
		text.WriteString(p.Text)
	}
	if want := []int{3, 3, 1}; !reflect.DeepEqual(counts, want) {
		t.Errorf("tokens per piece = %v, want %v", counts, want)
	}
	// Each piece leaves when its last token is due: tokens 2, 5, 6.
	if want := ms(120, 150, 160); !reflect.DeepEqual(offs, want) {
		t.Errorf("emit times = %v, want %v", offs, want)
	}
	if got, want := len(strings.Fields(text.String())), 7; got != want {
		t.Errorf("words = %d, want %d", got, want)
	}
	if got, want := res.OutputTokens, 7; got != want {
		t.Errorf("OutputTokens = %d, want %d", got, want)
	}
}

func TestColdExtraOnFirstRequestOnly(t *testing.T) {
	clk := newFakeClock()
	b := New(Profile{TTFT: 100 * time.Millisecond, ITL: 10 * time.Millisecond, Tokens: 1, ColdExtra: 400 * time.Millisecond}, clk)
	if _, err := b.Warmup(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, offs, _, _ := run(t, b, &server.GenRequest{}, nil)
	if want := ms(500); !reflect.DeepEqual(offs, want) {
		t.Errorf("cold emit = %v, want %v", offs, want)
	}
	_, offs, _, _ = run(t, b, &server.GenRequest{}, nil)
	if want := ms(600); !reflect.DeepEqual(offs, want) { // started at 500
		t.Errorf("warm emit = %v, want %v", offs, want)
	}
}

func TestStalls(t *testing.T) {
	base := Profile{TTFT: 100 * time.Millisecond, ITL: 10 * time.Millisecond, Tokens: 7, Stall: 200 * time.Millisecond}
	tests := []struct {
		name   string
		edit   func(*Profile)
		prompt string
		want   []time.Duration
	}{
		{"every 3rd token", func(p *Profile) { p.StallEvery = 3 }, "", ms(100, 110, 120, 330, 340, 350, 560)},
		{"match hits", func(p *Profile) { p.StallEvery = 3; p.StallMatch = "COMPARE" }, "please compare these", ms(100, 110, 120, 330, 340, 350, 560)},
		{"match misses", func(p *Profile) { p.StallEvery = 3; p.StallMatch = "compare" }, "short question", ms(100, 110, 120, 130, 140, 150, 160)},
		{"probability 1 stalls every token after the first", func(p *Profile) { p.StallProb = 1 }, "", ms(100, 310, 520, 730, 940, 1150, 1360)},
		{"no stall length, no stall", func(p *Profile) { p.StallEvery = 3; p.Stall = 0 }, "", ms(100, 110, 120, 130, 140, 150, 160)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			tt.edit(&p)
			b := New(p, newFakeClock())
			_, offs, _, err := run(t, b, &server.GenRequest{Prompt: tt.prompt}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(offs, tt.want) {
				t.Errorf("emit times = %v, want %v", offs, tt.want)
			}
		})
	}
}

func TestStallMatchReadsChatMessages(t *testing.T) {
	b := New(Profile{ITL: 10 * time.Millisecond, Tokens: 2, Stall: time.Second, StallEvery: 1, StallMatch: "versus"}, newFakeClock())
	req := &server.GenRequest{Chat: true, Messages: messages("be brief", "Python versus Go?")}
	_, offs, _, _ := run(t, b, req, nil)
	if want := ms(0, 1010); !reflect.DeepEqual(offs, want) {
		t.Errorf("emit times = %v, want %v", offs, want)
	}
}

func TestJitter(t *testing.T) {
	p := Profile{TTFT: 100 * time.Millisecond, ITL: 20 * time.Millisecond, Jitter: 15 * time.Millisecond, Tokens: 50, Seed: 7}
	times := func(seed uint64) []time.Duration {
		q := p
		q.Seed = seed
		_, offs, _, err := run(t, New(q, newFakeClock()), &server.GenRequest{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return offs
	}
	a := times(7)
	for i, at := range a {
		nominal := p.TTFT + time.Duration(i)*p.ITL
		if i > 0 && at < a[i-1] {
			t.Errorf("token %d at %v before token %d at %v", i, at, i-1, a[i-1])
		}
		if at > nominal+p.Jitter || (at < nominal-p.Jitter && (i == 0 || at != a[i-1])) {
			t.Errorf("token %d at %v, want within %v ± %v", i, at, nominal, p.Jitter)
		}
	}
	if got := times(7); !reflect.DeepEqual(got, a) {
		t.Error("same seed gave different times")
	}
	if got := times(8); reflect.DeepEqual(got, a) {
		t.Error("different seeds gave the same times")
	}
	moved := 0
	for i, at := range a {
		if at != p.TTFT+time.Duration(i)*p.ITL {
			moved++
		}
	}
	if moved < len(a)/2 {
		t.Errorf("jitter moved %d of %d tokens, want most", moved, len(a))
	}
}

func TestErrorRate(t *testing.T) {
	for _, tt := range []struct {
		rate float64
		want int
	}{{0, 0}, {1, 20}} {
		b := New(Profile{Tokens: 1, ErrorRate: tt.rate}, newFakeClock())
		failed := 0
		for range 20 {
			_, _, _, err := run(t, b, &server.GenRequest{}, nil)
			var re *server.RequestError
			if errors.As(err, &re) {
				if re.Status != 500 || re.Type != "server_error" {
					t.Errorf("error = %+v, want 500 server_error", re)
				}
				failed++
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if failed != tt.want {
			t.Errorf("rate %v: %d of 20 failed, want %d", tt.rate, failed, tt.want)
		}
	}
	// A rate in between fails some and not others, the same way for the
	// same seed.
	outcome := func() []bool {
		b := New(Profile{Tokens: 1, ErrorRate: 0.5, Seed: 3}, newFakeClock())
		var out []bool
		for range 40 {
			_, _, _, err := run(t, b, &server.GenRequest{}, nil)
			out = append(out, err != nil)
		}
		return out
	}
	a := outcome()
	n := 0
	for _, f := range a {
		if f {
			n++
		}
	}
	if n == 0 || n == len(a) {
		t.Errorf("rate 0.5 failed %d of %d", n, len(a))
	}
	if !reflect.DeepEqual(outcome(), a) {
		t.Error("same seed gave different failures")
	}
}

func TestStopsOnCancel(t *testing.T) {
	b := New(Profile{ITL: 10 * time.Millisecond, Tokens: 10}, newFakeClock())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	emitted := 0
	_, err := b.Generate(ctx, &server.GenRequest{}, func(server.Piece) error {
		emitted++
		if emitted == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if got, want := emitted, 3; got != want {
		t.Errorf("emitted %d pieces, want %d (none after the cancel)", got, want)
	}
}

func TestStopsOnEmitError(t *testing.T) {
	b := New(Profile{Tokens: 10}, newFakeClock())
	boom := errors.New("client gone")
	emitted := 0
	_, err := b.Generate(context.Background(), &server.GenRequest{}, func(server.Piece) error {
		emitted++
		return boom
	})
	if !errors.Is(err, boom) || emitted != 1 {
		t.Errorf("err = %v after %d pieces, want %v after 1", err, emitted, boom)
	}
}

func TestWordsAreDeterministic(t *testing.T) {
	text := func() string {
		b := New(Profile{Tokens: 12}, newFakeClock())
		pieces, _, _, _ := run(t, b, &server.GenRequest{}, nil)
		var sb strings.Builder
		for _, p := range pieces {
			sb.WriteString(p.Text)
		}
		return sb.String()
	}
	a := text()
	if a != text() {
		t.Error("the same request ordinal gave different text")
	}
	words := strings.Fields(a)
	if len(words) != 12 || strings.HasPrefix(a, " ") {
		t.Errorf("text = %q, want 12 words with no leading space", a)
	}
	for _, w := range words {
		if !contains(vocabulary, w) {
			t.Errorf("word %q is not in the vocabulary", w)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestParseProfile(t *testing.T) {
	p, err := ParseProfile("ttft=80ms, itl=5ms,tokens=12,tokens-per-event=2,stall=300ms,stall-every=4,stall-match=Compare,error-rate=0.1,seed=9,cold-extra=1s,jitter=2ms,stall-prob=0.05")
	if err != nil {
		t.Fatal(err)
	}
	want := Profile{TTFT: 80 * time.Millisecond, ITL: 5 * time.Millisecond, Tokens: 12, TokensPerEvent: 2, Stall: 300 * time.Millisecond, StallEvery: 4, StallMatch: "Compare", ErrorRate: 0.1, Seed: 9, ColdExtra: time.Second, Jitter: 2 * time.Millisecond, StallProb: 0.05}
	if p != want {
		t.Errorf("ParseProfile = %+v, want %+v", p, want)
	}
	if p, err := ParseProfile(""); err != nil || p != DefaultProfile() {
		t.Errorf("ParseProfile(\"\") = %+v, %v; want the default", p, err)
	}
	for _, bad := range []string{"ttft", "speed=3", "itl=fast", "error-rate=2", "tokens=-1"} {
		if _, err := ParseProfile(bad); err == nil {
			t.Errorf("ParseProfile(%q) succeeded, want an error", bad)
		}
	}
}

func TestAddFlags(t *testing.T) {
	p := DefaultProfile()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	p.AddFlags(fs)
	if err := fs.Parse([]string{"--ttft", "1s", "--tokens-per-event=4", "--stall-match", "x"}); err != nil {
		t.Fatal(err)
	}
	if p.TTFT != time.Second || p.TokensPerEvent != 4 || p.StallMatch != "x" || p.ITL != 20*time.Millisecond {
		t.Errorf("profile after flags = %+v", p)
	}
}

func messages(system, user string) []api.Message {
	return []api.Message{{Role: "system", Content: api.Content(system)}, {Role: "user", Content: api.Content(user)}}
}
