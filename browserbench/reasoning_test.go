package browserbench

import (
	"reflect"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// The page's per-event reasoning marks become the request's thinking
// runs: an event that carried answer text too is the answer's.
func TestRecordReasoning(t *testing.T) {
	r := &record{ID: "r", T0: 10, FetchAt: 11, HeadersAt: 12, FirstByteAt: 13, EndAt: 40, AbortedAt: -1, Status: 200,
		Arrival:   []float64{14, 15, 16, 17, 18},
		Reasoning: []string{"only", "only", "with-answer", "", "only"},
		Insert:    []float64{-1, -1, 16.5, 17.5, -1}, Paint: []float64{-1, -1, 20, 21, -1}}
	q := r.request(0, 1)
	if want := [][2]int{{0, 2}, {4, 5}}; !reflect.DeepEqual(q.ReasoningRuns, want) || q.ReasoningEvents != 4 {
		t.Errorf("runs %v (%d reasoning events), want %v (4)", q.ReasoningRuns, q.ReasoningEvents, want)
	}
	run := &runfile.Run{Requests: []runfile.Request{q}}
	if err := run.Validate(); err != nil {
		t.Errorf("the record does not validate: %v", err)
	}
}
