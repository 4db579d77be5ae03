package notify

import (
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// A rule whose scope had no data neither passes nor fails: alone it
// raises no alert, and in an alert it reads "not judged: no data", never
// "crossed" at 0.
func TestNoDataIsNotCrossed(t *testing.T) {
	nodata := runfile.Verdict{Rule: "ttft.p95 < 250ms", Scope: "category:long", Limit: 250, Unit: "ms",
		NoData: "no data: the run has no category:long request"}
	quiet := passingRun()
	quiet.Verdicts = append(quiet.Verdicts, nodata)
	if ShouldAlert(quiet, nil) {
		t.Errorf("a run whose only unheld rule had no data raises an alert")
	}

	run := reporttest.StallRun()
	run.Verdicts = append(run.Verdicts, nodata)
	msg := Build(run, "", nil)
	for _, c := range msg.Alert.Crossed {
		if c.Rule == nodata.Rule {
			t.Errorf("the rule without data is listed as crossed: %s", c.Line())
		}
	}
	want := "ttft.p95 < 250ms [category:long]: not judged: no data (the run has no category:long request)"
	if len(msg.Alert.NotJudged) != 1 || msg.Alert.NotJudged[0].Line() != want {
		t.Errorf("NotJudged = %+v, want one: %q", msg.Alert.NotJudged, want)
	}
	for name, text := range map[string]string{"mail": msg.Alert.PlainText(), "slack": msg.Text} {
		line := want
		if name == "slack" {
			line = esc(want)
		}
		if !strings.Contains(text, line) {
			t.Errorf("%s text lacks %q:\n%s", name, line, text)
		}
		if strings.Contains(text, "0 ms, limit 250 ms") {
			t.Errorf("%s text shows the rule without data at 0 ms:\n%s", name, text)
		}
	}
	if !strings.Contains(msg.Alert.Summary, "2 thresholds crossed, 1 not judged (no data)") {
		t.Errorf("summary = %q", msg.Alert.Summary)
	}
}
