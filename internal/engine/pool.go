package engine

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// rowJob is work split over rows: runRows computes rows [lo, hi) using
// the scratch space of worker w (0 ≤ w < threads).
type rowJob interface {
	runRows(w, lo, hi int)
}

// pool is a persistent set of worker goroutines that share each job's rows
// with the calling goroutine. Workers are started once, at load; running a
// job allocates nothing and spawns nothing. Jobs from several sessions are
// run one at a time.
type pool struct {
	threads int
	mu      sync.Mutex // one job at a time
	wake    []chan struct{}
	wg      sync.WaitGroup

	// the current job, set under mu before the workers are woken
	job   rowJob
	total int
	chunk int
	next  atomic.Int64

	faultMu sync.Mutex
	fault   any // the first panic of the current job, re-raised by run on its caller
}

// minWork is the number of multiply-adds below which a job runs on the
// calling goroutine alone: waking workers costs a few microseconds.
const minWork = 1 << 16

func newPool(threads int) *pool {
	if threads < 1 {
		threads = 1
	}
	p := &pool{threads: threads, wake: make([]chan struct{}, threads-1)}
	for i := range p.wake {
		ch := make(chan struct{}, 1)
		p.wake[i] = ch
		go p.worker(i+1, ch)
	}
	return p
}

func (p *pool) worker(id int, wake chan struct{}) {
	// Workers read the mapped model file: a fault there (the file
	// truncated underneath) must become a panic that drainGuarded hands to
	// the job's caller, not a crash. Set once per worker, not per job.
	debug.SetPanicOnFault(true)
	for range wake {
		p.drainGuarded(id)
		p.wg.Done()
	}
}

// drainGuarded drains, keeping the first panic of the job for run to
// re-raise on the caller's goroutine once every worker is done.
func (p *pool) drainGuarded(id int) {
	defer func() {
		if r := recover(); r != nil {
			p.faultMu.Lock()
			if p.fault == nil {
				p.fault = r
			}
			p.faultMu.Unlock()
		}
	}()
	p.drain(id)
}

// drain claims chunks of the current job until none are left.
func (p *pool) drain(id int) {
	for {
		lo := int(p.next.Add(int64(p.chunk))) - p.chunk
		if lo >= p.total {
			return
		}
		p.job.runRows(id, lo, min(lo+p.chunk, p.total))
	}
}

// run computes rows [0, total) of job, each row costing about work
// multiply-adds, spread over the pool.
func (p *pool) run(job rowJob, total, work int) {
	if total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	helpers := p.threads - 1
	if total*work < minWork || helpers == 0 || total == 1 {
		job.runRows(0, 0, total)
		return
	}
	if helpers > total-1 {
		helpers = total - 1
	}
	// Chunks small enough to balance a noisy machine, large enough to
	// amortise the atomic add: about four per participant.
	chunk := total / (4 * (helpers + 1))
	if chunk < 1 {
		chunk = 1
	}
	p.job, p.total, p.chunk = job, total, chunk
	p.next.Store(0)
	p.wg.Add(helpers)
	for i := 0; i < helpers; i++ {
		p.wake[i] <- struct{}{}
	}
	p.drainGuarded(0)
	p.wg.Wait()
	p.job = nil
	if r := p.fault; r != nil {
		// A worker (or the caller) panicked: the job is lost; raise it
		// here, where the entry point's guard turns a fault on the mapping
		// into ErrModelFault.
		p.fault = nil
		panic(r)
	}
}

// close stops the workers.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range p.wake {
		close(ch)
	}
	p.wake = nil
	p.threads = 1
}
