//go:build !purego

package quant

import (
	"syscall"
	"unsafe"
)

// arch_prctl's requests for the permission to use a dynamically enabled
// state component, and AMX's tile data component.
const (
	archGetXCompPerm  = 0x1022
	archReqXCompPerm  = 0x1023
	xfeatureXTileData = 18
)

// amxPermit asks Linux for this process's permission to use the AMX tile
// data (without it the first tile instruction faults) and reports
// whether the process has it. The permission is the whole process's and
// lasts; Linux grants it only when every thread's signal stack can hold
// the tile state, which Go's (32 KiB) can.
func amxPermit() bool {
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXCompPerm, xfeatureXTileData, 0); e != 0 {
		return false
	}
	var mask uint64
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetXCompPerm, uintptr(unsafe.Pointer(&mask)), 0); e != 0 {
		return false
	}
	return mask&(1<<xfeatureXTileData) != 0
}
