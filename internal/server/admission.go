package server

import (
	"container/list"
	"context"
	"errors"
	"sync"
)

// errQueueFull is returned by admission.acquire when every slot is busy
// and the queue is full.
var errQueueFull = errors.New("queue full")

// admission hands out a fixed number of generation slots, first come first
// served, with a bounded queue of waiters. A waiter whose context ends is
// dropped from the queue.
type admission struct {
	mu      sync.Mutex
	slots   int // free slots
	limit   int // queue capacity
	waiters list.List
}

func newAdmission(parallel, queue int) *admission {
	return &admission{slots: parallel, limit: queue}
}

// acquire takes a slot, waiting in the queue while none is free. It
// returns errQueueFull at once when the queue is full, or ctx's cause when
// ctx ends first. On success the caller must call release.
func (a *admission) acquire(ctx context.Context) error {
	a.mu.Lock()
	if a.slots > 0 && a.waiters.Len() == 0 {
		a.slots--
		a.mu.Unlock()
		return nil
	}
	if a.waiters.Len() >= a.limit {
		a.mu.Unlock()
		return errQueueFull
	}
	ready := make(chan struct{})
	el := a.waiters.PushBack(ready)
	a.mu.Unlock()

	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		a.mu.Lock()
		select {
		case <-ready:
			// A slot was handed over as ctx ended: give it back.
			a.mu.Unlock()
			a.release()
		default:
			a.waiters.Remove(el)
			a.mu.Unlock()
		}
		return context.Cause(ctx)
	}
}

// release returns a slot, handing it straight to the first waiter.
func (a *admission) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if front := a.waiters.Front(); front != nil {
		a.waiters.Remove(front)
		close(front.Value.(chan struct{}))
		return
	}
	a.slots++
}

// queued returns how many requests wait for a slot.
func (a *admission) queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waiters.Len()
}
