package engine

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
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
//
// A decode step runs about five jobs per layer, each a few tens of
// microseconds long, so how fast a worker sees a new job matters as much
// as the job itself. A job is published by incrementing an atomic
// generation; a worker may spin on it for up to spin before it parks, and
// the caller wakes through a channel only the workers that have parked.
// The caller likewise may spin for the workers to finish (for up to
// callerSpin) before parking until the last one wakes it. Spinners yield
// their processor every spinYield, since the goroutine they wait for may
// be queued behind them on it. When a forward pass ends, rest has the
// workers park at once: the pause between tokens (sampling, the stream's
// write) is the stream reader's time on a core.
type pool struct {
	threads int
	spin    time.Duration // how long workers spin for a job before parking (the caller for its end: at most callerSpin)
	// calmUntil (Unix ns) stops all spinning until then: set when the
	// caller waited so long for a worker that the worker must have been
	// descheduled, the sign of a machine with more busy threads than
	// cores, where spinning costs far more than it saves.
	calmUntil atomic.Int64
	crowded   bool       // more threads than GOMAXPROCS at start
	mu        sync.Mutex // one job at a time

	gen     atomic.Uint64 // incremented to publish a job (or the close)
	pending atomic.Int32  // workers not yet done with the current job
	workers []poolWorker
	// waiting is the generation the caller parked waiting for (0 while it
	// is not parked), and callerWake where it parks. Tagging the wait
	// with its generation keeps a late done of an earlier job, whose
	// worker saw the caller parked for that job and then lost its core,
	// from waking the caller parked for the next one before its workers
	// are done (a plain parked flag was set again by then).
	waiting    atomic.Uint64
	callerWake chan struct{}
	closed     bool // set under mu before the last gen increment
	// resting, set by rest and cleared by the next publish, has idle
	// workers park at once instead of spinning.
	resting atomic.Bool

	// the current job, set under mu before gen is incremented
	job   rowJob
	total int
	chunk int // the smallest chunk (see drain)
	parts int // a claim takes 1/parts of the rows left
	next  atomic.Int64

	// the stalls seen in a row (see stalled), under mu
	stalls    int
	lastStall time.Time

	faultMu sync.Mutex
	fault   any // the first panic of the current job, re-raised by run on its caller
}

// poolWorker is one worker's parking place: state is running while it
// spins or works, parked once it has committed to sleep on wake.
type poolWorker struct {
	state atomic.Int32
	wake  chan struct{}
	_     [48]byte // keep workers' states on separate cache lines
}

const (
	workerRunning int32 = iota
	workerParked
)

// minWork is the number of multiply-adds below which a job runs on the
// calling goroutine alone: even a spinning worker costs a cache-line
// round trip or two, and a parked one several microseconds.
const minWork = 1 << 16

// minChunkWork is the fewest multiply-adds a claim of rows takes, but
// for the last rows of a job: about a microsecond of work, against a
// claim's compare-and-swap on a line the other participants write too.
const minChunkWork = 1 << 14

// DefaultSpinWait is Options.SpinWait's default. Parked workers wake
// late: a goroutine woken through a channel is queued on the waker's
// processor, and another thread takes it from there only after a sleep
// of its own (an execution trace of `serve` showed 50–500 µs per
// wake-up). A worker that parks 50 µs after its share falls into step
// with a caller doing each job alone: it wakes after the job is done,
// spins, and parks just before the next one. So idle workers spin for up
// to 300 µs, long enough to span the gaps between the jobs of a forward
// pass, and stop at once when the pass ends (rest), not across the pause
// between tokens. On a machine with more busy threads than cores a
// spinning thread is descheduled in the middle of its share, so a run of
// stalls seen by the caller stops spinning for a while (watch).
const DefaultSpinWait = 300 * time.Microsecond

// callerSpin caps how long the caller spins for the workers to finish a
// job before it parks: a worker that is not done within it has lost its
// core, and spinning on would keep the core from it when they share one.
const callerSpin = 50 * time.Microsecond

func newPool(threads int, spin time.Duration) *pool {
	if threads < 1 {
		threads = 1
	}
	p := &pool{threads: threads, spin: max(spin, 0), crowded: threads > runtime.GOMAXPROCS(0), workers: make([]poolWorker, threads-1)}
	p.callerWake = make(chan struct{}, 1)
	for i := range p.workers {
		p.workers[i].wake = make(chan struct{}, 1)
		go p.worker(i + 1)
	}
	return p
}

func (p *pool) worker(id int) {
	// Workers read the mapped model file: a fault there (the file
	// truncated underneath) must become a panic that drainGuarded hands to
	// the job's caller, not a crash. Set once per worker, not per job.
	debug.SetPanicOnFault(true)
	me := &p.workers[id-1]
	var seen uint64 // generation 0: no job yet (a job may be published before this goroutine first runs)
	for {
		seen = p.await(me, seen)
		if p.closed {
			p.done(seen)
			return
		}
		if p.job != nil && id <= p.helpers() {
			p.drainGuarded(id)
		}
		p.done(seen)
	}
}

