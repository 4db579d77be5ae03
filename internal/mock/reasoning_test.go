package mock

import (
	"reflect"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/server"
)

// The thinking comes first at its own pace; the first answer token is due
// at TTFT + reasoning tokens × reasoning ITL; no event mixes the two.
func TestReasoningPhase(t *testing.T) {
	b := New(Profile{TTFT: 100 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 3, TokensPerEvent: 2,
		ReasoningTokens: 3, ReasoningITL: 5 * time.Millisecond}, newFakeClock())
	pieces, offs, res, err := run(t, b, &server.GenRequest{Chat: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Events: thinking tokens 0-1 (due at token 1: 105), thinking token 2
	// (110), answer tokens 3-4 (due at token 4: 115 + 20), answer token 5
	// (155).
	if want := ms(105, 110, 135, 155); !reflect.DeepEqual(offs, want) {
		t.Errorf("offsets %v, want %v", offs, want)
	}
	var kinds []bool
	var counts []int
	for _, p := range pieces {
		kinds, counts = append(kinds, p.Reasoning), append(counts, p.Tokens)
	}
	if want := []bool{true, true, false, false}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("reasoning %v, want %v", kinds, want)
	}
	if want := []int{2, 1, 2, 1}; !reflect.DeepEqual(counts, want) {
		t.Errorf("tokens per event %v, want %v", counts, want)
	}
	if res.OutputTokens != 6 || res.FinishReason != "stop" {
		t.Errorf("result %+v, want 6 tokens, stop", res)
	}
}

// max_tokens counts the thinking: a budget it uses up leaves no answer.
func TestReasoningCountsAgainstMaxTokens(t *testing.T) {
	b := New(Profile{TTFT: time.Millisecond, ITL: time.Millisecond, Tokens: 5, ReasoningTokens: 4}, newFakeClock())
	pieces, _, res, err := run(t, b, &server.GenRequest{Chat: true, MaxTokens: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) != 4 || !pieces[3].Reasoning || res.FinishReason != "length" {
		t.Errorf("%d pieces, last reasoning %v, finish %q; want 4 thinking pieces cut by length", len(pieces), pieces[len(pieces)-1].Reasoning, res.FinishReason)
	}
}

func TestReasoningProfileFlags(t *testing.T) {
	p, err := ParseProfile("reasoning-tokens=40,reasoning-itl=10ms")
	if err != nil || p.ReasoningTokens != 40 || p.ReasoningITL != 10*time.Millisecond {
		t.Errorf("ParseProfile: %+v, %v", p, err)
	}
	if _, err := ParseProfile("reasoning-tokens=-1"); err == nil {
		t.Error("a negative reasoning-tokens passed")
	}
}
