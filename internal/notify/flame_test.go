package notify

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

func TestAlertLinksTheFlameGraph(t *testing.T) {
	dir := t.TempDir()
	run := reporttest.StallRun()
	if _, err := reporttest.WriteProfile(dir, run); err != nil {
		t.Fatal(err)
	}
	const url = "https://bucket.example/runs/1/report.html?X-Amz-Signature=abc"
	m := Build(run, url, nil)
	if m.Alert.Profile != "cpu.pprof" || m.Alert.FlameGraphURL != url+"#flame-graph" {
		t.Fatalf("alert profile %q, flame graph %q", m.Alert.Profile, m.Alert.FlameGraphURL)
	}
	if txt := m.Alert.PlainText(); !strings.Contains(txt, "Flame graph: "+url+"#flame-graph") || !strings.Contains(txt, "Profile: cpu.pprof") {
		t.Errorf("mail body lacks the flame graph link or the profile:\n%s", txt)
	}
	if !strings.Contains(m.Text, "#flame-graph|flame graph>") {
		t.Errorf("webhook text lacks the flame graph link: %s", m.Text)
	}
	// Unpublished: the profile is named, no link is made up.
	m = Build(run, "", nil)
	if m.Alert.FlameGraphURL != "" || !strings.Contains(m.Alert.PlainText(), "Profile: cpu.pprof in the run directory") {
		t.Errorf("unpublished alert: link %q, body:\n%s", m.Alert.FlameGraphURL, m.Alert.PlainText())
	}
	att := FlameGraph(run, dir)
	if len(att) != 1 || att[0].Name != "flame.svg" || !bytes.Contains(att[0].Data, []byte("engine.matVec")) {
		t.Fatalf("mail attachment: %+v", att)
	}
	if FlameGraph(reporttest.StallRun(), dir) != nil {
		t.Error("a run without a profile gets a flame graph attachment")
	}
}
