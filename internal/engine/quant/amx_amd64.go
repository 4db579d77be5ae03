//go:build !purego

package quant

import "golang.org/x/sys/cpu"

// hasAMX reports whether the AMX tiles may run: AVX-512 VNNI (they scale
// and add as the VNNI tiles do), AMX-TILE and AMX-INT8, the OS saving the
// tile state (XCR0 bits 17 and 18) and the process allowed to use it
// (amxPermit, asked once here). GODEBUG=cpu.amxint8=off turns them off.
var hasAMX = hasVNNI && cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 &&
	xcr0()&(3<<17) == 3<<17 && amxPermit()

// q8x16Name is the name of Q8_0's 16-row layout's kernels: x16Name, and
// "+amx" where the AMX tiles take the batches of 8 tokens and more.
var q8x16Name = x16Name + map[bool]string{true: "+amx"}[hasAMX]

// q8_0x16AMX is the MatMulQ of Q8_0's 16-row groups with the AMX tiles
// of 16 and 8 tokens (amx_amd64.s) and the VNNI ones of 4 and 1; nil
// without AMX.
var q8_0x16AMX = x16Tiles(hasAMX, q8x16Bytes, []int{16, 8, 4, 1}, q8x16M16, q8x16M8, q8x16T4, q8x16T1)

// xcr0 returns the low half of XCR0, the state components the OS saves.
func xcr0() uint32

// xinuse returns the low half of XINUSE, the state components this
// thread has in use (not in their initial state).
func xinuse() uint32

// q8x16M16 and q8x16M8 are the AMX tiles of 16 and 8 tokens on Q8_0's
// groups (amx_amd64.s).
//
//go:noescape
func q8x16M16(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)

//go:noescape
func q8x16M8(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
