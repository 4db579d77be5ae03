//go:build !unix

package engine

// cpuTime is not measured on this platform.
func cpuTime() int64 { return 0 }
