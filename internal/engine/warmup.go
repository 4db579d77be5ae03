package engine

import (
	"context"
	"runtime/debug"
	"time"
)

// Warmup is the cold-start breakdown: how long each phase of getting the
// model ready took.
type Warmup struct {
	Load         time.Duration // open, map and validate the file (measured by Load)
	PageIn       time.Duration // read every page of the file, so no weight faults in later
	KVInit       time.Duration // allocate a session and touch its KV cache
	FirstForward time.Duration // one forward pass of one token
	Total        time.Duration // the sum of the phases
}

// Warmup gets the model ready to answer with a steady stream: it pages
// every weight in (reading one byte of every page of the file, but those of
// the matrices rearranged at load, which decode does not read), allocates a
// session and touches every page of its KV cache, and runs one forward
// pass. The warmed session is handed out by the next NewSession. ctx is
// checked between phases.
func (m *Model) Warmup(ctx context.Context) (w Warmup, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer m.guard(&err)
	w = Warmup{Load: m.loadTime}
	t := time.Now()
	pageSink += pageInSkipping(m.file.Data(), m.released)
	// A fault maps a whole folio of the page cache, which may reach into
	// the spans skipped (Linux maps large folios, up to 2 MiB, at once).
	m.dropReleased()
	w.PageIn = time.Since(t)
	if err := ctx.Err(); err != nil {
		return w, err
	}

	t = time.Now()
	s := m.NewSession()
	touch(s.st.kCache)
	touch(s.st.vCache)
	touch(s.st.kCache16)
	touch(s.st.vCache16)
	touch(s.st.scratch)
	w.KVInit = time.Since(t)
	if err := ctx.Err(); err != nil {
		return w, err
	}

	t = time.Now()
	bos := int32(0)
	if b := m.tok.BOS(); b >= 0 && int(b) < m.cfg.Vocab {
		bos = b
	}
	s.one[0] = bos
	m.forward(s.st, s.one[:], 0, true, nil)
	w.FirstForward = time.Since(t)
	w.Total = w.Load + w.PageIn + w.KVInit + w.FirstForward

	m.mu.Lock()
	if m.spare == nil {
		m.spare = s
	}
	m.mu.Unlock()
	return w, nil
}

// touch writes to every page of x so the kernel backs it with memory now
// rather than on first use.
func touch[E float32 | uint16](x []E) {
	for i := 0; i < len(x); i += 1024 {
		x[i] = 0
	}
}

// pageSink keeps the page-in reads from being optimised away.
var pageSink byte

// pageIn reads one byte of every 4 KiB page of data, faulting the whole
// mapping into memory.
func pageIn(data []byte) byte {
	var x byte
	for i := 0; i < len(data); i += 4096 {
		x ^= data[i]
	}
	if len(data) > 0 {
		x ^= data[len(data)-1]
	}
	return x
}
