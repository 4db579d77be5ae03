package engine

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countJob counts how often each row is computed and by which workers.
type countJob struct {
	rows    []atomic.Int32
	workers []atomic.Int32
}

func (j *countJob) runRows(w, lo, hi int) {
	j.workers[w].Add(1)
	for r := lo; r < hi; r++ {
		j.rows[r].Add(1)
	}
}

// TestPoolRunsEveryRowOnce runs many jobs of varied sizes back to back,
// from several goroutines at once, with and without spinning: every row
// of every job is computed exactly once, by valid workers, and closing the
// pool returns (every worker saw the close).
func TestPoolRunsEveryRowOnce(t *testing.T) {
	for _, spin := range []time.Duration{0, 50 * time.Microsecond} {
		for _, threads := range []int{1, 2, 3, 5} {
			t.Run(fmt.Sprintf("spin=%v/threads=%d", spin, threads), func(t *testing.T) {
				p := newPool(threads, spin)
				var wg sync.WaitGroup
				for g := range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for n := range 300 {
							total := 1 + (n*7+g*13)%97
							j := &countJob{rows: make([]atomic.Int32, total), workers: make([]atomic.Int32, threads)}
							p.run(j, total, minWork) // every job large enough to share
							for r := range j.rows {
								if c := j.rows[r].Load(); c != 1 {
									t.Errorf("job %d of %d rows: row %d computed %d times", n, total, r, c)
									return
								}
							}
						}
					}()
				}
				wg.Wait()
				p.close()
			})
		}
	}
}

// slowJob is countJob whose chunks take a while, so that a worker is
// still inside a job when another's late wake-up arrives.
type slowJob struct{ countJob }

func (j *slowJob) runRows(w, lo, hi int) {
	time.Sleep(50 * time.Microsecond)
	j.countJob.runRows(w, lo, hi)
}

// TestPoolLateWakeUpOfAnEarlierJob replays the schedule that hung the
// pool under emulation: the last worker of job N sees the caller parked
// for N and loses its core before waking it; the caller meanwhile sees
// the job done, returns, and parks for job N+1. The late wake-up must not
// end the caller's wait for N+1 while another worker is still inside it
// (it could when the caller's parking was a flag, not tagged with its
// job: that worker's count could then fall into the next job, whose wait
// never ended, as seen once under arm64 emulation). The hook makes the
// schedule happen; every job must see each row computed once when run
// returns, and the run must end. (This replays the schedule; it does not
// reliably reproduce the old hang, which needed one more unlucky step.)
func TestPoolLateWakeUpOfAnEarlierJob(t *testing.T) {
	var calls atomic.Int64
	poolHook = func(where int) {
		switch where {
		case hookCallerParked:
			time.Sleep(20 * time.Microsecond) // let the last worker count out and see the caller
		case hookSawCaller:
			calls.Add(1)
			time.Sleep(time.Millisecond) // lose the core before waking it
		}
	}
	defer func() { poolHook = nil }()
	const threads = 4
	p := newPool(threads, 0)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for n := range 300 {
			total := 16
			j := &slowJob{countJob{rows: make([]atomic.Int32, total), workers: make([]atomic.Int32, threads)}}
			p.run(j, total, minWork)
			for r := range j.rows {
				if c := j.rows[r].Load(); c != 1 {
					t.Errorf("job %d: row %d computed %d times when run returned", n, r, c)
					return
				}
			}
		}
		p.close()
	}()
	// Not a speed limit: the jobs take about a second; a wait that never
	// ends is the failure this guards against, named here rather than by
	// the test binary's timeout.
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatal("a wait for the workers never ended")
	}
	if calls.Load() == 0 {
		t.Fatal("the schedule under test never happened: the last worker never saw the caller parked")
	}
}

// chunkJob records the chunks a job was handed.
type chunkJob struct {
	mu     sync.Mutex
	chunks [][2]int
}

func (j *chunkJob) runRows(_, lo, hi int) {
	j.mu.Lock()
	j.chunks = append(j.chunks, [2]int{lo, hi})
	j.mu.Unlock()
}

// TestPoolGuidedChunks checks the chunks of large jobs: they tile the
// rows exactly; none but the last is below the smallest chunk; the last
// fifth of the rows goes in pieces of at most a sixteenth (so no participant waits long
// for another's last chunk), and the claims stay few.
func TestPoolGuidedChunks(t *testing.T) {
	for _, threads := range []int{2, 3} {
		for _, c := range []struct{ total, work int }{{2304, 768}, {32000, 768}, {768, 3072}, {3072, 1536}, {50, 1 << 14}} {
			t.Run(fmt.Sprintf("threads=%d/rows=%d/work=%d", threads, c.total, c.work), func(t *testing.T) {
				p := newPool(threads, 50*time.Microsecond)
				defer p.close()
				j := &chunkJob{}
				p.run(j, c.total, c.work)
				slices.SortFunc(j.chunks, func(a, b [2]int) int { return a[0] - b[0] })
				minChunk := max(1, minChunkWork/c.work)
				end := 0
				for i, ch := range j.chunks {
					if ch[0] != end || ch[1] <= ch[0] {
						t.Fatalf("chunk %d is %v after row %d: chunks %v", i, ch, end, j.chunks)
					}
					if ch[1] != c.total && ch[1]-ch[0] < minChunk {
						t.Errorf("chunk %v is below the smallest chunk, %d rows", ch, minChunk)
					}
					if ch[0] >= c.total*8/10 && ch[1]-ch[0] > max(c.total/16, (minChunk+3)&^3) {
						t.Errorf("chunk %v of %d rows is large this late", ch, c.total)
					}
					end = ch[1]
				}
				if end != c.total {
					t.Fatalf("chunks end at row %d of %d", end, c.total)
				}
				if n := len(j.chunks); n > 48 {
					t.Errorf("%d claims for %d rows", n, c.total)
				}
				t.Logf("%d chunks", len(j.chunks))
			})
		}
	}
}

