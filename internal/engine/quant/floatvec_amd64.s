//go:build !purego

#include "textflag.h"

// The float vector kernels (floatvec_amd64.go): AVX2, FMA and F16C. Every
// n is a positive multiple of 8. The dot products keep four eight-lane
// accumulators over groups of 32, then fold groups of 8 into the first,
// and reduce in the order reduce8x4 (floatvec.go) writes down.

// REDUCE leaves (Y0+Y1)+(Y2+Y3) summed across lanes in X0's lane 0.
#define REDUCE \
	VADDPS Y1, Y0, Y0 \
	VADDPS Y3, Y2, Y2 \
	VADDPS Y2, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VPERMILPS $0x4e, X0, X1 \
	VADDPS X1, X0, X0 \
	VPERMILPS $0xb1, X0, X1 \
	VADDSS X1, X0, X0

// func dotF32Asm(a, b unsafe.Pointer, n int) float32
TEXT ·dotF32Asm(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f32loop32:
	CMPQ CX, $32
	JLT  f32loop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  f32loop32

f32loop8:
	CMPQ CX, $8
	JLT  f32done
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  f32loop8

f32done:
	REDUCE
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotF16Asm(a, b unsafe.Pointer, n int) float32
TEXT ·dotF16Asm(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

f16loop32:
	CMPQ CX, $32
	JLT  f16loop8
	VCVTPH2PS (DI), Y4
	VCVTPH2PS 16(DI), Y5
	VCVTPH2PS 32(DI), Y6
	VCVTPH2PS 48(DI), Y7
	VFMADD231PS (SI), Y4, Y0
	VFMADD231PS 32(SI), Y5, Y1
	VFMADD231PS 64(SI), Y6, Y2
	VFMADD231PS 96(SI), Y7, Y3
	ADDQ $128, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP  f16loop32

f16loop8:
	CMPQ CX, $8
	JLT  f16done
	VCVTPH2PS (DI), Y4
	VFMADD231PS (SI), Y4, Y0
	ADDQ $32, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JMP  f16loop8

f16done:
	REDUCE
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func axpyF32Asm(y unsafe.Pointer, a float32, x unsafe.Pointer, n int)
TEXT ·axpyF32Asm(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	VBROADCASTSS a+8(FP), Y0
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX

ax32loop16:
	CMPQ CX, $16
	JLT  ax32loop8
	VMULPS (SI), Y0, Y1
	VMULPS 32(SI), Y0, Y2
	VADDPS (DI), Y1, Y1
	VADDPS 32(DI), Y2, Y2
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  ax32loop16

ax32loop8:
	CMPQ CX, $8
	JLT  ax32done
	VMULPS (SI), Y0, Y1
	VADDPS (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  ax32loop8

ax32done:
	VZEROUPPER
	RET

// func axpyF16Asm(y unsafe.Pointer, a float32, x unsafe.Pointer, n int)
TEXT ·axpyF16Asm(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	VBROADCASTSS a+8(FP), Y0
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX

ax16loop16:
	CMPQ CX, $16
	JLT  ax16loop8
	VCVTPH2PS (SI), Y1
	VCVTPH2PS 16(SI), Y2
	VMULPS Y1, Y0, Y1
	VMULPS Y2, Y0, Y2
	VADDPS (DI), Y1, Y1
	VADDPS 32(DI), Y2, Y2
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	ADDQ $32, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  ax16loop16

ax16loop8:
	CMPQ CX, $8
	JLT  ax16done
	VCVTPH2PS (SI), Y1
	VMULPS Y1, Y0, Y1
	VADDPS (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  ax16loop8

ax16done:
	VZEROUPPER
	RET

// func toF16Asm(dst, src unsafe.Pointer, n int)
TEXT ·toF16Asm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

tohloop:
	VMOVUPS (SI), Y1
	VCVTPS2PH $0, Y1, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JNE  tohloop
	VZEROUPPER
	RET
