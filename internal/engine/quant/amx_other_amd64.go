//go:build !linux && !purego

package quant

// amxPermit reports false: the AMX tiles are used only on Linux, where
// the permission to use them is asked for as it requires.
func amxPermit() bool { return false }
