//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package engine

// systemAvailableMemory has no figure on this system: Load assumes
// fallbackMemory unless Options.MaxMemory says otherwise.
func systemAvailableMemory() (uint64, string, bool) { return 0, "", false }
