//go:build !purego

#include "textflag.h"

// Activation quantisation (act_amd64.go): AVX2, bit for bit as act.go's
// Go computes it.

// actperm puts the dwords of VPACKSSDW then VPACKSSWB, which interleave
// within 128-bit lanes, back in element order.
DATA actperm<>+0(SB)/4, $0
DATA actperm<>+4(SB)/4, $4
DATA actperm<>+8(SB)/4, $1
DATA actperm<>+12(SB)/4, $5
DATA actperm<>+16(SB)/4, $2
DATA actperm<>+20(SB)/4, $6
DATA actperm<>+24(SB)/4, $3
DATA actperm<>+28(SB)/4, $7
GLOBL actperm<>(SB), RODATA|NOPTR, $32

// func quantize32Asm(x, q unsafe.Pointer) (sum int, d float32)
TEXT ·quantize32Asm(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ q+8(FP), DI
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3

	// amax = max |x|
	VPCMPEQD Y8, Y8, Y8
	VPSRLD   $1, Y8, Y8
	VANDPS   Y8, Y0, Y4
	VANDPS   Y8, Y1, Y5
	VANDPS   Y8, Y2, Y6
	VANDPS   Y8, Y3, Y7
	VMAXPS   Y5, Y4, Y4
	VMAXPS   Y7, Y6, Y6
	VMAXPS   Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS   X5, X4, X4
	VPERMILPS $0x4e, X4, X5
	VMAXPS   X5, X4, X4
	VPERMILPS $0xb1, X4, X5
	VMAXSS   X5, X4, X4

	VXORPS   X9, X9, X9
	VUCOMISS X9, X4
	JEQ      zero

	// d = amax/127, id = 127/amax
	MOVL     $0x42fe0000, AX // 127
	VMOVD    AX, X10
	VDIVSS   X10, X4, X11
	VDIVSS   X4, X10, X12
	VBROADCASTSS X12, Y12

	// q = x*id rounded to nearest even (MXCSR's default), as int32
	VMULPS    Y12, Y0, Y0
	VMULPS    Y12, Y1, Y1
	VMULPS    Y12, Y2, Y2
	VMULPS    Y12, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3

	// sum of the 32 quants
	VPADDD Y1, Y0, Y4
	VPADDD Y3, Y2, Y5
	VPADDD Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPADDD X5, X4, X4
	VPSHUFD $0x4e, X4, X5
	VPADDD X5, X4, X4
	VPSHUFD $0xb1, X4, X5
	VPADDD X5, X4, X4
	VMOVD  X4, AX
	MOVLQSX AX, AX

	// narrow to int8, in order
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VMOVDQU   actperm<>(SB), Y1
	VPERMD    Y0, Y1, Y0
	VMOVDQU   Y0, (DI)
	VZEROUPPER
	MOVQ  AX, sum+16(FP)
	MOVSS X11, d+24(FP)
	RET

zero:
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, (DI)
	VZEROUPPER
	MOVQ    $0, sum+16(FP)
	MOVL    $0, d+24(FP)
	RET

// func quantizeQ8KAsm(x, b unsafe.Pointer)
// One Q8_K block of 256 elements, as quantizeQ8KBlockGo writes it.
TEXT ·quantizeQ8KAsm(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ b+8(FP), DI

	// amax = max |x|, in four accumulators
	VPCMPEQD Y8, Y8, Y8
	VPSRLD   $1, Y8, Y8
	VXORPS   Y4, Y4, Y4
	VXORPS   Y5, Y5, Y5
	VXORPS   Y6, Y6, Y6
	VXORPS   Y7, Y7, Y7
	MOVQ     SI, AX
	MOVQ     $8, CX

kmax:
	VANDPS (AX), Y8, Y0
	VANDPS 32(AX), Y8, Y1
	VANDPS 64(AX), Y8, Y2
	VANDPS 96(AX), Y8, Y3
	VMAXPS Y0, Y4, Y4
	VMAXPS Y1, Y5, Y5
	VMAXPS Y2, Y6, Y6
	VMAXPS Y3, Y7, Y7
	ADDQ   $128, AX
	DECQ   CX
	JNZ    kmax
	VMAXPS Y5, Y4, Y4
	VMAXPS Y7, Y6, Y6
	VMAXPS Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS   X5, X4, X4
	VPERMILPS $0x4e, X4, X5
	VMAXPS   X5, X4, X4
	VPERMILPS $0xb1, X4, X5
	VMAXSS   X5, X4, X4

	VXORPS   X9, X9, X9
	VUCOMISS X9, X4
	JEQ      kzero

	// vmax: the first element whose magnitude is amax
	// (amax NaN took the branch above: unordered compares equal)
	VBROADCASTSS X4, Y4
	MOVQ     SI, AX
	MOVQ     $32, CX

kfind:
	VANDPS   (AX), Y8, Y0
	VCMPPS   $0, Y4, Y0, Y0
	VMOVMSKPS Y0, DX
	TESTL    DX, DX
	JNZ      kfound
	ADDQ     $32, AX
	DECQ     CX
	JNZ      kfind
	JMP      kzero

kfound:
	BSFL     DX, DX
	VMOVSS   (AX)(DX*4), X4

	// iscale = -127/vmax, d = 1/iscale
	MOVL     $0xc2fe0000, DX // -127
	VMOVD    DX, X10
	VDIVSS   X4, X10, X12
	MOVL     $0x3f800000, DX // 1
	VMOVD    DX, X10
	VDIVSS   X12, X10, X11
	VMOVSS   X11, (DI)
	VBROADCASTSS X12, Y12
	MOVL     $127, DX
	VMOVD    DX, X13
	VPBROADCASTD X13, Y13
	VMOVDQU  actperm<>(SB), Y14

	// 32 elements a turn: quants min(127, x*iscale rounded to even),
	// and the sums of their two groups of 16
	LEAQ     4(DI), BX   // quants
	LEAQ     260(DI), R8 // bsums
	MOVQ     $8, CX

kquant:
	VMULPS    (SI), Y12, Y0
	VMULPS    32(SI), Y12, Y1
	VMULPS    64(SI), Y12, Y2
	VMULPS    96(SI), Y12, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPMINSD   Y13, Y0, Y0
	VPMINSD   Y13, Y1, Y1
	VPMINSD   Y13, Y2, Y2
	VPMINSD   Y13, Y3, Y3

	VPADDD    Y1, Y0, Y4
	VPADDD    Y3, Y2, Y5
	VPHADDD   Y5, Y4, Y4
	VPHADDD   Y4, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPADDD    X5, X4, X4
	VPACKSSDW X4, X4, X4
	VMOVD     X4, DX
	MOVL      DX, (R8)

	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD    Y0, Y14, Y0
	VMOVDQU   Y0, (BX)

	ADDQ $128, SI
	ADDQ $32, BX
	ADDQ $4, R8
	DECQ CX
	JNZ  kquant
	VZEROUPPER
	RET

kzero:
	// all 292 bytes: 9 stores of 32 and the last 4
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, (DI)
	VMOVDQU Y0, 32(DI)
	VMOVDQU Y0, 64(DI)
	VMOVDQU Y0, 96(DI)
	VMOVDQU Y0, 128(DI)
	VMOVDQU Y0, 160(DI)
	VMOVDQU Y0, 192(DI)
	VMOVDQU Y0, 224(DI)
	VMOVDQU Y0, 256(DI)
	MOVL    $0, 288(DI)
	VZEROUPPER
	RET
