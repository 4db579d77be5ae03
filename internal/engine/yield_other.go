//go:build !linux

package engine

// yieldCPU does nothing here: Go has no portable sched_yield, and the
// effect it serves (see Session.Generate) was measured on Linux only.
func yieldCPU() {}
