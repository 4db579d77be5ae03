package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

func synthCLI(t *testing.T, dir, typ string) string {
	t.Helper()
	p := filepath.Join(dir, "in-"+typ+".gguf")
	out, code := cliRun(t, "model", "synth", "--dim", "256", "--layers", "1", "--heads", "4", "--ffn", "512", "--vocab", "300", "--ctx", "32", "--type", typ, "-o", p)
	if code != exitOK {
		t.Fatalf("synth: exit %d\n%s", code, out)
	}
	return p
}

// TestModelQuantize runs `model quantize` with per-tensor rules: the file
// has the requested types, the summary lists every tensor with its sizes,
// the kept 1-D tensors and the file sizes, and generate runs on it.
func TestModelQuantize(t *testing.T) {
	dir := t.TempDir()
	in := synthCLI(t, dir, "F32")
	outPath := filepath.Join(dir, "out.gguf")
	out, code := cliRun(t, "model", "quantize", in, outPath, "--type", "q4_k", "--tensor-type", "token_embd=Q6_K,attn_output=Q6_K", "--threads", "2")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"token_embd.weight", "256×300", "Q6_K", "--tensor-type token_embd",
		"blk.0.attn_output.weight", "--tensor-type attn_output",
		"blk.0.ffn_up.weight", "kept F32: 1-D",
		"tensors: 12 (2 Q6_K, 3 F32, 7 Q4_K)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	st, _ := os.Stat(in)
	so, _ := os.Stat(outPath)
	for _, want := range []string{"kept F32: 3 tensor(s), 1-D; llama.cpp keeps these too", "general.file_type: 15 (Q4_K_M)",
		"(" + strconv.FormatInt(st.Size(), 10) + " bytes) -> " + outPath, "(" + strconv.FormatInt(so.Size(), 10) + " bytes)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	f, err := gguf.Open(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, ti := range f.Tensors {
		want := quant.Q4_K
		switch {
		case len(ti.Dims) == 1:
			want = quant.F32
		case ti.Name == "token_embd.weight" || strings.HasSuffix(ti.Name, "attn_output.weight"):
			want = quant.Q6_K
		}
		if ti.Type != want {
			t.Errorf("%s: %v, want %v", ti.Name, ti.Type, want)
		}
	}
	if out, code := cliRun(t, "generate", "--model", outPath, "--prompt", "Once", "-n", "4", "--threads", "1"); code != exitOK {
		t.Errorf("generate on the output: exit %d\n%s", code, out)
	}
}

// TestModelQuantizeRequantWarns: a Q8_0 input is requantised with a
// warning on stderr.
func TestModelQuantizeRequantWarns(t *testing.T) {
	dir := t.TempDir()
	in := synthCLI(t, dir, "Q8_0")
	out, code := cliRun(t, "model", "quantize", in, filepath.Join(dir, "q4k.gguf"), "--type", "Q4_K")
	if code != exitOK || !strings.Contains(out, "warning: "+in+" is already quantised (Q8_0 tensors); requantising loses precision") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// TestModelQuantizeUsage: bad requests exit 2 with a clear message and
// write nothing.
func TestModelQuantizeUsage(t *testing.T) {
	dir := t.TempDir()
	in := synthCLI(t, dir, "F32")
	out := filepath.Join(dir, "out.gguf")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown type", []string{in, out, "--type", "Q7_K"}, `--type: unknown type "Q7_K"`},
		{"no quantiser", []string{in, out, "--type", "Q8_K"}, "cannot quantise to Q8_K"},
		{"missing type", []string{in, out}, "--type is required"},
		{"unknown rule type", []string{in, out, "--type", "Q4_K", "--tensor-type", "token_embd=Q9"}, `--tensor-type "token_embd=Q9": unknown type "Q9"`},
		{"rule syntax", []string{in, out, "--type", "Q4_K", "--tensor-type", "token_embd"}, "want PATTERN=TYPE"},
		{"no match", []string{in, out, "--type", "Q4_K", "--tensor-type", "token_embd=Q6_K", "--tensor-type", "attn_out=Q6_K"}, `pattern "attn_out" matches no tensor`},
		{"same file", []string{in, in, "--type", "Q4_K"}, "is the input file"},
		{"one argument", []string{in, "--type", "Q4_K"}, "want IN.gguf OUT.gguf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, code := cliRun(t, append([]string{"model", "quantize"}, c.args...)...)
			if code != exitUsage || !strings.Contains(got, c.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, exitUsage, c.want, got)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output written by a refused request: %v", err)
	}
	if got, code := cliRun(t, "model", "quantize", filepath.Join(dir, "missing.gguf"), out, "--type", "Q4_K"); code != exitFailure {
		t.Errorf("missing input: exit %d\n%s", code, got)
	}
}

// TestModelQuantizeSaysWhenNothingTookTheType: a file none of whose
// tensors fit the asked type's block (rows of 64 against Q4_K's 256)
// comes out as its input under the type's label; the summary says so and
// names what would work.
func TestModelQuantizeSaysWhenNothingTookTheType(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "narrow.gguf")
	if out, code := cliRun(t, "model", "synth", "--dim", "64", "--layers", "1", "--heads", "4", "--ffn", "128", "--vocab", "300", "--ctx", "32", "--type", "F32", "-o", in); code != exitOK {
		t.Fatalf("synth: exit %d\n%s", code, out)
	}
	out, code := cliRun(t, "model", "quantize", in, filepath.Join(dir, "q4k.gguf"), "--type", "Q4_K")
	if code != exitOK || !strings.Contains(out, "warning: no tensor was stored as Q4_K") || !strings.Contains(out, "--type Q4_K_M") {
		t.Errorf("exit %d\n%s", code, out)
	}
	out, code = cliRun(t, "model", "quantize", in, filepath.Join(dir, "q8.gguf"), "--type", "Q8_0")
	if code != exitOK || strings.Contains(out, "warning: no tensor") {
		t.Errorf("Q8_0 (block 32 fits rows of 64): exit %d\n%s", code, out)
	}
}
