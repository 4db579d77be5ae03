//go:build !purego

#include "textflag.h"

// The serial kernels of a decode step (kernels_amd64.go): AVX2 and FMA,
// eight float32 lanes at a time; every n is a positive multiple of 8.
// Their pure-Go twins are kernels_vec.go's.

// expc holds each constant of the vector exp broadcast to eight lanes, at
// the offsets named below.
#define K_LO 0
#define K_HI 32
#define K_LOG2E 64
#define K_LN2HI 96
#define K_LN2LO 128
#define K_C720 160
#define K_C120 192
#define K_C24 224
#define K_C6 256
#define K_HALF 288
#define K_ONE 320
#define K_BIAS 352
#define K_SIGN 384

DATA expc<>+0(SB)/4, $0xc2aea8f6
DATA expc<>+4(SB)/4, $0xc2aea8f6
DATA expc<>+8(SB)/4, $0xc2aea8f6
DATA expc<>+12(SB)/4, $0xc2aea8f6
DATA expc<>+16(SB)/4, $0xc2aea8f6
DATA expc<>+20(SB)/4, $0xc2aea8f6
DATA expc<>+24(SB)/4, $0xc2aea8f6
DATA expc<>+28(SB)/4, $0xc2aea8f6
DATA expc<>+32(SB)/4, $0x42b0bd71
DATA expc<>+36(SB)/4, $0x42b0bd71
DATA expc<>+40(SB)/4, $0x42b0bd71
DATA expc<>+44(SB)/4, $0x42b0bd71
DATA expc<>+48(SB)/4, $0x42b0bd71
DATA expc<>+52(SB)/4, $0x42b0bd71
DATA expc<>+56(SB)/4, $0x42b0bd71
DATA expc<>+60(SB)/4, $0x42b0bd71
DATA expc<>+64(SB)/4, $0x3fb8aa3b
DATA expc<>+68(SB)/4, $0x3fb8aa3b
DATA expc<>+72(SB)/4, $0x3fb8aa3b
DATA expc<>+76(SB)/4, $0x3fb8aa3b
DATA expc<>+80(SB)/4, $0x3fb8aa3b
DATA expc<>+84(SB)/4, $0x3fb8aa3b
DATA expc<>+88(SB)/4, $0x3fb8aa3b
DATA expc<>+92(SB)/4, $0x3fb8aa3b
DATA expc<>+96(SB)/4, $0x3f318000
DATA expc<>+100(SB)/4, $0x3f318000
DATA expc<>+104(SB)/4, $0x3f318000
DATA expc<>+108(SB)/4, $0x3f318000
DATA expc<>+112(SB)/4, $0x3f318000
DATA expc<>+116(SB)/4, $0x3f318000
DATA expc<>+120(SB)/4, $0x3f318000
DATA expc<>+124(SB)/4, $0x3f318000
DATA expc<>+128(SB)/4, $0xb95e8083
DATA expc<>+132(SB)/4, $0xb95e8083
DATA expc<>+136(SB)/4, $0xb95e8083
DATA expc<>+140(SB)/4, $0xb95e8083
DATA expc<>+144(SB)/4, $0xb95e8083
DATA expc<>+148(SB)/4, $0xb95e8083
DATA expc<>+152(SB)/4, $0xb95e8083
DATA expc<>+156(SB)/4, $0xb95e8083
DATA expc<>+160(SB)/4, $0x3ab60b61
DATA expc<>+164(SB)/4, $0x3ab60b61
DATA expc<>+168(SB)/4, $0x3ab60b61
DATA expc<>+172(SB)/4, $0x3ab60b61
DATA expc<>+176(SB)/4, $0x3ab60b61
DATA expc<>+180(SB)/4, $0x3ab60b61
DATA expc<>+184(SB)/4, $0x3ab60b61
DATA expc<>+188(SB)/4, $0x3ab60b61
DATA expc<>+192(SB)/4, $0x3c088889
DATA expc<>+196(SB)/4, $0x3c088889
DATA expc<>+200(SB)/4, $0x3c088889
DATA expc<>+204(SB)/4, $0x3c088889
DATA expc<>+208(SB)/4, $0x3c088889
DATA expc<>+212(SB)/4, $0x3c088889
DATA expc<>+216(SB)/4, $0x3c088889
DATA expc<>+220(SB)/4, $0x3c088889
DATA expc<>+224(SB)/4, $0x3d2aaaab
DATA expc<>+228(SB)/4, $0x3d2aaaab
DATA expc<>+232(SB)/4, $0x3d2aaaab
DATA expc<>+236(SB)/4, $0x3d2aaaab
DATA expc<>+240(SB)/4, $0x3d2aaaab
DATA expc<>+244(SB)/4, $0x3d2aaaab
DATA expc<>+248(SB)/4, $0x3d2aaaab
DATA expc<>+252(SB)/4, $0x3d2aaaab
DATA expc<>+256(SB)/4, $0x3e2aaaab
DATA expc<>+260(SB)/4, $0x3e2aaaab
DATA expc<>+264(SB)/4, $0x3e2aaaab
DATA expc<>+268(SB)/4, $0x3e2aaaab
DATA expc<>+272(SB)/4, $0x3e2aaaab
DATA expc<>+276(SB)/4, $0x3e2aaaab
DATA expc<>+280(SB)/4, $0x3e2aaaab
DATA expc<>+284(SB)/4, $0x3e2aaaab
DATA expc<>+288(SB)/4, $0x3f000000
DATA expc<>+292(SB)/4, $0x3f000000
DATA expc<>+296(SB)/4, $0x3f000000
DATA expc<>+300(SB)/4, $0x3f000000
DATA expc<>+304(SB)/4, $0x3f000000
DATA expc<>+308(SB)/4, $0x3f000000
DATA expc<>+312(SB)/4, $0x3f000000
DATA expc<>+316(SB)/4, $0x3f000000
DATA expc<>+320(SB)/4, $0x3f800000
DATA expc<>+324(SB)/4, $0x3f800000
DATA expc<>+328(SB)/4, $0x3f800000
DATA expc<>+332(SB)/4, $0x3f800000
DATA expc<>+336(SB)/4, $0x3f800000
DATA expc<>+340(SB)/4, $0x3f800000
DATA expc<>+344(SB)/4, $0x3f800000
DATA expc<>+348(SB)/4, $0x3f800000
DATA expc<>+352(SB)/4, $0x7f
DATA expc<>+356(SB)/4, $0x7f
DATA expc<>+360(SB)/4, $0x7f
DATA expc<>+364(SB)/4, $0x7f
DATA expc<>+368(SB)/4, $0x7f
DATA expc<>+372(SB)/4, $0x7f
DATA expc<>+376(SB)/4, $0x7f
DATA expc<>+380(SB)/4, $0x7f
DATA expc<>+384(SB)/4, $0x80000000
DATA expc<>+388(SB)/4, $0x80000000
DATA expc<>+392(SB)/4, $0x80000000
DATA expc<>+396(SB)/4, $0x80000000
DATA expc<>+400(SB)/4, $0x80000000
DATA expc<>+404(SB)/4, $0x80000000
DATA expc<>+408(SB)/4, $0x80000000
DATA expc<>+412(SB)/4, $0x80000000
GLOBL expc<>(SB), RODATA|NOPTR, $416

