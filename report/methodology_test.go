package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

func TestMethodologyGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Methodology(&buf, reporttest.StallRun()); err != nil {
		t.Fatal(err)
	}
	golden(t, "methodology/stall.md", buf.Bytes())
}

func TestMethodologyContents(t *testing.T) {
	run := reporttest.StallRun()
	run.CommandLine = append(run.CommandLine, "--device-label", "Pixel 8 / Android 15", "it's")
	var buf bytes.Buffer
	if err := Methodology(&buf, run); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"tokenpulse v0.1.0", "before the body is serialised", "terminates the i-th event",
		"numpy's default `linear` method", "divisor n − 1", "60 Hz", "16 ms render batching",
		"seed 42", run.Target.ModelSHA256, "Quantisation F32, context 512 tokens, 2 threads",
		"1 warm-up request was sent first", "Cold requests (1 here)",
		"--device-label 'Pixel 8 / Android 15' 'it'\\''s'",
		"complex 6, short 5",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("methodology lacks %q", want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"plain", []string{"tokenpulse", "bench", "--seed=42"}, "tokenpulse bench --seed=42"},
		{"space", []string{"a b"}, "'a b'"},
		{"quote", []string{"it's"}, `'it'\''s'`},
		{"empty", []string{""}, "''"},
		{"threshold", []string{"gap.max <= 120ms"}, "'gap.max <= 120ms'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shellQuote(tt.in); got != tt.want {
				t.Errorf("shellQuote(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestInlineHTML(t *testing.T) {
	if got, want := string(inlineHTML("a `<b>` c")), "a <code>&lt;b&gt;</code> c"; got != want {
		t.Errorf("inlineHTML = %q, want %q", got, want)
	}
	if got, want := string(inlineHTML("odd ` tick")), "odd ` tick"; got != want {
		t.Errorf("inlineHTML with an unmatched backtick = %q, want %q", got, want)
	}
}

// TestMethodologyDisplayIsTheModels: a run that names no display is
// described with the display the visible metrics were derived on,
// stats.DefaultDisplay (the methodology wrote its own 60 Hz and 16 ms).
func TestMethodologyDisplayIsTheModels(t *testing.T) {
	saved := stats.DefaultDisplay
	t.Cleanup(func() { stats.DefaultDisplay = saved })
	stats.DefaultDisplay = stats.Display{FrameHz: 120, BatchNS: 8_500_000}
	run := reporttest.StallRun()
	run.Config.FrameHz, run.Config.RenderBatchMS = 0, 0
	var buf bytes.Buffer
	if err := Methodology(&buf, run); err != nil {
		t.Fatal(err)
	}
	if md := buf.String(); !strings.Contains(md, "a 120 Hz display") || !strings.Contains(md, "8.5 ms render batching") {
		t.Errorf("methodology of a run without a display model does not name stats.DefaultDisplay (120 Hz, 8.5 ms):\n%s", md)
	}
}

// A run whose tokens came from the server's per-event counts (tokenpulse
// serve, mock, the browser run's relay) says so: the methodology's
// sentence used to end on "in this run:".
func TestTokenSourcesNameEverySource(t *testing.T) {
	for _, tt := range []struct {
		m    map[string]int
		want string
	}{
		{map[string]int{"server": 12}, "12 from the server's per-event counts"},
		{map[string]int{"usage": 3, "events": 2}, "3 from usage, 2 counted from events"},
		{map[string]int{"tokenizer": 1, "later": 2}, "1 counted with the model's vocabulary (--tokenizer), 2 from later"},
		{map[string]int{}, "no successful request"},
	} {
		if got := tokenSources(tt.m); got != tt.want {
			t.Errorf("tokenSources(%v) = %q, want %q", tt.m, got, tt.want)
		}
	}
}

func TestMethodologyNamesTheTrace(t *testing.T) {
	run := reporttest.StallRun()
	run.Config.Arrival, run.Config.Concurrency = runfile.ArrivalTrace, 256
	run.Config.Trace = &runfile.TraceConfig{File: "day.jsonl", Format: "mooncake", Speed: 2, Entries: 12, Vocabulary: "stories260K.gguf (bundled)"}
	var buf bytes.Buffer
	if err := Methodology(&buf, run); err != nil {
		t.Fatal(err)
	}
	want := "the trace `day.jsonl` (mooncake, 12 requests) replayed at its recorded times ×1/2, prompts of its recorded lengths in stories260K.gguf (bundled) (at most 256 concurrent)"
	if md := buf.String(); !strings.Contains(md, want) || strings.Contains(md, "0 requests/s") {
		t.Errorf("methodology lacks %q:\n%s", want, md)
	}
}

func TestTextSummaryStatesTheTraceMatch(t *testing.T) {
	run := reporttest.StallRun()
	run.Config.Arrival = runfile.ArrivalTrace
	run.Config.Trace = &runfile.TraceConfig{File: "day.jsonl", Format: "mooncake", Speed: 1, Entries: 12, Vocabulary: "v"}
	run.Summary.Trace = &runfile.TraceMatch{KS: 0.125, Arrivals: 12, Answered: 11, AtLength: 10}
	var buf bytes.Buffer
	if err := Text(&buf, run, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "arrival match KS 0.125 over 11 inter-arrivals (recorded vs achieved); length match 10 of 11 answers at their recorded length"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("the text summary lacks %q:\n%s", want, buf.String())
	}
}

func TestHTMLStatesTheTraceMatch(t *testing.T) {
	run := reporttest.StallRun()
	run.Config.Arrival = runfile.ArrivalTrace
	run.Summary.Trace = &runfile.TraceMatch{KS: 0.125, Arrivals: 12, Answered: 11, AtLength: 10}
	var buf bytes.Buffer
	if err := HTML(&buf, run, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "arrival match KS 0.125 over 11 inter-arrivals"; !strings.Contains(buf.String(), want) {
		t.Errorf("the HTML report lacks %q", want)
	}
}
