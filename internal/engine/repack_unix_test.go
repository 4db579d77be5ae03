//go:build unix

package engine

import (
	"errors"
	"os"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
)

// TestRepackFault: rearranging reads the mapped file, so a file cut short
// under the load faults there; repack returns ErrModelFault (as Load
// would) and leaves every matrix on the file's layout.
func TestRepackFault(t *testing.T) {
	if quant.Repacked(quant.Q8_0, 16) == nil {
		t.Skip("no repacked Q8_0 kernel on this CPU")
	}
	path := synthFile(t, synth.Spec{Arch: "llama", Dim: 256, Layers: 2, Heads: 4, FFN: 512, Vocab: 300, Ctx: 64, Type: quant.Q8_0, Seed: 1})
	m := loadModel(t, path, Options{Threads: 2, NoRepack: true})
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	ms := m.w.repackable()
	if len(ms) == 0 {
		t.Fatal("no matrix to rearrange")
	}
	err := m.repack(ms, true)
	if !errors.Is(err, ErrModelFault) {
		t.Fatalf("repack of a truncated file: err = %v, want ErrModelFault", err)
	}
	t.Log(err)
	for _, mx := range ms {
		if mx.repacked != "" || !inFile(m, mx.data) {
			t.Errorf("%s changed by a failed repack", mx.name)
		}
	}
}
