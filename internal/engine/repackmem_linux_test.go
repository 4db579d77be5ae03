package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
)

// mappingRSS returns the resident set, in bytes, of the mapping of this
// process that starts at addr (/proc/self/smaps).
func mappingRSS(t *testing.T, addr uintptr) uint64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uint64
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = uintptr(lo) == addr
			continue
		}
		var kb uint64
		if in && strings.HasPrefix(line, "Rss:") {
			if _, err := fmt.Sscanf(line, "Rss: %d kB", &kb); err != nil {
				t.Fatalf("smaps line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}

// TestInfoKeepsReleasedPagesOut: the file's pages of the rearranged
// matrices stay out of the resident set after Warmup and after Info.
// Info's hash reads the whole file, and kept it all resident; Warmup's
// page-in of the bytes between those matrices faulted in large folios
// that reach into them (measured here: 8.4 of this 15.5 MB file).
func TestInfoKeepsReleasedPagesOut(t *testing.T) {
	if quant.Repacked(quant.Q8_0) == nil {
		t.Skip("no repacked Q8_0 kernel on this CPU")
	}
	path := synthFile(t, synth.Spec{Arch: "llama", Dim: 768, Layers: 2, Heads: 12, FFN: 2048, Vocab: 300, Ctx: 64, Type: quant.Q8_0, Seed: 9})
	m := loadModel(t, path, Options{Threads: 2})
	if _, err := m.Warmup(context.Background()); err != nil {
		t.Fatal(err)
	}
	var released uint64
	for _, s := range m.released {
		released += uint64(s.hi - s.lo)
	}
	data := m.file.Data()
	if released < uint64(len(data))/2 {
		t.Fatalf("only %d of the file's %d bytes released: the check below needs most of them", released, len(data))
	}
	base := uintptrOf(data)
	warm := mappingRSS(t, base)
	if info := m.Info(); info.SHA256 == "" {
		t.Fatal("no hash")
	}
	after := mappingRSS(t, base)
	t.Logf("file %d bytes, %d released; resident after Warmup %d, after Info %d", len(data), released, warm, after)
	if limit := uint64(len(data)) - released/2; warm > limit || after > limit {
		t.Errorf("file mapping resident %d after Warmup, %d after Info: want both at most %d (file %d bytes, %d of them released)", warm, after, limit, len(data), released)
	}
}
