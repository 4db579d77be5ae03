package main

import (
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

func TestPrintableKeepsTextAndNeutralisesControls(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Once upon a time,\n\tthere", "Once upon a time,\n\tthere"},
		{"\x1b[2Jboom\a", "\uFFFD[2Jboom\uFFFD"},
		{"back\rspace\x7f", "back\uFFFDspace\uFFFD"},
		{"故事", "故事"},
	} {
		if got := printable(tc.in); got != tc.want {
			t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestGenerateMemoryAndContext: --max-memory refuses a model that would
// take more, and --ctx beyond the model's own context loads with a
// warning.
func TestGenerateMemoryAndContext(t *testing.T) {
	out, code := cliRun(t, "generate", "--prompt", "Once", "-n", "2", "--threads", "1", "--max-memory", "1MiB")
	if code == exitOK || !strings.Contains(out, "not enough memory") || !strings.Contains(out, "the limit is 1.0 MiB (--max-memory)") {
		t.Errorf("--max-memory 1MiB: exit %d, output:\n%s", code, out)
	}
	out, code = cliRun(t, "generate", "--prompt", "Once", "-n", "2", "--threads", "1", "--ctx", "1024")
	if code != exitOK || !strings.Contains(out, "warning: context size 1024 exceeds the model's own 512") {
		t.Errorf("--ctx 1024: exit %d, output:\n%s", code, out)
	}
}

// TestGenerateRepackFlag: the load message names the kernels; on a CPU
// with the AVX-512 VNNI kernel a Q8_0 model's weights are rearranged for
// it, and --repack=false keeps them in the file's layout.
func TestGenerateRepackFlag(t *testing.T) {
	model := fixture.Path(t, "models/stories260K-Q8_0.gguf")
	rp := quant.Repacked(quant.Q8_0, 16)
	for _, flag := range []string{"--repack=true", "--repack=false"} {
		out, code := cliRun(t, "generate", "--model", model, "--prompt", "Once", "-n", "2", "--threads", "1", flag)
		want := "kernels   " + quant.Accel() + "\n"
		if rp != nil && flag == "--repack=true" {
			// The model's matrices of whole 16-row groups take the 16-row
			// layout's kernels (rp.Name); the others, where the CPU has
			// one, a row-by-row layout of their own.
			want = "kernels   " + rp.Name + " on Q8_0 rearranged at load; "
		}
		_, line, _ := strings.Cut(out, "kernels   ")
		line, _, _ = strings.Cut(line, "\n")
		line = "kernels   " + line + "\n"
		if code != exitOK || !strings.HasPrefix(line, want) || !strings.HasSuffix(line, quant.Accel()+"\n") {
			t.Errorf("%s: exit %d, want a kernels line starting %q and ending in %q:\n%s", flag, code, want, quant.Accel(), out)
		}
	}
}

// TestGenerateTimingsAreMeasures: generate's TTFT and TPOT are measure's
// figures of one request whose every event is one token.
func TestGenerateTimingsAreMeasures(t *testing.T) {
	var b strings.Builder
	printTimings(&b, engine.Info{Path: "m.gguf"}, engine.Warmup{}, engine.Result{}, []int64{10e6, 20e6, 40e6})
	for _, want := range []string{"TTFT      10.000 ms", "TPOT      mean 15.000 ms, std 7.071 ms (47.1%), p95 19.500 ms, max 20.000 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("timings lack %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	printTimings(&b, engine.Info{Path: "m.gguf"}, engine.Warmup{}, engine.Result{}, []int64{10e6})
	if strings.Contains(b.String(), "TPOT") || !strings.Contains(b.String(), "TTFT      10.000 ms") {
		t.Errorf("one token: want a TTFT and no TPOT:\n%s", b.String())
	}
}
