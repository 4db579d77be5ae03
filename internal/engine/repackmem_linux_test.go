package engine

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/debug"
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
	if quant.Repacked(quant.Q8_0, 16) == nil {
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
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if info, want := m.Info(), sha256.Sum256(raw); info.SHA256 != hex.EncodeToString(want[:]) {
		t.Fatalf("hash %q, want the file's %x (the hash reads it in chunks, handing pages back as it goes)", info.SHA256, want)
	}
	after := mappingRSS(t, base)
	t.Logf("file %d bytes, %d released; resident after Warmup %d, after Info %d", len(data), released, warm, after)
	if limit := uint64(len(data)) - released/2; warm > limit || after > limit {
		t.Errorf("file mapping resident %d after Warmup, %d after Info: want both at most %d (file %d bytes, %d of them released)", warm, after, limit, len(data), released)
	}
}

// statusKB reads a field of /proc/self/status in kB ("VmHWM", "VmRSS").
func statusKB(t *testing.T, field string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return kb
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// TestInfoHashPeak: Info's hash of a file whose matrices were rearranged
// hands their pages back as it reads, so the process's peak resident set
// grows by far less than the file while it hashes; reading it whole first
// held the file and its rearranged copy resident together (a 358 MB
// Q4_0 file peaked at 711 MB in `tokenpulse generate`, 449 MB now).
func TestInfoHashPeak(t *testing.T) {
	if quant.Repacked(quant.Q8_0, 16) == nil {
		t.Skip("no repacked Q8_0 kernel on this CPU")
	}
	path := synthFile(t, synth.Spec{Arch: "llama", Dim: 768, Layers: 2, Heads: 12, FFN: 2048, Vocab: 300, Ctx: 64, Type: quant.Q8_0, Seed: 9})
	m := loadModel(t, path, Options{Threads: 2})
	var released uint64
	for _, s := range m.released {
		released += uint64(s.hi - s.lo)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak resident set: %v", err)
	}
	before := statusKB(t, "VmRSS") << 10
	if m.Info().SHA256 == "" {
		t.Fatal("no hash")
	}
	peak := statusKB(t, "VmHWM") << 10
	t.Logf("file %d bytes, %d released; resident %d before Info, peak %d during it (+%d)", len(m.file.Data()), released, before, peak, peak-before)
	if peak > before+released/2 {
		t.Errorf("peak resident set grew by %d bytes while hashing, want at most %d (half the %d bytes of rearranged matrices)", peak-before, released/2, released)
	}
}
