//go:build (!amd64 && !arm64) || purego

package quant

// x16AsmImpls lists the assembly implementations of the 16-row layout of
// t: none here.
func x16AsmImpls(Type) []x16Impl { return nil }