// EXP sets E to e**X lane by lane, as expVec (kernels_vec.go) computes it:
// X clamped to [-87.33, 88.37], X = n·ln2 + r with n rounded to even, e**r
// by a degree-6 polynomial, times 2**n; 0 where X < -87.33. X, M and N are
// clobbered.
#define EXP(X, M, N, E) \
	VCMPPS $0x1d, expc<>+K_LO(SB), X, M \
	VMAXPS expc<>+K_LO(SB), X, X \
	VMINPS expc<>+K_HI(SB), X, X \
	VMULPS expc<>+K_LOG2E(SB), X, N \
	VROUNDPS $0, N, N \
	VFNMADD231PS expc<>+K_LN2HI(SB), N, X \
	VFNMADD231PS expc<>+K_LN2LO(SB), N, X \
	VMOVUPS expc<>+K_C720(SB), E \
	VFMADD213PS expc<>+K_C120(SB), X, E \
	VFMADD213PS expc<>+K_C24(SB), X, E \
	VFMADD213PS expc<>+K_C6(SB), X, E \
	VFMADD213PS expc<>+K_HALF(SB), X, E \
	VFMADD213PS expc<>+K_ONE(SB), X, E \
	VFMADD213PS expc<>+K_ONE(SB), X, E \
	VCVTPS2DQ N, N \
	VPADDD expc<>+K_BIAS(SB), N, N \
	VPSLLD $23, N, N \
	VMULPS N, E, E \
	VANDPS M, E, E

