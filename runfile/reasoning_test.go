package runfile

import (
	"reflect"
	"testing"
)

func TestValidateReasoningRuns(t *testing.T) {
	ok := saneRun(1)
	ok.Requests[0].ReasoningEvents, ok.Requests[0].ReasoningRuns = 2, [][2]int{{0, 1}, {2, 3}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid runs refused: %v", err)
	}
	for _, c := range []struct {
		name string
		runs [][2]int
		want string
	}{
		{"past the events", [][2]int{{1, 4}}, "reasoning_runs[0]"},
		{"empty run", [][2]int{{1, 1}}, "reasoning_runs[0]"},
		{"overlapping", [][2]int{{0, 2}, {1, 3}}, "reasoning_runs[1]"},
		{"more than counted", [][2]int{{0, 3}}, "more than reasoning_events"},
	} {
		r := saneRun(1)
		r.Requests[0].ReasoningEvents, r.Requests[0].ReasoningRuns = 2, c.runs
		wantInvalid(t, r.Validate(), c.want)
	}
}

func TestExtendRuns(t *testing.T) {
	var runs [][2]int
	for _, i := range []int{0, 1, 2, 5, 7, 8} {
		runs = ExtendRuns(runs, i)
	}
	if want := [][2]int{{0, 3}, {5, 6}, {7, 9}}; !reflect.DeepEqual(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
}
