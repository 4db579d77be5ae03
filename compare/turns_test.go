package compare

import (
	"fmt"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// conversations builds a run of n two-turn conversations; the second
// turn's first token comes at turn2MS (+ i ms), the first's at 100 ms.
func conversations(n int, turn2MS int64) *runfile.Run {
	r := &runfile.Run{SchemaVersion: runfile.SchemaVersion}
	for i := range n {
		conv := fmt.Sprint("c", i)
		for turn, ttft := range []int64{100 + int64(i), turn2MS + int64(i)} {
			q := runfile.Request{RequestID: fmt.Sprintf("%s-%d", conv, turn+1), Category: "chat", Status: 200,
				FinishReason: "stop", OutputTokens: 10, ContentEvents: 10, TokenSource: runfile.TokensUsage,
				ConversationID: conv, Turn: turn + 1}
			for k := range int64(10) {
				q.TokenTimesNS = append(q.TokenTimesNS, (ttft+20*k)*1e6)
			}
			q.TTFTNS, q.E2ENS = q.TokenTimesNS[0], q.TokenTimesNS[9]
			r.Requests = append(r.Requests, q)
		}
	}
	measure.Summarize(r)
	return r
}

// TestRunsCompareTurns: a slower second turn is judged on its own scope
// (compare compared overall and categories only, where the second turns
// are half the requests).
func TestRunsCompareTurns(t *testing.T) {
	rep := Runs(conversations(10, 150), conversations(10, 300), DefaultOptions())
	got := map[string]Status{}
	for _, c := range rep.Changes {
		got[c.Scope+" "+c.Metric] = c.Status
	}
	if s := got["turn:2 ttft.p50"]; s != StatusRegressed {
		t.Errorf("turn:2 ttft.p50: %q, want %q (changes %v)", s, StatusRegressed, got)
	}
	if s, ok := got["turn:1 ttft.p50"]; !ok || s == StatusRegressed {
		t.Errorf("turn:1 ttft.p50: %q (compared %v), want compared and not regressed", s, ok)
	}

	one := conversations(10, 150)
	var firsts []runfile.Request
	for _, q := range one.Requests {
		if q.Turn == 1 {
			firsts = append(firsts, q)
		}
	}
	one.Requests = firsts
	measure.Summarize(one)
	rep = Runs(conversations(10, 150), one, DefaultOptions())
	found := false
	for _, n := range rep.Notes {
		found = found || n == "turn:2 is only in the base run"
	}
	if !found {
		t.Errorf("notes %q: want turn:2 named as only in the base run", rep.Notes)
	}
}
