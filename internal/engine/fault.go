package engine

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// ErrModelFault is returned when reading the mapped model file faults:
// the file was truncated or changed underneath the running model (or its
// disk failed). The model cannot be used any further; close it and load
// the file again.
//
// The engine turns such a fault (SIGBUS, SIGSEGV) into this error rather
// than letting it kill the process: every goroutine that reads the
// mapping runs with runtime/debug.SetPanicOnFault(true) (each pool worker
// from its start; the caller for the length of Generate, Logits, Warmup or
// the hash of Info) and the panic is recovered at the pool's job boundary
// and at those entry points.
var ErrModelFault = errors.New("model file unreadable")

// faultError returns the error for a recovered panic value r when it is a
// memory fault inside the model's mapping, else nil (a bug elsewhere,
// which is not ours to swallow).
func (m *Model) faultError(r any) error {
	re, ok := r.(runtime.Error)
	if !ok {
		return nil
	}
	fa, ok := r.(interface{ Addr() uintptr })
	if !ok {
		return nil
	}
	data := m.file.Data()
	if len(data) == 0 {
		return nil
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	addr := fa.Addr()
	if addr < base || addr-base >= uintptr(len(data)) {
		return nil
	}
	return fmt.Errorf("engine: reading the model file faulted at byte %d of %d (%v): it was truncated or changed after it was mapped: %w",
		addr-base, len(data), re, ErrModelFault)
}

// guard, deferred at an entry point, turns a fault on the mapping into
// *err and lets every other panic go on.
func (m *Model) guard(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if fe := m.faultError(r); fe != nil {
		*err = fe
		return
	}
	panic(r)
}
