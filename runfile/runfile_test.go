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

// TestSchema1VerdictsGetTheirFields: a run file written before verdicts
// held what they judge as fields still loads, the fields derived from
// the rule's text.
func TestSchema1VerdictsGetTheirFields(t *testing.T) {
	r, err := Decode([]byte(`{"schema_version":1,"verdicts":[
		{"rule":"gap.max <= 120ms","scope":"category:complex","value":130,"limit":120,"unit":"ms","passed":false},
		{"rule":"goodput.share >= 90%","scope":"overall","value":95,"limit":90,"unit":"%","passed":true},
		{"rule":"ttft.p95 < 1s","scope":"overall","metric":"ttft","statistic":"p95","operator":"<","value":1,"limit":1000,"unit":"ms","passed":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		metric, stat, op string
		upper            bool
	}{{"gap", "max", "<=", true}, {"goodput", "share", ">=", false}, {"ttft", "p95", "<", true}} {
		v := r.Verdicts[i]
		if v.Metric != want.metric || v.Statistic != want.stat || v.Operator != want.op || v.Upper() != want.upper {
			t.Errorf("verdict %q: %q %q %q upper %v, want %+v", v.Rule, v.Metric, v.Statistic, v.Operator, v.Upper(), want)
		}
	}
}
