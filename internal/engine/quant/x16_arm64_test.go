//go:build arm64 && !purego

package quant

import "testing"

// x16AsmImpls lists the assembly implementations of the 16-row layout of
// t that this CPU runs: the SDOT tiles of Q4_0's, Q8_0's and Q4_K's, on
// CPUs with the dot-product extension.
func x16AsmImpls(t Type) []x16Impl {
	var fs []x16Impl
	add := func(name string, f x16Func) {
		if f != nil {
			fs = append(fs, x16Impl{name, f})
		}
	}
	switch t {
	case Q4_0:
		add("neon+sdot", q4_0x16SDOT)
	case Q8_0:
		add("neon+sdot", q8_0x16SDOT)
	case Q4_K:
		add("neon+sdot", q4_Kx16SDOT)
	}
	return fs
}

// TestX16ChosenWithSDOT pins the choice on arm64: the 16-row layouts of
// Q4_0, Q8_0 and Q4_K exactly where the CPU has the dot-product extension
// (as QEMU's default CPU does), the file's layouts where it has not
// (QEMU_CPU=cortex-a53), and never Q5_0's or the row-by-row Q8_0 layout.
func TestX16ChosenWithSDOT(t *testing.T) {
	for _, c := range []struct {
		typ  Type
		want *Repacker
	}{{Q4_0, &q4_0VNNIRepacker}, {Q8_0, &q8_0x16Repacker}, {Q4_K, &q4_Kx16Repacker}, {Q5_0, nil}} {
		want := c.want
		if !hasSDOT {
			want = nil
		}
		if got := Repacked(c.typ, 32); got != want {
			t.Errorf("SDOT %v: Repacked(%v, 32) = %v, want %v", hasSDOT, c.typ, got, want)
		}
		if got := Repacked(c.typ, 40); got != nil {
			t.Errorf("Repacked(%v, 40) = %v, want nil (no whole groups)", c.typ, got)
		}
	}
	if rp := Repacked(Q4_0, 16); rp != nil && rp.Name != "neon+sdot" {
		t.Errorf("the layout is named %q", rp.Name)
	}
}
