package runfile

import (
	"path/filepath"
	"testing"
)

func ms(v ...int64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = x * 1_000_000
	}
	return out
}

func TestWriteLoadRoundTrip(t *testing.T) {
	r := &Run{SchemaVersion: SchemaVersion, Target: Target{URL: "http://x"}, Requests: []Request{{RequestID: "a", TTFTNS: 1e6, E2ENS: 2e6, ContentEvents: 2, TokenTimesNS: ms(1, 2)}}}
	p := filepath.Join(t.TempDir(), "sub", "run.json")
	if err := r.Write(p); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Target.URL != "http://x" || got.Requests[0].TokenTimesNS[1] != 2e6 {
		t.Errorf("round trip lost data: %+v", got)
	}
	if _, err := Decode([]byte(`{"schema_version": 99}`)); err == nil {
		t.Error("a newer schema was accepted")
	}
	if _, err := Decode([]byte(`{}`)); err == nil {
		t.Error("a file without schema_version was accepted")
	}
}
