package engine

import (
	"fmt"
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
