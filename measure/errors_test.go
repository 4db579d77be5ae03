package measure_test

import (
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestErrorGroupsByMessage(t *testing.T) {
	refused := "connect: dial tcp 127.0.0.1:1: connect: connection refused"
	run := &runfile.Run{Requests: []runfile.Request{
		{RequestID: "w0", Warmup: true, Error: refused, ErrorKind: runfile.ErrorConnect},
		{RequestID: "r1", Error: "http 500: boom", ErrorKind: runfile.ErrorHTTP},
		{RequestID: "r2", Error: refused, ErrorKind: runfile.ErrorConnect},
		{RequestID: "r3"},
		{RequestID: "r6", Error: "no answer", ErrorKind: runfile.ErrorTimeout},
		{RequestID: "r4", Error: refused, ErrorKind: runfile.ErrorConnect},
		{RequestID: "r5", Aborted: true, Error: "cancelled on purpose", ErrorKind: runfile.ErrorCancelled},
	}}
	got := measure.ErrorGroups(run)
	if len(got) != 3 {
		t.Fatalf("groups = %+v, want 2", got)
	}
	if g := got[0]; g.Message != refused || g.Count != 3 || g.Warmup != 1 || g.First != "w0" {
		t.Errorf("first group = %+v", g)
	}
	if s := got[0].String(); s != refused+" ×3 (1 warm-up)" {
		t.Errorf("String = %q", s)
	}
	if s := got[2].String(); s != "timeout: no answer ×1" {
		t.Errorf("String = %q", s)
	}
	if s := got[1].String(); s != "http 500: boom ×1" {
		t.Errorf("String = %q", s)
	}
}
