package engine

import "syscall"

// yieldCPU offers the calling thread's CPU to the next thread waiting for
// it (sched_yield), returning at once when none is. See Session.Generate
// for why a token's writer calls it.
func yieldCPU() {
	syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
}