// Where poolHook is called.
const (
	hookCallerParked = iota // wait: the caller has said it parks for gen
	hookSawCaller           // done: the last worker saw the caller parked for its gen
	hookSpinYield           // spinner.tick: a spinning goroutine yields its processor
)

// poolHook, when set (by tests, before a pool starts), is called at the
// places above, to widen the windows in which a goroutine may lose its
// core; nil otherwise.
var poolHook func(where int)

// done counts this worker out of generation gen, waking the caller if it
// parked waiting for that generation's last worker.
func (p *pool) done(gen uint64) {
	if p.pending.Add(-1) != 0 || p.waiting.Load() != gen {
		return
	}
	if poolHook != nil {
		poolHook(hookSawCaller)
	}
	if p.waiting.CompareAndSwap(gen, 0) {
		p.callerWake <- struct{}{}
	}
}

// helpers is the number of workers that take part in the current job.
func (p *pool) helpers() int {
	return min(p.threads-1, p.total-1)
}

// await returns the generation after seen, spinning for it for up to
// p.spin and then parking until the caller wakes this worker.
func (p *pool) await(me *poolWorker, seen uint64) uint64 {
	for {
		if g, ok := p.spinFor(seen); ok {
			return g
		}
		// Swap, not Store: this store and the load after it pair with
		// publish's increment and its load of the state (each side writes,
		// then reads the other's word), which needs a full fence between
		// the two. Go's atomics give one, but under qemu-user a plain
		// atomic store on arm64 became an x86 store that a later load can
		// pass, and a worker and its caller each parked waiting for the
		// other (CI's emulated arm64 engine tests hung); an exchange is a
		// fence on every target.
		me.state.Swap(workerParked)
		if g := p.gen.Load(); g != seen {
			// A job came between the last look and parking: take it back
			// unless the caller already saw this worker parked and is
			// sending the wake-up, which must then be consumed.
			if !me.state.CompareAndSwap(workerParked, workerRunning) {
				<-me.wake
			}
			return g
		}
		<-me.wake
		if g := p.gen.Load(); g != seen {
			return g
		}
		// A stale wake-up: sent for the job this worker had already taken
		// back above, while it was parking again for the next. Wait on.
	}
}

// spinFor watches the generation for up to p.spin (when spinning is on),
// returning the first one after seen.
func (p *pool) spinFor(seen uint64) (uint64, bool) {
	spin := p.spinning()
	s := spinner{limit: p.spin, crowded: p.crowded}
	for i := 0; ; i++ {
		if g := p.gen.Load(); g != seen {
			return g, true
		}
		if !spin || (i&63 == 63 && p.resting.Load()) {
			return 0, false
		}
		if i&255 == 255 && !s.tick() {
			return 0, false
		}
	}
}

// spinYield is how long a spinning goroutine keeps its processor before
// it yields it (runtime.Gosched). The goroutine a spinner waits for may be
// queued on the spinner's own processor: a goroutine woken through a
// channel is queued on its waker's, and the other processor's thread
// comes to take it late or not at all. A trace of `serve` showed it: the
// caller parked for its worker, the worker woke on the caller's processor,
// finished, woke the caller onto that same processor and spun there for
// its 300 µs while the caller waited behind it and the other processor
// sat idle; job after job, tokens took 10–30 ms. Yielding every few
// microseconds bounds that wait to about spinYield; when nothing else is
// runnable a yield costs 0.15–0.2 µs (a loop of runtime.Gosched on this
// project's VM), a few per cent of the spin it interrupts.
const spinYield = 5 * time.Microsecond

// spinner paces a spin loop: tick, called every 256 turns, reads the
// clock, yields the processor every spinYield (at every tick when the
// pool has more threads than processors) and reports false once limit
// has passed since the first tick.
type spinner struct {
	limit          time.Duration
	crowded        bool
	start, yielded time.Time
}