// One stall (a worker that lost its core once) leaves spinning on; a run
// of stallRun stalls each within stallSpan of the one before stops it for
// calmFor from the last; stalls further apart never do.
func TestPoolCalmNeedsARunOfStalls(t *testing.T) {
	p := &pool{spin: DefaultSpinWait}
	t0 := time.Unix(1000, 0)
	step := stallSpan / 2
	for i := range stallRun - 1 {
		p.stalled(t0.Add(time.Duration(i) * step))
		if c := p.calmUntil.Load(); c != 0 {
			t.Fatalf("calm after %d stalls %v apart, want spinning on until %d", i+1, step, stallRun)
		}
	}
	last := t0.Add(time.Duration(stallRun-1) * step)
	p.stalled(last)
	if got, want := p.calmUntil.Load(), last.Add(calmFor).UnixNano(); got != want {
		t.Fatalf("after %d stalls %v apart calm until %d, want %d", stallRun, step, got, want)
	}

	q := &pool{spin: DefaultSpinWait}
	for i := range 10 * stallRun {
		q.stalled(t0.Add(time.Duration(i) * (stallSpan + time.Millisecond)))
	}
	if c := q.calmUntil.Load(); c != 0 {
		t.Fatalf("calm after stalls %v apart, want none", stallSpan+time.Millisecond)
	}
}

// TestPoolRestParksSpinningWorkers: workers set to spin for an hour park
// once rest says the forward pass is over, and the next job still gets
// every row computed once. Without rest they would spin on for the hour
// and the wait below would run into its limit.
func TestPoolRestParksSpinningWorkers(t *testing.T) {
	p := newPool(3, time.Hour)
	defer p.close()
	job := &countJob{rows: make([]atomic.Int32, 64), workers: make([]atomic.Int32, 3)}
	p.run(job, 64, minWork)
	p.rest()
	limit := time.Now().Add(10 * time.Second)
	for i := range p.workers {
		for p.workers[i].state.Load() != workerParked {
			if time.Now().After(limit) {
				t.Fatalf("worker %d still spinning 10s after rest", i+1)
			}
			time.Sleep(time.Millisecond)
		}
	}
	p.run(job, 64, minWork)
	for r := range job.rows {
		if n := job.rows[r].Load(); n != 2 {
			t.Fatalf("row %d computed %d times over two jobs, want 2", r, n)
		}
	}
}

// TestPoolSpinnersYieldTheProcessor runs jobs on one processor with a
// pool that does not know it is crowded (it started with two) and spins
// for an hour. The caller drains each job alone while its worker waits
// queued behind it; the caller must yield to it while it spins, so that
// the worker is done before the caller's spin ends. Without the yields
// the caller parks on every job, and the worker, having woken it onto the
// one processor, spins in front of it for the whole of its spin.
// Allowing a fifth of the jobs to park keeps a loaded machine, which may
// take the processor's thread away for longer than the caller spins, from
// failing it.
func TestPoolSpinnersYieldTheProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var woke, yields atomic.Int32
	poolHook = func(where int) {
		switch where {
		case hookSawCaller:
			woke.Add(1)
		case hookSpinYield:
			yields.Add(1)
		}
	}
	defer func() { poolHook = nil }()
	p := newPool(2, time.Hour)
	if p.crowded {
		t.Fatal("a pool of 2 threads on 2 processors reports itself crowded")
	}
	defer p.close()
	runtime.GOMAXPROCS(1)
	const jobs = 50
	job := &countJob{rows: make([]atomic.Int32, 64), workers: make([]atomic.Int32, 2)}
	for range jobs {
		// A loaded machine may take this thread away for over stallWait
		// in a row of jobs, which stops spinning for calmFor (as it
		// should); each job here is to spin.
		p.calmUntil.Store(0)
		p.run(job, 64, minWork)
	}
	for r := range job.rows {
		if n := job.rows[r].Load(); n != jobs {
			t.Fatalf("row %d computed %d times over %d jobs", r, n, jobs)
		}
	}
	if n := woke.Load(); n > jobs/5 {
		t.Errorf("the worker had to wake its parked caller in %d of %d jobs on one processor, want at most %d (the caller's spin yields to the worker); %d yields", n, jobs, jobs/5, yields.Load())
	}
}

// BenchmarkPoolOneProcessor times small jobs of a two-thread pool on one
// processor (the pool not knowing it: the case of a worker queued behind
// its caller): ns per job. Set spinYield to an hour to see it without the
// spinners' yields: each job then waits out the worker's spin in front of
// its caller (14 against 354 µs per job measured here).
func BenchmarkPoolOneProcessor(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	p := newPool(2, DefaultSpinWait)
	defer p.close()
	runtime.GOMAXPROCS(1)
	job := &countJob{rows: make([]atomic.Int32, 64), workers: make([]atomic.Int32, 2)}
	for b.Loop() {
		p.run(job, 64, minWork)
	}
}
