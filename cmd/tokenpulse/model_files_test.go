package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelQuantizeMix runs `model quantize --type Q4_K_M` on a file whose
// rows (192) do not fit Q4_K's 256-element blocks: the summary names the
// fallback types llama.cpp uses and the file type, and generate runs it.
func TestModelQuantizeMix(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	if out, code := cliRun(t, "model", "synth", "--arch", "qwen2", "--dim", "192", "--layers", "2", "--heads", "6", "--kv-heads", "2",
		"--ffn", "512", "--vocab", "300", "--ctx", "64", "--type", "F32", "-o", in); code != exitOK {
		t.Fatalf("synth: exit %d\n%s", code, out)
	}
	outPath := filepath.Join(dir, "q4km.gguf")
	out, code := cliRun(t, "model", "quantize", in, outPath, "--type", "q4_k_m")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"fallback: Q4_K wanted, but a row of 192 is not a multiple of its block",
		"fallback: Q6_K wanted, but a row of 192 is not a multiple of its block",
		"tensors: 27 (12 Q5_0, 11 F32, 1 Q4_K, 2 Q8_0, 1 Q6_K)",
		"general.file_type: 15 (Q4_K_M)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if out, code := cliRun(t, "generate", "--model", outPath, "-n", "4", "--prompt", "Once"); code != exitOK {
		t.Errorf("generate: exit %d\n%s", code, out)
	}
	if out, code := cliRun(t, "model", "quantize", in, outPath, "--type", "Q4_K_X"); code != exitUsage || !strings.Contains(out, "Q4_K_M, Q5_K_M") {
		t.Errorf("unknown mixture: exit %d\n%s", code, out)
	}
}

// TestModelSynthPreset1B writes a one-layer cut of the 1b preset (the
// other flags keep the preset's shape) and runs it: tied embeddings and
// GQA 32/8 load and generate.
func TestModelSynthPreset1B(t *testing.T) {
	p := filepath.Join(t.TempDir(), "1b-cut.gguf")
	out, code := cliRun(t, "model", "synth", "--preset", "1b", "--layers", "1", "--ffn", "256", "--vocab", "300", "--type", "Q4_0", "-o", p)
	if code != exitOK {
		t.Fatalf("synth: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "dim 2048, 1 layers") {
		t.Errorf("synth output lacks the shape:\n%s", out)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("synth wrote %s with mode %v (%v), want 0644 as quantize does", p, st.Mode().Perm(), err)
	}
	if out, code := cliRun(t, "generate", "--model", p, "-n", "3", "--prompt", "Once"); code != exitOK {
		t.Errorf("generate: exit %d\n%s", code, out)
	}
	if out, code := cliRun(t, "model", "synth", "--preset", "7b", "-o", p); code != exitUsage || !strings.Contains(out, "125m, 0.5b, 1b") {
		t.Errorf("unknown preset: exit %d\n%s", code, out)
	}
}

// TestModelSynthMix: `model synth --type Q4_K_M` writes, byte for byte,
// what `model synth --type F16` then `model quantize --type Q4_K_M`
// write, and leaves no temporary file behind.
func TestModelSynthMix(t *testing.T) {
	dir := t.TempDir()
	shape := []string{"--arch", "qwen2", "--dim", "192", "--layers", "2", "--heads", "6", "--kv-heads", "2", "--ffn", "512", "--vocab", "300", "--ctx", "64"}
	direct := filepath.Join(dir, "direct.gguf")
	if out, code := cliRun(t, append([]string{"model", "synth", "--type", "q4_k_m", "-o", direct}, shape...)...); code != exitOK {
		t.Fatalf("synth Q4_K_M: exit %d\n%s", code, out)
	}
	f16, twoStep := filepath.Join(dir, "f16.gguf"), filepath.Join(dir, "two-step.gguf")
	if out, code := cliRun(t, append([]string{"model", "synth", "--type", "F16", "-o", f16}, shape...)...); code != exitOK {
		t.Fatalf("synth F16: exit %d\n%s", code, out)
	}
	if out, code := cliRun(t, "model", "quantize", f16, twoStep, "--type", "Q4_K_M"); code != exitOK {
		t.Fatalf("quantize: exit %d\n%s", code, out)
	}
	a, errA := os.ReadFile(direct)
	b, errB := os.ReadFile(twoStep)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Errorf("synth --type Q4_K_M (%d bytes, %v) differs from synth F16 + quantize Q4_K_M (%d bytes, %v)", len(a), errA, len(b), errB)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("%d files in the output directory, want 3 (no temporary left): %v", len(entries), entries)
	}
}