func (s *spinner) tick() bool {
	now := time.Now()
	if s.start.IsZero() {
		s.start, s.yielded = now, now
		return true
	}
	if now.Sub(s.start) > s.limit {
		return false
	}
	if s.crowded || now.Sub(s.yielded) >= spinYield {
		if poolHook != nil {
			poolHook(hookSpinYield)
		}
		runtime.Gosched()
		s.yielded = time.Now()
	}
	return true
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

// drain claims chunks of the current job until none are left. Chunks
// shrink as the job goes (guided scheduling): each claim takes 1/parts of
// the rows left, rounded up to a multiple of 4 (kernels may take rows in
// fours), and at least p.chunk. Large first chunks keep the claims few;
// small last ones keep a participant from waiting at the end for another
// that started late or lost its core in the middle of a large chunk.
func (p *pool) drain(id int) {
	for {
		lo := int(p.next.Load())
		if lo >= p.total {
			return
		}
		n := max(p.chunk, (p.total-lo)/p.parts)
		if n > 4 {
			n = (n + 3) &^ 3
		}
		if !p.next.CompareAndSwap(int64(lo), int64(lo+n)) {
			continue
		}
		p.job.runRows(id, lo, min(lo+n, p.total))
	}
}

// publish starts a new generation: every worker, spinning or parked, will
// look at the job fields set before it.
func (p *pool) publish() {
	p.pending.Store(int32(len(p.workers)))
	p.resting.Store(false)
	p.gen.Add(1)
	for i := range p.workers {
		w := &p.workers[i]
		if w.state.Load() == workerParked && w.state.CompareAndSwap(workerParked, workerRunning) {
			w.wake <- struct{}{}
		}
	}
}

// wait returns once every worker is done with the current generation:
// it spins for up to p.spin, then parks until the last worker wakes it.
func (p *pool) wait() {
	if p.pending.Load() == 0 {
		return
	}
	gen := p.gen.Load()
	spin := p.spinning()
	if spin {
		// Only a wait that spun can tell that a worker lost its core: a
		// worker parked while spinning was off wakes late on its own (see
		// DefaultSpinWait), and counting that kept the pool calm for
		// good once it had calmed.
		defer p.watch(time.Now())
	}
	s := spinner{limit: min(p.spin, callerSpin), crowded: p.crowded}
	for i := 0; p.pending.Load() != 0 && spin; i++ {
		if i&255 == 255 && !s.tick() {
			break
		}
	}
	p.waiting.Swap(gen) // Swap: a fence before the load of pending (see await)
	if poolHook != nil {
		poolHook(hookCallerParked)
	}
	if p.pending.Load() == 0 {
		// The last worker finished meanwhile; unless it saw this caller
		// parked (and is sending the wake-up), there is nothing to wait
		// for.
		if p.waiting.CompareAndSwap(gen, 0) {
			return
		}
	}
	<-p.callerWake
}

// spinning reports whether to spin now: a spin is set and no stall was
// seen lately.
func (p *pool) spinning() bool {
	return p.spin > 0 && time.Now().UnixNano() >= p.calmUntil.Load()
}

// Stall detection: the caller waiting longer than stallWait for the
// workers after finishing its own share (a share is tens of
// microseconds) means a worker lost its core. One stall alone is a
// worker that lost its core once (on a small machine, to the process
// reading the stream, say), and stopping the spin for it made whole runs
// of tokens slow: served on 2 cores, the token-gap CV was 20–29 % with a
// stall enough against 13–22 % with a run of them needed (Q4_K, six
// interleaved rounds each). So spinning stops for calmFor only after
// stallRun stalls, each within stallSpan of the one before, as on a
// machine with more busy threads than cores, where the caller stalls on
// job after job.
const (
	stallWait = 500 * time.Microsecond
	stallSpan = 100 * time.Millisecond
	stallRun  = 3
	calmFor   = 250 * time.Millisecond
)

// watch counts the wait that began at t0 as a stall when it was one.
func (p *pool) watch(t0 time.Time) {
	if p.spin == 0 {
		return
	}
	if now := time.Now(); now.Sub(t0) > stallWait {
		p.stalled(now)
	}
}

// stalled records a stall seen at now and stops spinning for calmFor
// once stallRun stalls have come each within stallSpan of the one
// before. Called by the caller of run, under mu.
func (p *pool) stalled(now time.Time) {
	if p.stalls > 0 && now.Sub(p.lastStall) < stallSpan {
		p.stalls++
	} else {
		p.stalls = 1
	}
	p.lastStall = now
	if p.stalls >= stallRun {
		p.calmUntil.Store(now.Add(calmFor).UnixNano())
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
	helpers = min(helpers, total-1)
	// Chunks no smaller than minChunkWork multiply-adds (a claim costs a
	// contended cache line), each 1/(2·participants) of what is left.
	p.job, p.total = job, total
	p.chunk, p.parts = max(1, minChunkWork/max(work, 1)), 2*(helpers+1)
	p.next.Store(0)
	p.publish()
	p.drainGuarded(0)
	p.wait()
	p.job = nil
	if r := p.fault; r != nil {
		// A worker (or the caller) panicked: the job is lost; raise it
		// here, where the entry point's guard turns a fault on the mapping
		// into ErrModelFault.
		p.fault = nil
		panic(r)
	}
}

// rest tells idle workers that no job follows soon (a forward pass has
// ended; the caller samples a token and writes it to the stream), so they
// park at once and leave their cores to the process reading the stream
// instead of spinning on them. The next publish wakes them.
func (p *pool) rest() { p.resting.Store(true) }

// close stops the workers.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.job = nil
	p.publish()
	p.wait()
	p.workers = nil
	p.threads = 1
}
