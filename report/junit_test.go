package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

type parsedJUnit struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := JUnit(&buf, reporttest.StallRun()); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit/stall.xml", buf.Bytes())
}

func TestJUnitShape(t *testing.T) {
	run := reporttest.StallRun()
	var buf bytes.Buffer
	if err := JUnit(&buf, run); err != nil {
		t.Fatal(err)
	}
	var got parsedJUnit
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JUnit XML: %v", err)
	}
	if len(got.Suites) != 1 {
		t.Fatalf("got %d suites, want 1", len(got.Suites))
	}
	s := got.Suites[0]
	if s.Name != "tokenpulse" {
		t.Errorf("suite name %q, want tokenpulse", s.Name)
	}
	if got, want := s.Tests, len(run.Verdicts); got != want || len(s.Cases) != want {
		t.Errorf("tests = %d with %d cases, want %d (one per threshold and scope)", got, len(s.Cases), want)
	}
	if got.Tests != s.Tests || got.Failures != s.Failures {
		t.Errorf("testsuites totals %d/%d differ from the suite's %d/%d", got.Tests, got.Failures, s.Tests, s.Failures)
	}
	if got, want := s.Failures, 2; got != want {
		t.Errorf("failures = %d, want %d", got, want)
	}
	for i, c := range s.Cases {
		v := run.Verdicts[i]
		if c.Name != v.Rule || c.Classname != v.Scope {
			t.Errorf("case %d is %q/%q, want %q/%q", i, c.Classname, c.Name, v.Scope, v.Rule)
		}
		if (c.Failure == nil) != v.Passed {
			t.Errorf("case %s %s: failure %v, verdict passed %v", v.Scope, v.Rule, c.Failure != nil, v.Passed)
		}
	}
	f := s.Cases[0].Failure
	if f == nil {
		t.Fatal("the crossed gap.max case has no failure")
	}
	for _, want := range []string{"prompt " + reporttest.StallPromptID, "request " + reporttest.StallRequestID, "299.9 ms"} {
		if !strings.Contains(f.Text, want) {
			t.Errorf("failure text lacks %q:\n%s", want, f.Text)
		}
	}
	if !strings.Contains(f.Message, reporttest.StallPromptID) {
		t.Errorf("failure message %q does not name the offending prompt", f.Message)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	if got, want := props["model"], "stories260K"; got != want {
		t.Errorf("property model = %q, want %q", got, want)
	}
}
