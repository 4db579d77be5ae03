package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/suite"
)

// The golden runs (testdata/golden, see its README) were recorded with
// the tokenpulse of before this package: re-finishing their requests
// must give their summaries and verdicts to the byte, and rebuilding the
// killed run's journal the figures the old rebuild gave.

// refinish finishes a copy of a recorded run again from its requests
// and config, with the rules it recorded (its tier's shipped thresholds).
func refinish(t *testing.T, rec *runfile.Run) *runfile.Run {
	t.Helper()
	run := *rec
	run.Summary, run.Verdicts, run.Experience, run.Warnings = runfile.Summary{}, nil, nil, nil
	s := &suite.Suite{Name: run.Config.Suite}
	for c, th := range rec.Config.SuiteThresholds {
		s.Categories = append(s.Categories, suite.Category{Name: c, Thresholds: th})
	}
	var tier []string
	if run.Device.Tier != "" {
		x, ok := gate.DefaultTiers().Get(run.Device.Tier)
		if !ok {
			t.Fatalf("no tier %q", run.Device.Tier)
		}
		tier = x.Thresholds
	}
	rules, err := gate.Recorded(run.Device.Tier, tier, "")
	if err != nil {
		t.Fatal(err)
	}
	rules.Thresholds = run.Config.Thresholds
	Finish(&run, s, rules)
	return &run
}

// beforeFields returns verdicts with only the fields the run file had
// before verdicts held what they judge as fields (metric, statistic,
// operator were added, and are checked apart): the golden files were
// written then.
func beforeFields(vs []runfile.Verdict) []runfile.Verdict {
	out := slices.Clone(vs)
	for i := range out {
		out[i].Metric, out[i].Statistic, out[i].Operator = "", "", ""
	}
	return out
}

// checkFields asserts that each verdict's fields say what its text does.
func checkFields(t *testing.T, vs []runfile.Verdict) {
	t.Helper()
	for _, v := range vs {
		if want := v.Metric + "." + v.Statistic + " " + v.Operator + " "; !strings.HasPrefix(v.Rule, want) || v.Metric == "" {
			t.Errorf("verdict %q: metric %q, statistic %q, operator %q", v.Rule, v.Metric, v.Statistic, v.Operator)
		}
	}
}

func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoldenRunsFinishTheSame(t *testing.T) {
	for _, name := range []string{"closed-tier", "open-gamma", "conversations", "ones", "ones-kept"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "golden", name)
			rec, err := runfile.Load(filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			got := refinish(t, rec)
			// The verdicts as bench wrote them: judging reads no clock.
			if g, w := jsonOf(t, got.Verdicts), jsonOf(t, rec.Verdicts); !bytes.Equal(g, w) {
				t.Errorf("verdicts differ from %s's:\n got %.600s\nwant %.600s", FileName, g, w)
			}
			if g, w := jsonOf(t, got.Config.SuiteThresholds), jsonOf(t, rec.Config.SuiteThresholds); len(rec.Config.SuiteThresholds) > 0 && !bytes.Equal(g, w) {
				t.Errorf("suite thresholds differ:\n got %s\nwant %s", g, w)
			}
			// The summary as the code of before summarised the loaded
			// file (the throughput's span differs from bench's by the
			// monotonic clock's nanoseconds, which a file does not keep).
			want, err := os.ReadFile(filepath.Join(dir, "refinished.golden.json"))
			if err != nil {
				t.Fatal(err)
			}
			checkFields(t, got.Verdicts)
			g := jsonOf(t, map[string]any{"summary": got.Summary, "verdicts": beforeFields(got.Verdicts), "experience": got.Experience})
			if !bytes.Equal(append(g, '\n'), want) {
				t.Errorf("summary, verdicts or experience differ from refinished.golden.json:\n got %.600s", g)
			}
		})
	}
}

func TestGoldenJournalRebuildsTheSame(t *testing.T) {
	j, err := runfile.ReadJournal(filepath.Join("testdata", "golden", "killed", runfile.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	run, err := Rebuild(j)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "golden", "killed", "rebuilt.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkFields(t, run.Verdicts)
	got := jsonOf(t, map[string]any{"summary": run.Summary, "verdicts": beforeFields(run.Verdicts), "experience": run.Experience, "warnings": run.Warnings, "suite_thresholds": run.Config.SuiteThresholds})
	if !bytes.Equal(append(got, '\n'), want) {
		os.WriteFile(filepath.Join(t.TempDir(), "got.json"), got, 0o644)
		t.Errorf("the rebuilt run differs from rebuilt.golden.json:\n got %.800s", got)
	}
}

// TestGoldenServerAccount: the server's account of a golden run, now
// derived in measure (ServerAccount), reads as bench printed it when it
// recorded the run.
func TestGoldenServerAccount(t *testing.T) {
	run, err := runfile.Load(filepath.Join("testdata", "golden", "closed-tier", FileName))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Text(&b, run, report.Options{}); err != nil {
		t.Fatal(err)
	}
	const printed = "server's own account (tokenpulse, 20 warm requests): TTFT mean 37.4 ms = server 37.1 ms (queue and prefill) + network and client 0.3 ms (1%); TPOT mean: client 11.69 ms, server 11.69 ms (-0.0%)"
	if !strings.Contains(b.String(), printed) {
		t.Errorf("the text report lacks %q:\n%s", printed, b.String())
	}
	a, ok := measure.ServerAccount(run, measure.Overall)
	if !ok || a.Requests != 20 || a.TPOTRequests != 20 || a.Source != "tokenpulse" {
		t.Errorf("account %+v, %v", a, ok)
	}
}
