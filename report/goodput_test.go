package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestTextShowsGoodput(t *testing.T) {
	run := &runfile.Run{Summary: runfile.Summary{Goodput: &runfile.Goodput{Objectives: []string{"ttft.p95 < 250ms"}, Requests: 30, Good: 27, Share: 0.9, PerS: 1.5}}}
	var b bytes.Buffer
	if err := Text(&b, run, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "goodput: 27 of 30 warm requests (90%) met every per-request objective, 1.50/s"; !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
	run.Summary.Goodput = nil
	b.Reset()
	if err := Text(&b, run, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "goodput") {
		t.Errorf("a run without goodput shows one:\n%s", b.String())
	}
}
