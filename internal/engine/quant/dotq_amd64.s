//go:build !purego

#include "textflag.h"

// Integer dot products of quantised weights with quantised activations,
// AVX2, after ggml's mul_sum_i8_pairs_float: for signed bytes x and w,
// VPSIGNB makes |w| (unsigned) and x*sign(w), VPMADDUBSW multiplies them
// and adds pairs into int16 (no overflow: |x| ≤ 127, |w| ≤ 128), VPMADDWD
// with ones widens pairs into int32, which are converted to float and
// multiplied by the block's scale into an accumulator.

// Q8_0 block: d (binary16) then 32 int8. One block, at SI (activations)
// and DI (weights), into accumulator ACC using scratch registers.
#define Q8_0_BLOCK(off, S, A, B, P, Q, R, ACC) \
	MOVWLZX off(SI), AX \
	MOVWLZX off(DI), BX \
	VMOVSS (R8)(AX*4), S \
	VMULSS (R8)(BX*4), S, S \
	VMOVDQU off+2(SI), A \
	VMOVDQU off+2(DI), B \
	VPSIGNB B, B, P \
	VPSIGNB B, A, Q \
	VPMADDUBSW Q, P, R \
	VPMADDWD Y15, R, R \
	VCVTDQ2PS R, R

// func q8_0DotAVX2(x, w *byte, nb int, tab *[1 << 16]float32) float32
TEXT ·q8_0DotAVX2(SB), NOSPLIT, $0-36
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ tab+24(FP), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	VPCMPEQW Y15, Y15, Y15
	VPSRLW $15, Y15, Y15 // sixteen int16 ones

loop2:
	CMPQ CX, $2
	JLT tail
	Q8_0_BLOCK(0, X1, Y2, Y3, Y4, Y5, Y6, Y0)
	VBROADCASTSS X1, Y1
	VFMADD231PS Y6, Y1, Y0
	Q8_0_BLOCK(34, X9, Y10, Y11, Y12, Y13, Y14, Y8)
	VBROADCASTSS X9, Y9
	VFMADD231PS Y14, Y9, Y8
	ADDQ $68, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP  loop2

tail:
	TESTQ CX, CX
	JZ    done
	Q8_0_BLOCK(0, X1, Y2, Y3, Y4, Y5, Y6, Y0)
	VBROADCASTSS X1, Y1
	VFMADD231PS Y6, Y1, Y0

done:
	VADDPS       Y8, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+32(FP)
	RET
