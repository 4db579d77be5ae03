package gguf

import (
	"os"
	"runtime/metrics"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/fixture"
)

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, and what
// it allocates must stay within a small multiple of the input size (plus
// 1 MiB of slack for the fuzzing machinery running in the same process).
func FuzzParse(f *testing.F) {
	f.Add(tiny(f))
	f.Add(header(3, 1, 1))
	f.Add(header(2, 0, 0))
	if p, err := fixture.Find("models/stories260K.gguf"); err == nil {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data[:4096])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
		metrics.Read(sample)
		before := sample[0].Value.Uint64()
		file, err := Parse(data)
		metrics.Read(sample)
		if alloc := sample[0].Value.Uint64() - before; alloc > uint64(64*len(data))+1<<20 {
			t.Errorf("Parse of %d bytes allocated %d bytes", len(data), alloc)
		}
		if err != nil {
			return
		}
		for _, ti := range file.Tensors {
			if len(ti.Data) > len(data) {
				t.Errorf("tensor %q has %d bytes, file %d", ti.Name, len(ti.Data), len(data))
			}
		}
	})
}
