//go:build unix

package server

import "golang.org/x/sys/unix"

// openFileLimit returns the process's limit on open files (0 = unknown).
func openFileLimit() uint64 {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}
