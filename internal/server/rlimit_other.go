//go:build !unix

package server

// openFileLimit returns the process's limit on open files (0 = unknown).
func openFileLimit() uint64 { return 0 }
