package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// JUnit XML elements, as CI systems (Jenkins, GitLab, GitHub test
// reporters) read them.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Hostname   string          `xml:"hostname,attr,omitempty"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
		SystemOut  string          `xml:"system-out,omitempty"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Skipped   *junitSkipped `xml:"skipped,omitempty"`
		Failure   *junitFailure `xml:"failure,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",cdata"`
	}
)

// JUnit writes r's verdicts as JUnit XML: one suite "tokenpulse" with one
// test case per threshold and scope (classname = the scope, name = the
// rule). A crossed threshold is a failure whose message gives the value
// and the limit and whose text names each offending prompt, request and
// value (for an error-rate threshold, the errors grouped by message, which
// the suite's system-out also lists); a threshold not judged (its scope had no data) is skipped, with
// the reason. The run's context (target, model, device, tool) goes in the
// suite's properties. When the run was compared with an earlier one, a
// second suite "tokenpulse.comparison" has one test case per scope and
// metric compared, a regression being a failure; a comparison asked for
// and not made is one skipped test case saying why.
func JUnit(w io.Writer, r *runfile.Run) error {
	s := junitSuite{
		Name:     "tokenpulse",
		Time:     "0",
		Hostname: r.Device.Hostname,
	}
	if !r.StartedAt.IsZero() {
		s.Timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	if !r.FinishedAt.IsZero() && r.FinishedAt.After(r.StartedAt) {
		s.Time = fmt.Sprintf("%.3f", r.FinishedAt.Sub(r.StartedAt).Seconds())
	}
	for _, p := range []junitProperty{
		{"tool", strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version)},
		{"target", r.Target.URL},
		{"model", r.Target.Model},
		{"backend", r.Target.Backend},
		{"device", deviceLine(r.Device)},
		{"suite", r.Config.Suite},
		{"seed", fmt.Sprint(r.Config.Seed)},
	} {
		if p.Value != "" {
			s.Properties = append(s.Properties, p)
		}
	}
	s.Properties = append(s.Properties, reasoningProperties(r.Summary.Overall)...)
	for _, v := range r.Verdicts {
		c := junitCase{Name: v.Rule, Classname: v.Scope, Time: "0"}
		line := fmt.Sprintf("%s on %s: %s, limit %s", v.Metric+"."+v.Statistic, v.Scope, fmtValue(v.Value, v.Unit), fmtLimit(v.Limit, v.Unit))
		if v.Source != "" {
			line += " (from " + v.Source + ")"
		}
		switch {
		case !v.Judged():
			s.Skipped++
			c.Skipped = &junitSkipped{Message: v.Rule + " " + notJudgedLine(v)}
			c.SystemOut = fmt.Sprintf("%s on %s: %s, limit %s", v.Metric+"."+v.Statistic, v.Scope, notJudgedLine(v), fmtLimit(v.Limit, v.Unit))
		case v.Passed:
			c.SystemOut = line
		default:
			s.Failures++
			var b strings.Builder
			b.WriteString(line + "\n")
			if len(v.Offenders) == 0 {
				b.WriteString("no single request is to blame: the threshold is on the scope as a whole\n")
			} else {
				b.WriteString("offending prompts:\n")
			}
			for _, o := range v.Offenders {
				fmt.Fprintf(&b, "  prompt %s, request %s (#%d, category %s): %s\n",
					orDash(o.PromptID), orDash(o.RequestID), o.Index, orDash(o.Category), offenderValue(r, v, o))
			}
			if lines := errorLines(r); v.Metric == "errors" && len(lines) > 0 {
				b.WriteString("errors by message:\n  " + strings.Join(lines, "\n  ") + "\n")
			}
			msg := fmt.Sprintf("%s crossed: %s, limit %s", v.Rule, fmtValue(v.Value, v.Unit), fmtLimit(v.Limit, v.Unit))
			if n := len(v.Offenders); n > 0 {
				msg += fmt.Sprintf("; offenders: %s", offenderList(r, v, 3))
			}
			c.Failure = &junitFailure{Message: msg, Type: "threshold", Text: b.String()}
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	if lines := errorLines(r); len(lines) > 0 {
		s.SystemOut = "errors by message:\n  " + strings.Join(lines, "\n  ") + "\n"
	}
	doc := junitSuites{Name: "tokenpulse", Tests: s.Tests, Failures: s.Failures, Suites: []junitSuite{s}}
	if r.Comparison != nil {
		cs := junitComparison(r.Comparison, s)
		doc.Tests += cs.Tests
		doc.Failures += cs.Failures
		doc.Suites = append(doc.Suites, cs)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitComparison is the suite of the comparison with an earlier run.
func junitComparison(c *runfile.Comparison, main junitSuite) junitSuite {
	s := junitSuite{Name: "tokenpulse.comparison", Time: "0", Timestamp: main.Timestamp, Hostname: main.Hostname}
	for _, p := range []junitProperty{
		{"against", c.Against},
		{"base", c.Base},
		{"result", comparisonResult(c)},
		{"evidence", comparisonEvidence(c)},
	} {
		if p.Value != "" {
			s.Properties = append(s.Properties, p)
		}
	}
	if c.Skipped != "" {
		s.Skipped++
		s.Cases = append(s.Cases, junitCase{Name: "comparison", Classname: "comparison", Time: "0",
			Skipped: &junitSkipped{Message: "not compared: " + c.Skipped}})
		s.Tests = len(s.Cases)
		return s
	}
	for _, x := range c.Changes {
		jc := junitCase{Name: x.Metric, Classname: "comparison." + x.Scope, Time: "0"}
		line := changeLine(x) + ": " + string(x.Status)
		switch {
		case x.Regressed():
			s.Failures++
			jc.Failure = &junitFailure{Message: "regression: " + changeLine(x), Type: "regression",
				Text: line + "\n" + comparisonTitle(c) + "\n" + comparisonMethod(c) + " (" + x.Test + ")\n"}
		case x.Status == runfile.ChangeTooFew:
			s.Skipped++
			jc.Skipped = &junitSkipped{Message: fmt.Sprintf("too few samples to test (%d base, %d new)", x.NBase, x.NNew)}
		default:
			jc.SystemOut = line
		}
		s.Cases = append(s.Cases, jc)
	}
	s.Tests = len(s.Cases)
	return s
}
