//go:build !purego

package quant

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestAMXUnderSignals runs the AMX tiles in more goroutines than threads
// while the runtime preempts them (SIGURG), collects garbage and their
// threads are sent signals (which the kernel delivers with the tile state
// saved on Go's signal stack), every result compared bit for bit with the
// AVX-512 VNNI tiles' (which scale and add in the same order): tile state
// must survive a signal arriving in the middle of a kernel and never leak
// from one goroutine or thread to another.
func TestAMXUnderSignals(t *testing.T) {
	if !hasAMX {
		t.Skip("no AMX on this CPU or no permission to use it")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	usr := make(chan os.Signal, 64)
	signal.Notify(usr, syscall.SIGUSR1)
	defer signal.Stop(usr)

	const nb, groups, batch = 48, 24, 40 // tiles of 16, 16 and 8 tokens
	l := &x16Layouts[1]
	if l.typ != Q8_0 {
		t.Fatalf("x16Layouts[1] is %v, not Q8_0", l.typ)
	}
	r := rand.New(rand.NewPCG(101, 102))
	w := make([]byte, 16*groups*nb*l.fileBytes)
	l.repack(w, l.randRows(r, nb, 16*groups), 32*nb)
	x := make([]byte, batch*nb*x16ActBytes)
	for b := 0; b < batch; b++ {
		l.quantize(x[b*nb*x16ActBytes:], randActs(r, 32*nb))
	}
	want := make([]float32, batch*16*groups)
	q8_0x16VNNI(want, 16*groups, x, nb*x16ActBytes, batch, w, nb)

	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { // collect garbage, which stops and scans every goroutine
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	var tids [8]atomic.Int32 // the threads the workers last ran on
	var sent atomic.Int64
	go func() { // signal the workers' threads, which are mostly in a kernel
		defer bg.Done()
		pid := os.Getpid()
		for {
			for i := range tids {
				select {
				case <-stop:
					return
				case <-usr:
				default:
				}
				if tid := tids[i].Load(); tid != 0 && syscall.Tgkill(pid, int(tid), syscall.SIGUSR1) == nil {
					sent.Add(1)
				}
			}
			runtime.Gosched()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]float32, len(want))
			for n := range rounds {
				clear(got)
				tids[g].Store(int32(syscall.Gettid()))
				q8_0x16AMX(got, 16*groups, x, nb*x16ActBytes, batch, w, nb)
				for i := range got {
					if got[i] != want[i] {
						errs <- fmt.Sprintf("round %d, output %d: AMX %v, VNNI %v", n, i, got[i], want[i])
						return
					}
				}
				if n%8 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	bg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	t.Logf("%d signals sent to the workers' threads", sent.Load())
}

// TestAMXReleasesTiles holds the AMX tiles to leaving no tile state in
// use when they return (XINUSE's tile data bit clear on the thread that
// ran them).
func TestAMXReleasesTiles(t *testing.T) {
	if !hasAMX {
		t.Skip("no AMX on this CPU or no permission to use it")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const nb = 2
	w := make([]byte, 16*nb*q8_0Bytes)
	x := make([]byte, 16*nb*x16ActBytes)
	out := make([]float32, 16*16)
	for _, f := range []x16Tile{q8x16M16, q8x16M8} {
		f(&x[0], nb*x16ActBytes, &w[0], nb, 1, &out[0], 16)
		if xinuse()&(1<<xfeatureXTileData) != 0 {
			t.Fatal("tile data still in use after a kernel returned")
		}
	}
}
