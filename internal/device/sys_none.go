//go:build !unix && !windows

package device

// platform knows nothing on systems without uname (wasm, plan9).
func platform() info { return info{} }
