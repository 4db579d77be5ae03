// Package baseline decides which earlier run a new run may be compared
// with: the policy behind `tokenpulse compare --against last` and
// `bench --against last`, for Go users who keep their own history.
//
// Two runs are comparable only when they measured the same thing the same
// way: the same target (URLs compared after NormalizeURL), model and
// device, and the same suite, API, max tokens, concurrency, arrival
// process and scenario. Figures of runs that differ in any of these differ
// for that reason alone, so a comparison of them proves nothing; Check
// refuses such a base with a *Refusal that names every difference, unless
// the Policy allows any configuration. A run is usable as a base at all
// only when it finished (was not interrupted) and at least one of its
// measured requests succeeded.
//
//	p := baseline.Policy{}
//	if err := p.Check(base, cur); err != nil {
//		var r *baseline.Refusal
//		if errors.As(err, &r) { fmt.Println(r) } // "the base used suite zh-medical, this one en-assistant"
//	}
package baseline

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Difference is one setting in which a base run differs from the new one.
type Difference struct {
	// Setting names it: "target", "model", "device", "suite", "API",
	// "max tokens", "concurrency", "arrival", "scenario".
	Setting string `json:"setting"`
	// Base and New are its values in the two runs, as a person reads them.
	Base string `json:"base"`
	New  string `json:"new"`
}

// String is "suite zh-medical, this one en-assistant".
func (d Difference) String() string {
	return fmt.Sprintf("%s %s, this one %s", d.Setting, d.Base, d.New)
}

// Differences returns the settings in which base and cur differ that make
// their figures incomparable, in a fixed order; nil when they are
// comparable. Unset values read as their defaults (API chat, concurrency
// 1, closed-loop arrival, no scenario, the prompts' max tokens, the
// server's sampling).
func Differences(base, cur *runfile.Run) []Difference {
	var out []Difference
	add := func(setting, b, n string) {
		if b != n {
			out = append(out, Difference{Setting: setting, Base: b, New: n})
		}
	}
	add("target", orNone(base.Target.Key()), orNone(cur.Target.Key()))
	add("model", orNone(base.Target.Model), orNone(cur.Target.Model))
	add("device", orNone(base.Device.Key()), orNone(cur.Device.Key()))
	add("suite", orNone(base.Config.Suite), orNone(cur.Config.Suite))
	add("API", apiName(base), apiName(cur))
	add("max tokens", maxTokens(base), maxTokens(cur))
	add("concurrency", strconv.Itoa(max(base.Config.Concurrency, 1)), strconv.Itoa(max(cur.Config.Concurrency, 1)))
	add("arrival", arrival(base), arrival(cur))
	add("scenario", orNone(base.Config.Scenario), orNone(cur.Config.Scenario))
	add("sampling", sampling(base), sampling(cur))
	return out
}

// sampling names the request shape a run sent (temperature, top-p, ...),
// "the server's defaults" when it sent none.
func sampling(r *runfile.Run) string {
	o := r.Config.Request
	if o == nil || o.IsZero() {
		return "the server's defaults"
	}
	b, err := json.Marshal(o)
	if err != nil {
		return "?"
	}
	return string(b)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func apiName(r *runfile.Run) string {
	if r.Target.API == "" {
		return "chat"
	}
	return r.Target.API
}

func maxTokens(r *runfile.Run) string {
	if r.Config.MaxTokens <= 0 {
		return "unset (the prompts' own)"
	}
	return strconv.Itoa(r.Config.MaxTokens)
}

func arrival(r *runfile.Run) string {
	switch r.Config.Arrival {
	case "", runfile.ArrivalClosed:
		return "closed loop"
	case runfile.ArrivalTrace:
		// The trace itself is the suite ("trace:FILE"); its slice and
		// speed are the load.
		if t := r.Config.Trace; t != nil {
			return fmt.Sprintf("trace at speed ×%s, window %d–%d ms", strconv.FormatFloat(t.Speed, 'g', -1, 64), t.WindowFromMS, t.WindowToMS)
		}
	}
	return fmt.Sprintf("%s at %s/s", r.Config.Arrival, strconv.FormatFloat(r.Config.Rate, 'g', -1, 64))
}

// Usable says whether run can serve as a base at all, and why not: an
// interrupted run, or one in which no measured warm request succeeded,
// says nothing a new run could regress from. A run file without requests
// is judged on its summary.
func Usable(run *runfile.Run) (bool, string) {
	if run.Interrupted {
		return false, "it was interrupted"
	}
	g := run.Summary.Overall
	if len(run.Requests) > 0 {
		g = measure.Group(run, measure.Overall)
	}
	warm, ok := g.Requests, g.Requests-g.Errors
	switch {
	case warm == 0:
		return false, "it measured no warm request"
	case ok == 0:
		return false, "every warm request failed"
	}
	return true, ""
}

// Unusable is Check's error for a base that cannot serve at all.
type Unusable struct{ Reason string }

// Error says why the base cannot serve.
func (e *Unusable) Error() string { return "not usable as a baseline: " + e.Reason }

// Refusal is Check's error for a base whose settings differ from the new
// run's.
type Refusal struct {
	// Base names the base as the message should ("the last run of this
	// target", "history run 3"); "the base run" when empty.
	Base        string
	Differences []Difference
}

// Error is "the last run of this target used suite zh-medical, this one
// en-assistant; max tokens 256, this one 128".
func (e *Refusal) Error() string {
	name := e.Base
	if name == "" {
		name = "the base run"
	}
	parts := make([]string, len(e.Differences))
	for i, d := range e.Differences {
		parts[i] = d.String()
	}
	return name + " used " + strings.Join(parts, "; ")
}

// Policy says which earlier run may serve as a base.
type Policy struct {
	// AnyConfig accepts a base whose settings differ (--against-any); the
	// differences are still reported by Differences.
	AnyConfig bool
	// AllowUnusable accepts an interrupted base or one without a
	// successful request (a run the user named explicitly).
	AllowUnusable bool
}

// Check returns nil when base may serve as cur's base under p; otherwise
// an *Unusable or a *Refusal.
func (p Policy) Check(base, cur *runfile.Run) error {
	if !p.AllowUnusable {
		if ok, why := Usable(base); !ok {
			return &Unusable{Reason: why}
		}
	}
	if p.AnyConfig {
		return nil
	}
	if d := Differences(base, cur); len(d) > 0 {
		return &Refusal{Differences: d}
	}
	return nil
}

// Notes returns the differences of base from cur as notes for a
// comparison made anyway: "the base differs in suite (zh-medical, this
// one en-assistant)".
func Notes(base, cur *runfile.Run) []string {
	var out []string
	for _, d := range Differences(base, cur) {
		out = append(out, fmt.Sprintf("the runs differ in %s: base %s, this one %s; the comparison may not mean what it seems", d.Setting, d.Base, d.New))
	}
	return out
}
