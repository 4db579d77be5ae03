//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package engine

import "golang.org/x/sys/unix"

// systemAvailableMemory has no MemAvailable outside Linux; where the
// system tells its physical memory (sysctl hw.memsize on macOS,
// hw.physmem on the BSDs), half of it stands in, else nothing does.
func systemAvailableMemory() (uint64, string, bool) {
	for _, name := range []string{"hw.memsize", "hw.physmem64", "hw.physmem"} {
		if v, err := unix.SysctlUint64(name); err == nil && v > 0 {
			return v / 2, "half of " + name, true
		}
	}
	return 0, "", false
}
