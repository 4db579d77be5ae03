package baseline

import (
	"errors"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/compare"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func run(suite string) *runfile.Run {
	return &runfile.Run{
		Target: runfile.Target{URL: "http://h:8080/v1", API: "chat", Model: "m"},
		Device: runfile.Device{Hostname: "host"},
		Config: runfile.Config{Suite: suite, Concurrency: 1, MaxTokens: 128, Arrival: "closed"},
		Requests: []runfile.Request{
			{Category: "c", TokenTimesNS: []int64{1, 2}},
		},
	}
}

func TestCheckRefusesAnotherConfigNamingEachDifference(t *testing.T) {
	base, cur := run("zh-medical"), run("en-assistant")
	base.Config.MaxTokens = 256
	base.Config.Concurrency = 4
	base.Target.API = "completions"
	base.Config.Scenario = "rapid-fire"
	t0 := 0.0
	cur.Config.Request = &api.RequestOptions{Temperature: &t0}
	cur.Target.URL = "http://h:8080" // the same target without /v1
	err := Policy{}.Check(base, cur)
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("Check = %v, want a *Refusal", err)
	}
	r.Base = "the last run of this target"
	msg := r.Error()
	for _, want := range []string{
		"the last run of this target used suite zh-medical, this one en-assistant",
		"API completions, this one chat",
		"max tokens 256, this one 128",
		"concurrency 4, this one 1",
		"scenario rapid-fire, this one none",
		`sampling the server's defaults, this one {"temperature":0}`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	for _, d := range r.Differences {
		if d.Setting == "target" {
			t.Errorf("refusal names the target although only /v1 differs: %q", msg)
		}
	}
	if err := (Policy{AnyConfig: true}).Check(base, cur); err != nil {
		t.Errorf("AnyConfig: Check = %v, want nil", err)
	}
	if err := (Policy{}).Check(run("s"), run("s")); err != nil {
		t.Errorf("same settings: Check = %v, want nil", err)
	}
	// Unset fields read as their defaults.
	a, b := run("s"), run("s")
	a.Target.API, a.Config.Concurrency, a.Config.Arrival = "", 0, ""
	if d := Differences(a, b); d != nil {
		t.Errorf("defaults: Differences = %v, want none", d)
	}
}

func TestCheckPassesOverUnusableRuns(t *testing.T) {
	cur := run("s")
	interrupted := run("s")
	interrupted.Interrupted = true
	failed := run("s")
	failed.Requests[0].Error = "boom"
	for name, base := range map[string]*runfile.Run{"interrupted": interrupted, "all failed": failed} {
		var u *Unusable
		if err := (Policy{AnyConfig: true}).Check(base, cur); !errors.As(err, &u) {
			t.Errorf("%s: Check = %v, want *Unusable", name, err)
		}
		if err := (Policy{AllowUnusable: true}).Check(base, cur); err != nil {
			t.Errorf("%s with AllowUnusable: Check = %v", name, err)
		}
	}
}

func TestCompareNotesSettingsNotURLSpelling(t *testing.T) {
	base, cur := run("zh-medical"), run("en-assistant")
	base.Target.URL = "http://H:8080/v1/"
	cur.Target.URL = "http://h:8080"
	rep := Compare(base, cur, compare.DefaultOptions())
	var suite bool
	for _, n := range rep.Notes {
		if strings.Contains(n, "differ in target") {
			t.Errorf("note %q: the targets are one", n)
		}
		suite = suite || strings.Contains(n, "differ in suite: base zh-medical, this one en-assistant")
	}
	if !suite {
		t.Errorf("notes %q do not name the suites", rep.Notes)
	}
}

func TestTraceReplaysDifferBySpeedAndWindow(t *testing.T) {
	replay := func(speed float64, from int64) *runfile.Run {
		r := run("trace:day.jsonl")
		r.Config.Arrival = runfile.ArrivalTrace
		r.Config.Trace = &runfile.TraceConfig{File: "day.jsonl", Speed: speed, WindowFromMS: from}
		return r
	}
	if d := Differences(replay(1, 0), replay(1, 0)); d != nil {
		t.Errorf("the same replay: %v", d)
	}
	for _, c := range []struct {
		other *runfile.Run
		want  string
	}{
		{replay(2, 0), "arrival trace at speed ×1, window 0–0 ms, this one trace at speed ×2, window 0–0 ms"},
		{replay(1, 5000), "this one trace at speed ×1, window 5000–0 ms"},
	} {
		d := Differences(replay(1, 0), c.other)
		if len(d) != 1 || d[0].String() != c.want && !strings.Contains(d[0].String(), c.want) {
			t.Errorf("Differences = %v, want %q", d, c.want)
		}
	}
}
