package engine

import (
	"os"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the machines this
// aims at (x86-64, 2 MiB).
const hugePage = 2 << 20

// allocRepacked returns n bytes of zeroed memory for rearranged weights
// and the function that frees them. On Linux it is an anonymous mapping
// aligned to 2 MiB and marked MADV_HUGEPAGE, so that the kernel backs it
// with huge pages where transparent huge pages are on (even in "madvise"
// mode): decode streams every weight once per token, and with 4 KiB pages
// the TLB misses cost (BenchmarkDotQRowsBig's layout, 160 MB: 15.1
// against 12.4 cpuGB/s, 1.22x, in one run on a 2-core VM). When the
// mapping fails, Go's heap serves.
func allocRepacked(n int) ([]byte, func()) {
	if n == 0 {
		return nil, func() {}
	}
	mem, err := unix.Mmap(-1, 0, n+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, n), func() {}
	}
	off := 0
	if r := int(uintptrOf(mem) % hugePage); r != 0 {
		off = hugePage - r
	}
	b := mem[off : off+n : off+n]
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice: without it, small pages
	return b, func() { unix.Munmap(mem) }
}

// releaseFile drops from the process the pages of the file mapping data
// that lie wholly inside the spans (MADV_DONTNEED: the mapping is a
// read-only shared one, so a later read would only fault them in again
// from the page cache), so that the file's copy of the rearranged matrices
// stops counting in the resident set.
func releaseFile(data []byte, spans []span) {
	ps := os.Getpagesize()
	base := int(uintptrOf(data) % uintptr(ps))
	for _, s := range spans {
		lo := (base+s.lo+ps-1)/ps*ps - base
		hi := (base+s.hi)/ps*ps - base
		if hi > lo {
			_ = unix.Madvise(data[lo:hi], unix.MADV_DONTNEED) // advice: at worst the pages stay
		}
	}
}
