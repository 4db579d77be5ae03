//go:build unix

package engine

import (
	"context"
	"errors"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
)

// TestTruncatedModelFile truncates the mapped file of a loaded, warmed
// model (as replacing a served model in place does): reading it then
// faults (SIGBUS), which must fail the request with ErrModelFault and
// leave the process, and the next request, alive. The weights stay in the
// file's layout (NoRepack) so that the layers are read from the mapping.
func TestTruncatedModelFile(t *testing.T) {
	for _, threads := range []int{1, 2} {
		path := synthFile(t, synth.Spec{Arch: "llama", Dim: 256, Layers: 2, Heads: 4, FFN: 512, Vocab: 300, Ctx: 64, Type: quant.Q8_0, Seed: 1})
		m := loadModel(t, path, Options{Threads: threads, NoRepack: true})
		if _, err := m.Warmup(context.Background()); err != nil {
			t.Fatal(err)
		}
		emb, _ := m.file.Tensor("token_embd.weight")
		for _, keep := range []int64{
			m.file.DataStart + int64(emb.Offset) + int64(len(emb.Data)) + 4096, // the embedding readable, the layers not: the pool faults
			0, // nothing readable: the caller faults on the embedding
		} {
			if err := os.Truncate(path, keep); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				_, err := m.NewSession().Generate(context.Background(), []int32{1, 40, 41}, Params{MaxTokens: 4}, func(Token) error { return nil })
				if !errors.Is(err, ErrModelFault) {
					t.Fatalf("threads %d, file cut to %d, request %d: err = %v, want ErrModelFault", threads, keep, i, err)
				}
				t.Logf("threads %d, cut to %d: %v", threads, keep, err)
			}
		}
		if _, err := m.Warmup(context.Background()); !errors.Is(err, ErrModelFault) {
			t.Errorf("Warmup of the truncated file: err = %v, want ErrModelFault", err)
		}
		if _, err := m.NewSession().Logits([]int32{1, 40}); !errors.Is(err, ErrModelFault) {
			t.Errorf("Logits of the truncated file: err = %v, want ErrModelFault", err)
		}
		if sum := m.Info().SHA256; sum != "" {
			t.Errorf("the hash of a truncated file = %q, want \"\"", sum)
		}
	}
	if debug.SetPanicOnFault(false) {
		t.Error("Generate left SetPanicOnFault on in its caller")
	}
}

// faultJob reads a mapping that has been cut short, from a worker only,
// once the caller is known to be waiting in its own chunk.
type faultJob struct {
	data    []byte
	started chan struct{}
	once    sync.Once
}

func (j *faultJob) runRows(w, lo, hi int) {
	if w == 0 {
		<-j.started // hold the caller's chunk until a worker has one
		return
	}
	j.once.Do(func() { close(j.started) })
	faultSink += j.data[len(j.data)-1]
}

var faultSink byte

// TestPoolWorkerFault: a fault in a worker goroutine is handed to the
// job's caller as a panic (which Generate's guard recovers), and the pool
// keeps working.
func TestPoolWorkerFault(t *testing.T) {
	path := t.TempDir() + "/f"
	if err := os.WriteFile(path, make([]byte, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	data, err := unix.Mmap(int(fd.Fd()), 0, 1<<16, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(data)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	p := newPool(2, 0)
	defer p.close()
	var got any
	func() {
		defer func() { got = recover() }()
		p.run(&faultJob{data: data, started: make(chan struct{})}, 8, minWork)
	}()
	fa, ok := got.(interface{ Addr() uintptr })
	if !ok {
		t.Fatalf("run's panic = %v, want the worker's fault", got)
	}
	t.Logf("worker fault at %#x: %v", fa.Addr(), got)
	// The pool still runs jobs.
	var n sumJob
	p.run(&n, 100, minWork)
	if n.n.Load() != 100 {
		t.Errorf("after the fault the pool ran %d rows of 100", n.n.Load())
	}
}

type sumJob struct{ n atomic.Int64 }

func (j *sumJob) runRows(_, lo, hi int) { j.n.Add(int64(hi - lo)) }
