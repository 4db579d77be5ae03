//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// The float vector kernels (floatvec_arm64.go): NEON. Every n is a
// positive multiple of 8. The dot products keep four eight-lane
// accumulators, each a pair of four-lane registers (V0,V1), (V2,V3),
// (V4,V5), (V6,V7), over groups of 32, then fold groups of 8 into the
// first, and reduce in the order reduce8x4 (floatvec.go) writes down.
// FMLA is fused, as the twins' fma32 is.

// A64 encodings of the vector instructions Go's assembler has no
// mnemonic for (m, n, d are register numbers), beside neon_arm64.h's.
// FCVTN Vd.4H, Vn.4S and FCVTN2 Vd.8H, Vn.4S: float32 to binary16,
// rounded as FPCR says (to nearest, ties to even, as Go leaves it).
#define FCVTN_LO(n, d) WORD $(0x0E216800 | (n)<<5 | (d))
#define FCVTN_HI(n, d) WORD $(0x4E216800 | (n)<<5 | (d))

#define ZERO_ACC \
	VEOR V0.B16, V0.B16, V0.B16 \
	VEOR V1.B16, V1.B16, V1.B16 \
	VEOR V2.B16, V2.B16, V2.B16 \
	VEOR V3.B16, V3.B16, V3.B16 \
	VEOR V4.B16, V4.B16, V4.B16 \
	VEOR V5.B16, V5.B16, V5.B16 \
	VEOR V6.B16, V6.B16, V6.B16 \
	VEOR V7.B16, V7.B16, V7.B16

// REDUCE leaves the accumulators summed as reduce8x4 does in F0: lane by
// lane (a0+a1)+(a2+a3), the upper four lanes onto the lower, lanes 2,3
// onto 0,1, lane 1 onto lane 0.
#define REDUCE \
	FADD4(2, 0, 0) \
	FADD4(6, 4, 4) \
	FADD4(4, 0, 0) \
	FADD4(3, 1, 1) \
	FADD4(7, 5, 5) \
	FADD4(5, 1, 1) \
	FADD4(1, 0, 0) \
	VEXT $8, V0.B16, V0.B16, V1.B16 \
	FADD4(1, 0, 0) \
	FADDP4(0, 0, 0)

// FMA8 adds the products of a (Va, Va+1) and b (Vb, Vb+1) to accumulator
// pair (Vd, Vd+1).
#define FMA8(a, a1, b, b1, d, d1) \
	VFMLA b.S4, a.S4, d.S4 \
	VFMLA b1.S4, a1.S4, d1.S4

// func dotF32Asm(a, b unsafe.Pointer, n int) float32
TEXT ·dotF32Asm(SB), NOSPLIT, $0-28
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD n+16(FP), R2
	ZERO_ACC

f32loop32:
	CMP  $32, R2
	BLT  f32loop8
	VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R0), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P 64(R1), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1.P 64(R1), [V28.S4, V29.S4, V30.S4, V31.S4]
	FMA8(V16, V17, V24, V25, V0, V1)
	FMA8(V18, V19, V26, V27, V2, V3)
	FMA8(V20, V21, V28, V29, V4, V5)
	FMA8(V22, V23, V30, V31, V6, V7)
	SUB  $32, R2
	B    f32loop32

f32loop8:
	CBZ  R2, f32done
	VLD1.P 32(R0), [V16.S4, V17.S4]
	VLD1.P 32(R1), [V24.S4, V25.S4]
	FMA8(V16, V17, V24, V25, V0, V1)
	SUB  $8, R2
	B    f32loop8

f32done:
	REDUCE
	FMOVS F0, ret+24(FP)
	RET

// func dotF16Asm(a, b unsafe.Pointer, n int) float32
TEXT ·dotF16Asm(SB), NOSPLIT, $0-28
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD n+16(FP), R2
	ZERO_ACC

f16loop32:
	CMP  $32, R2
	BLT  f16loop8
	VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R0), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P 64(R1), [V24.H8, V25.H8, V26.H8, V27.H8]
	FCVTL_LO(24, 8)
	FCVTL_HI(24, 9)
	FCVTL_LO(25, 10)
	FCVTL_HI(25, 11)
	FCVTL_LO(26, 12)
	FCVTL_HI(26, 13)
	FCVTL_LO(27, 14)
	FCVTL_HI(27, 15)
	FMA8(V16, V17, V8, V9, V0, V1)
	FMA8(V18, V19, V10, V11, V2, V3)
	FMA8(V20, V21, V12, V13, V4, V5)
	FMA8(V22, V23, V14, V15, V6, V7)
	SUB  $32, R2
	B    f16loop32

f16loop8:
	CBZ  R2, f16done
	VLD1.P 32(R0), [V16.S4, V17.S4]
	VLD1.P 16(R1), [V24.H8]
	FCVTL_LO(24, 8)
	FCVTL_HI(24, 9)
	FMA8(V16, V17, V8, V9, V0, V1)
	SUB  $8, R2
	B    f16loop8

f16done:
	REDUCE
	FMOVS F0, ret+24(FP)
	RET

// AXPY8 adds a (V31 lane 0) times x (V2, V3) to y (V0, V1) at R0, the
// product rounded before the addition, and stores y, advancing R0.
#define AXPY8 \
	VLD1   (R0), [V0.S4, V1.S4] \
	FMUL_E0(31, 2, 2) \
	FMUL_E0(31, 3, 3) \
	FADD4(2, 0, 0) \
	FADD4(3, 1, 1) \
	VST1.P [V0.S4, V1.S4], 32(R0)

// func axpyF32Asm(y unsafe.Pointer, a float32, x unsafe.Pointer, n int)
TEXT ·axpyF32Asm(SB), NOSPLIT, $0-32
	MOVD  y+0(FP), R0
	FMOVS a+8(FP), F31
	MOVD  x+16(FP), R1
	MOVD  n+24(FP), R2

axf32loop:
	CBZ  R2, axf32done
	VLD1.P 32(R1), [V2.S4, V3.S4]
	AXPY8
	SUB  $8, R2
	B    axf32loop

axf32done:
	RET

// func axpyF16Asm(y unsafe.Pointer, a float32, x unsafe.Pointer, n int)
TEXT ·axpyF16Asm(SB), NOSPLIT, $0-32
	MOVD  y+0(FP), R0
	FMOVS a+8(FP), F31
	MOVD  x+16(FP), R1
	MOVD  n+24(FP), R2

axf16loop:
	CBZ  R2, axf16done
	VLD1.P 16(R1), [V4.H8]
	FCVTL_LO(4, 2)
	FCVTL_HI(4, 3)
	AXPY8
	SUB  $8, R2
	B    axf16loop

axf16done:
	RET

// func toF16Asm(dst, src unsafe.Pointer, n int)
TEXT ·toF16Asm(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2

tof16loop:
	CBZ  R2, tof16done
	VLD1.P 32(R1), [V0.S4, V1.S4]
	FCVTN_LO(0, 2)
	FCVTN_HI(1, 2)
	VST1.P [V2.H8], 16(R0)
	SUB  $8, R2
	B    tof16loop

tof16done:
	RET
