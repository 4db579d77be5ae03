package bench

import (
	"reflect"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/stream"
)

func TestRecordCopiesTheTrace(t *testing.T) {
	tr := &stream.Trace{
		RequestID: "r1", Status: 200, Retried: true,
		Sent: 1, Headers: 2, FirstByte: 3, LastEvent: 40 * time.Millisecond,
		TokenTimes:  []time.Duration{10 * time.Millisecond, 20 * time.Millisecond},
		TokenCounts: []int{3, 2},
		ServerTimes: []int64{100, 200},
		Usage:       &api.Usage{PromptTokens: 7, CompletionTokens: 5},
		Timings:     &api.Timings{PrefillNS: 2, DecodeNS: 3},
	}
	r := Record(tr)
	if r.RequestID != "r1" || !r.Retried || r.TTFTNS != 10e6 || r.E2ENS != 40e6 {
		t.Errorf("record = %+v", r)
	}
	if r.TokenSource != "usage" || r.OutputTokens != 5 || r.PromptTokens != 7 {
		t.Errorf("tokens: source %q output %d prompt %d, want usage 5 7", r.TokenSource, r.OutputTokens, r.PromptTokens)
	}
	if !reflect.DeepEqual(r.TokenCounts, []int{3, 2}) || !reflect.DeepEqual(r.ServerTimesNS, []int64{100, 200}) {
		t.Errorf("counts %v server times %v", r.TokenCounts, r.ServerTimesNS)
	}
	if r.Server == nil || r.Server.PrefillNS != 2 || r.Server.DecodeNS != 3 {
		t.Errorf("server split = %+v", r.Server)
	}

	plain := Record(&stream.Trace{TokenTimes: []time.Duration{1, 2}, TokenCounts: []int{1, 1}, ServerTimes: []int64{0, 0},
		Err: &stream.Error{Kind: stream.KindCut, Message: "x"}})
	if plain.TokenSource != "events" || plain.TokenCounts != nil || plain.ServerTimesNS != nil {
		t.Errorf("one token per event without server times: source %q counts %v server %v, want events, nil, nil", plain.TokenSource, plain.TokenCounts, plain.ServerTimesNS)
	}
	if plain.ErrorKind != "cut" || plain.OK() {
		t.Errorf("error kind %q", plain.ErrorKind)
	}
}
