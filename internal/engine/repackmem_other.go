//go:build !linux

package engine

// allocRepacked returns n bytes for rearranged weights from Go's heap
// (huge-page advice is Linux's) and a function that does nothing.
func allocRepacked(n int) ([]byte, func()) { return make([]byte, n), func() {} }

// releaseFile leaves the file's pages as they are outside Linux.
func releaseFile(data []byte, spans []span) {}
