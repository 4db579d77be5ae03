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

// RED8 sums the lanes of Ya as reduce8 (floatvec.go) does and stores the
// sum at off(DI).
#define RED8(Ya, Xa, Xt, off) \
	VEXTRACTF128 $1, Ya, Xt \
	VADDPS Xt, Xa, Xa \
	VPERMILPS $0x4e, Xa, Xt \
	VADDPS Xt, Xa, Xa \
	VPERMILPS $0xb1, Xa, Xt \
	VADDSS Xt, Xa, Xa \
	VMOVSS Xa, off(DI)

// func scoresAsm(dst unsafe.Pointer, rows int, q unsafe.Pointer, hd int, k unsafe.Pointer, strideBytes int)
// Four rows at a time (one accumulator each), then one at a time.
TEXT ·scoresAsm(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ rows+8(FP), BX
	MOVQ q+16(FP), SI
	MOVQ hd+24(FP), DX
	MOVQ k+32(FP), R8
	MOVQ strideBytes+40(FP), R9

sc4:
	CMPQ BX, $4
	JLT  sc1
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ SI, R10
	MOVQ R8, R11
	LEAQ (R8)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	LEAQ (R13)(R9*1), R14
	MOVQ DX, CX

sc4inner:
	VMOVUPS (R10), Y4
	VFMADD231PS (R11), Y4, Y0
	VFMADD231PS (R12), Y4, Y1
	VFMADD231PS (R13), Y4, Y2
	VFMADD231PS (R14), Y4, Y3
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, R12
	ADDQ $32, R13
	ADDQ $32, R14
	SUBQ $8, CX
	JNE  sc4inner
	RED8(Y0, X0, X5, 0)
	RED8(Y1, X1, X5, 4)
	RED8(Y2, X2, X5, 8)
	RED8(Y3, X3, X5, 12)
	ADDQ $16, DI
	LEAQ (R8)(R9*4), R8
	SUBQ $4, BX
	JMP  sc4

sc1:
	TESTQ BX, BX
	JEQ   scdone
	VXORPS Y0, Y0, Y0
	MOVQ SI, R10
	MOVQ R8, R11
	MOVQ DX, CX

sc1inner:
	VMOVUPS (R10), Y4
	VFMADD231PS (R11), Y4, Y0
	ADDQ $32, R10
	ADDQ $32, R11
	SUBQ $8, CX
	JNE  sc1inner
	RED8(Y0, X0, X5, 0)
	ADDQ $4, DI
	ADDQ R9, R8
	DECQ BX
	JMP  sc1

scdone:
	VZEROUPPER
	RET

// func scoresF16Asm(dst unsafe.Pointer, rows int, q unsafe.Pointer, hd int, k unsafe.Pointer, strideBytes int)
TEXT ·scoresF16Asm(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ rows+8(FP), BX
	MOVQ q+16(FP), SI
	MOVQ hd+24(FP), DX
	MOVQ k+32(FP), R8
	MOVQ strideBytes+40(FP), R9

sh4:
	CMPQ BX, $4
	JLT  sh1
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ SI, R10
	MOVQ R8, R11
	LEAQ (R8)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	LEAQ (R13)(R9*1), R14
	MOVQ DX, CX

sh4inner:
	VMOVUPS (R10), Y4
	VCVTPH2PS (R11), Y6
	VCVTPH2PS (R12), Y7
	VCVTPH2PS (R13), Y8
	VCVTPH2PS (R14), Y9
	VFMADD231PS Y6, Y4, Y0
	VFMADD231PS Y7, Y4, Y1
	VFMADD231PS Y8, Y4, Y2
	VFMADD231PS Y9, Y4, Y3
	ADDQ $32, R10
	ADDQ $16, R11
	ADDQ $16, R12
	ADDQ $16, R13
	ADDQ $16, R14
	SUBQ $8, CX
	JNE  sh4inner
	RED8(Y0, X0, X5, 0)
	RED8(Y1, X1, X5, 4)
	RED8(Y2, X2, X5, 8)
	RED8(Y3, X3, X5, 12)
	ADDQ $16, DI
	LEAQ (R8)(R9*4), R8
	SUBQ $4, BX
	JMP  sh4

sh1:
	TESTQ BX, BX
	JEQ   shdone
	VXORPS Y0, Y0, Y0
	MOVQ SI, R10
	MOVQ R8, R11
	MOVQ DX, CX

sh1inner:
	VMOVUPS (R10), Y4
	VCVTPH2PS (R11), Y6
	VFMADD231PS Y6, Y4, Y0
	ADDQ $32, R10
	ADDQ $16, R11
	SUBQ $8, CX
	JNE  sh1inner
	RED8(Y0, X0, X5, 0)
	ADDQ $4, DI
	ADDQ R9, R8
	DECQ BX
	JMP  sh1

shdone:
	VZEROUPPER
	RET

// func weightedSumAsm(out unsafe.Pointer, hd int, w unsafe.Pointer, rows int, v unsafe.Pointer, strideBytes int)
// Columns in blocks of 32 (four accumulators), then 8; each block runs
// over every row.
TEXT ·weightedSumAsm(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ hd+8(FP), DX
	MOVQ w+16(FP), SI
	MOVQ rows+24(FP), BX
	MOVQ v+32(FP), R8
	MOVQ strideBytes+40(FP), R9

ws32:
	CMPQ DX, $32
	JLT  ws8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ SI, R10
	MOVQ R8, R11
	MOVQ BX, CX

ws32loop:
	VBROADCASTSS (R10), Y4
	VFMADD231PS (R11), Y4, Y0
	VFMADD231PS 32(R11), Y4, Y1
	VFMADD231PS 64(R11), Y4, Y2
	VFMADD231PS 96(R11), Y4, Y3
	ADDQ $4, R10
	ADDQ R9, R11
	DECQ CX
	JNE  ws32loop
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, R8
	SUBQ $32, DX
	JMP  ws32

ws8:
	CMPQ DX, $8
	JLT  wsdone
	VMOVUPS (DI), Y0
	MOVQ SI, R10
	MOVQ R8, R11
	MOVQ BX, CX

ws8loop:
	VBROADCASTSS (R10), Y4
	VFMADD231PS (R11), Y4, Y0
	ADDQ $4, R10
	ADDQ R9, R11
	DECQ CX
	JNE  ws8loop
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, R8
	SUBQ $8, DX
	JMP  ws8

wsdone:
	VZEROUPPER
	RET

// func weightedSumF16Asm(out unsafe.Pointer, hd int, w unsafe.Pointer, rows int, v unsafe.Pointer, strideBytes int)
TEXT ·weightedSumF16Asm(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ hd+8(FP), DX
	MOVQ w+16(FP), SI
	MOVQ rows+24(FP), BX
	MOVQ v+32(FP), R8
	MOVQ strideBytes+40(FP), R9

wh32:
	CMPQ DX, $32
	JLT  wh8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ SI, R10
	MOVQ R8, R11
	MOVQ BX, CX

wh32loop:
	VBROADCASTSS (R10), Y4
	VCVTPH2PS (R11), Y6
	VCVTPH2PS 16(R11), Y7
	VCVTPH2PS 32(R11), Y8
	VCVTPH2PS 48(R11), Y9
	VFMADD231PS Y6, Y4, Y0
	VFMADD231PS Y7, Y4, Y1
	VFMADD231PS Y8, Y4, Y2
	VFMADD231PS Y9, Y4, Y3
	ADDQ $4, R10
	ADDQ R9, R11
	DECQ CX
	JNE  wh32loop
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $64, R8
	SUBQ $32, DX
	JMP  wh32

wh8:
	CMPQ DX, $8
	JLT  whdone
	VMOVUPS (DI), Y0
	MOVQ SI, R10
	MOVQ R8, R11
	MOVQ BX, CX

wh8loop:
	VBROADCASTSS (R10), Y4
	VCVTPH2PS (R11), Y6
	VFMADD231PS Y6, Y4, Y0
	ADDQ $4, R10
	ADDQ R9, R11
	DECQ CX
	JNE  wh8loop
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $16, R8
	SUBQ $8, DX
	JMP  wh8

whdone:
	VZEROUPPER
	RET
