//go:build unix

package gguf

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Open maps the file at path read-only and parses it. The mapping is
// released by Close.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	size := st.Size()
	if size <= 0 || int64(int(size)) != size {
		return parseOwned(path, nil, nil)
	}
	data, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf: mmap %s: %w", path, err)
	}
	return parseOwned(path, data, func() error { return unix.Munmap(data) })
}