// HSUM leaves the sum of Y0's eight lanes in X0's lane 0: upper half onto
// the lower, then lanes 2,3 onto 0,1, then lane 1 onto lane 0.
#define HSUM \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VPERMILPS $0x4e, X0, X1 \
	VADDPS X1, X0, X0 \
	VPERMILPS $0xb1, X0, X1 \
	VADDSS X1, X0, X0

// func swigluAsm(gate, up unsafe.Pointer, n int)
TEXT ·swigluAsm(SB), NOSPLIT, $0-24
	MOVQ gate+0(FP), DI
	MOVQ up+8(FP), SI
	MOVQ n+16(FP), CX

swiloop:
	VMOVUPS (DI), Y0
	VXORPS  expc<>+K_SIGN(SB), Y0, Y1
	EXP(Y1, Y2, Y3, Y4)
	VADDPS  expc<>+K_ONE(SB), Y4, Y4
	VDIVPS  Y4, Y0, Y0
	VMULPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNZ     swiloop
	VZEROUPPER
	RET

// func scaleMaxAsm(x unsafe.Pointer, n int, scale float32) float32
TEXT ·scaleMaxAsm(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y2
	VMULPS       (DI), Y2, Y0
	VMOVUPS      Y0, (DI)
	ADDQ         $32, DI
	SUBQ         $8, CX
	JZ           smdone

smloop:
	VMULPS  (DI), Y2, Y1
	VMOVUPS Y1, (DI)
	VMAXPS  Y1, Y0, Y0
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     smloop

smdone:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func expSumAsm(x unsafe.Pointer, n int, mx float32) float32
TEXT ·expSumAsm(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS mx+16(FP), Y5
	VXORPS       Y0, Y0, Y0

esloop:
	VMOVUPS (DI), Y1
	VSUBPS  Y5, Y1, Y1
	EXP(Y1, Y2, Y3, Y4)
	VMOVUPS Y4, (DI)
	VADDPS  Y4, Y0, Y0
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     esloop
	HSUM
	VZEROUPPER
	MOVSS   X0, ret+24(FP)
	RET

// func scaleAsm(x unsafe.Pointer, n int, a float32)
TEXT ·scaleAsm(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS a+16(FP), Y2

scloop:
	VMULPS  (DI), Y2, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     scloop
	VZEROUPPER
	RET

// func sumSquaresAsm(x unsafe.Pointer, n int) float64
TEXT ·sumSquaresAsm(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), DI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1

ssloop:
	VCVTPS2PD   (DI), Y2
	VCVTPS2PD   16(DI), Y3
	VFMADD231PD Y2, Y2, Y0
	VFMADD231PD Y3, Y3, Y1
	ADDQ        $32, DI
	SUBQ        $8, CX
	JNZ         ssloop
	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+16(FP)
	RET

// func scaleMulAsm(dst, x, w unsafe.Pointer, n int, scale float32)
TEXT ·scaleMulAsm(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         w+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS scale+32(FP), Y2

smuloop:
	VMULPS  (SI), Y2, Y1
	VMULPS  (DX), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     smuloop
	VZEROUPPER
	RET
