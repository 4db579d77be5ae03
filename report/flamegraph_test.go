package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

func TestHTMLDrawsTheFlameGraphOfTheServer(t *testing.T) {
	dir := t.TempDir()
	r := reporttest.StallRun()
	if _, err := reporttest.WriteProfile(dir, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteAll(dir, r, report.Options{Formats: []string{"html", "svg"}}); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{
		`id="flame-graph"`, `class="flame"`, "engine.matVec", "engine.(*Model).forward",
		"600 ms of CPU, 75.0% of the 800 ms", // the server's share, the client left out
		"go tool pprof",
		"<h3>CPU profile</h3>", "label <code>tokenpulse=server</code>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// The client's samples are not the server's: not drawn.
	if strings.Contains(page, "Client).read") {
		t.Error("the measuring client's samples are drawn in the server's flame graph")
	}
	svg, err := os.ReadFile(filepath.Join(dir, report.ChartsDir, "flame.svg"))
	if err != nil {
		t.Fatalf("charts/flame.svg: %v", err)
	}
	if !bytes.Contains(svg, []byte("engine.matVec")) {
		t.Error("charts/flame.svg does not draw the server's function")
	}
}

func TestHTMLWithoutProfileHasNoFlameGraph(t *testing.T) {
	var buf bytes.Buffer
	if err := report.HTML(&buf, reporttest.StallRun(), report.Options{RunDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `id="flame-graph"`) {
		t.Error("a run without a profile shows a flame graph section")
	}
}

func TestHTMLSaysWhenTheProfileIsMissing(t *testing.T) {
	dir := t.TempDir()
	r := reporttest.StallRun()
	if _, err := reporttest.WriteProfile(dir, r); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "cpu.pprof")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := report.HTML(&buf, r, report.Options{RunDir: dir}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "could not be read") {
		t.Error("a run whose profile is gone must say so")
	}
}
