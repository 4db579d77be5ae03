//go:build !purego

#include "textflag.h"

// The Q8_0 kernel on rows rearranged for AVX-512 VNNI (q8_0vnni.go): a
// row is nb binary16 scales then nb×32 unsigned quants (w+128); the
// activations are nb×32 int8 quants, nb×8 int32 corrections (−128 × each
// 4 quants' sum), nb float32 scales. VPDPBUSD multiplies the unsigned
// weight bytes (register) by the signed activation bytes (memory; Go's
// operand order is reversed from Intel's) and adds each 4 products into
// an int32 lane that starts from its correction, so the 16 lanes of a
// pair of blocks hold Σ w·x exactly; converted to float, they are
// multiplied by their block's combined scale (16 scales at a time made by
// VCVTPH2PS and VMULPS, spread over the lanes by VPERMPS) into an
// accumulator. About 8 instructions per two blocks against the AVX2
// kernel's 26.

// VNNI_PF and VNNI_PFL2 are how far ahead of the quants being read the
// kernel prefetches into L1 (PREFETCHT0) and into the outer caches
// (PREFETCHT2), as the AVX2 kernels do (dotq_amd64.s).
#define VNNI_PF 4096
#define VNNI_PFL2 24576

// VNNI_PAIR does the pair of blocks at byte off of the group: quants at
// R13, activation quants at SI, corrections at R11; IDX spreads the
// pair's two combined scales (from Z20) over the lanes.
#define VNNI_PAIR(off, IDX, ACC) \
	PREFETCHT0  VNNI_PF+off(R13) \
	PREFETCHT2  VNNI_PFL2+off(R13) \
	VMOVDQU32   off(R11), Z0 \
	VMOVDQU32   off(R13), Z1 \
	VPDPBUSD    off(SI), Z1, Z0 \
	VCVTDQ2PS   Z0, Z0 \
	VPERMPS     Z20, IDX, Z2 \
	VFMADD231PS Z2, Z0, ACC

// func q8_0RowsVNNI(x, w *byte, nb int, out *float32, rows int)
TEXT ·q8_0RowsVNNI(SB), NOSPLIT, $0-40
	MOVQ w+8(FP), DI
	MOVQ nb+16(FP), BX
	MOVQ out+24(FP), DX
	MOVQ rows+32(FP), R10
	LEAQ vnniIdx<>(SB), AX
	VMOVDQU32 0(AX), Z24
	VMOVDQU32 64(AX), Z25
	VMOVDQU32 128(AX), Z26
	VMOVDQU32 192(AX), Z27
	VMOVDQU32 256(AX), Z28
	VMOVDQU32 320(AX), Z29
	VMOVDQU32 384(AX), Z30
	VMOVDQU32 448(AX), Z31
	MOVL  $0xff, AX
	KMOVW AX, K2 // the low 8 lanes: a lone last block

vnnirow:
	TESTQ R10, R10
	JZ    vnniend
	MOVQ  x+0(FP), SI
	MOVQ  BX, AX
	SHLQ  $5, AX
	LEAQ  (SI)(AX*1), R11  // corrections: x + 32·nb
	LEAQ  (R11)(AX*1), R12 // scales: x + 64·nb
	LEAQ  (DI)(BX*2), R13  // weight quants: after nb scales
	MOVQ  BX, CX
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17

vnnigroup:
	CMPQ CX, $16
	JLT  vnnitail
	VCVTPH2PS (DI), Z20
	VMULPS    (R12), Z20, Z20
	VNNI_PAIR(0, Z24, Z16)
	VNNI_PAIR(64, Z25, Z17)
	VNNI_PAIR(128, Z26, Z16)
	VNNI_PAIR(192, Z27, Z17)
	VNNI_PAIR(256, Z28, Z16)
	VNNI_PAIR(320, Z29, Z17)
	VNNI_PAIR(384, Z30, Z16)
	VNNI_PAIR(448, Z31, Z17)
	ADDQ $32, DI
	ADDQ $512, R13
	ADDQ $512, SI
	ADDQ $512, R11
	ADDQ $64, R12
	SUBQ $16, CX
	JMP  vnnigroup

vnnitail:
	// 1 to 15 blocks left: their scales under the mask K1 (the lanes past
	// them zero), then pairs with the first index vector, rotating the
	// scales down two lanes after each.
	TESTQ CX, CX
	JZ    vnnidone
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVDQU16.Z (DI), K1, Y20
	VCVTPH2PS   Y20, Z20
	VMOVUPS.Z   (R12), K1, Z21
	VMULPS      Z21, Z20, Z20

vnnitailpair:
	CMPQ CX, $2
	JLT  vnnitailone
	VNNI_PAIR(0, Z24, Z16)
	VALIGND $2, Z20, Z20, Z20
	ADDQ $64, R13
	ADDQ $64, SI
	ADDQ $64, R11
	SUBQ $2, CX
	JMP  vnnitailpair

vnnitailone:
	// A lone last block: its weights and corrections loaded under K2 (the
	// upper lanes zero); the 32 bytes read past its activation quants are
	// the row's corrections, inside xq.
	TESTQ CX, CX
	JZ    vnnidone
	VMOVDQU32.Z (R11), K2, Z0
	VMOVDQU32.Z (R13), K2, Z1
	VPDPBUSD    (SI), Z1, Z0
	VCVTDQ2PS   Z0, Z0
	VPERMPS     Z20, Z24, Z2
	VFMADD231PS Z2, Z0, Z17
	ADDQ $32, R13

vnnidone:
	VADDPS        Z17, Z16, Z16
	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS        Y1, Y16, Y1
	VEXTRACTF128  $1, Y1, X2
	VADDPS        X2, X1, X1
	VHADDPS       X1, X1, X1
	VHADDPS       X1, X1, X1
	VMOVSS        X1, (DX)
	ADDQ          $4, DX
	MOVQ          R13, DI // the next row starts after this one's quants
	DECQ          R10
	JMP           vnnirow

vnniend:
	VZEROUPPER
	RET

// func quantizeActQ8_0VNNIAsm(dst *byte, x *float32, nb int)
//
// quantizeActQ8_0VNNIGo in AVX-512, per block of 32: amax = max|x|,
// d = amax/127 rounded to binary16 and widened, q = x·(127/amax)
// converted with the default rounding (to nearest, ties to even) and
// narrowed with saturation (|q| ≤ 127 already), the corrections by
// VPDPBUSD of the quants with bytes of 128. Bit-exact with the Go twin
// for finite inputs.
TEXT ·quantizeActQ8_0VNNIAsm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVQ CX, AX
	SHLQ $5, AX
	LEAQ (DI)(AX*1), R11  // corrections: dst + 32·nb
	LEAQ (R11)(AX*1), R12 // scales: dst + 64·nb
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z31 // |x| mask
	MOVL $0x42fe0000, AX // 127.0
	VMOVD AX, X15
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Y29 // unsigned bytes of 128
	VXORPS X14, X14, X14
	TESTQ CX, CX
	JZ    qadone

qaloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VPANDD  Z31, Z0, Z2
	VPANDD  Z31, Z1, Z3
	VMAXPS  Z3, Z2, Z2
	VEXTRACTF64X4 $1, Z2, Y3
	VMAXPS  Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VMAXPS  X3, X2, X2
	VPERMILPS $0x4e, X2, X3
	VMAXPS  X3, X2, X2
	VPERMILPS $0xb1, X2, X3
	VMAXPS  X3, X2, X2 // amax in every lane
	VDIVSS  X15, X2, X4 // d = amax/127
	VDIVSS  X2, X15, X5 // 127/amax
	VCMPSS  $4, X14, X2, X6 // amax != 0
	VANDPS  X6, X5, X5 // id, 0 when amax is 0
	VBROADCASTSS X5, Z5
	VMULPS  Z5, Z0, Z0
	VMULPS  Z5, Z1, Z1
	VCVTPS2DQ Z0, Z0
	VCVTPS2DQ Z1, Z1
	VPMOVSDB Z0, X0
	VPMOVSDB Z1, X1
	VINSERTI128 $1, X1, Y0, Y0
	VMOVDQU Y0, (DI)
	VPXORD  Y8, Y8, Y8
	VPDPBUSD Y0, Y29, Y8 // 128 × each 4 quants' sum
	VPSUBD  Y8, Y14, Y8
	VMOVDQU Y8, (R11)
	VCVTPS2PH $0, X4, X4
	VCVTPH2PS X4, X4
	VMOVSS  X4, (R12)
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $32, R11
	ADDQ $4, R12
	DECQ CX
	JNZ  qaloop

qadone:
	VZEROUPPER
	RET

// vnniIdx holds the 8 VPERMPS index vectors of a group of 16 blocks:
// vector j sends combined scale 2j to lanes 0-7 and 2j+1 to lanes 8-15.
DATA vnniIdx<>+0(SB)/4, $0
DATA vnniIdx<>+4(SB)/4, $0
DATA vnniIdx<>+8(SB)/4, $0
DATA vnniIdx<>+12(SB)/4, $0
DATA vnniIdx<>+16(SB)/4, $0
DATA vnniIdx<>+20(SB)/4, $0
DATA vnniIdx<>+24(SB)/4, $0
DATA vnniIdx<>+28(SB)/4, $0
DATA vnniIdx<>+32(SB)/4, $1
DATA vnniIdx<>+36(SB)/4, $1
DATA vnniIdx<>+40(SB)/4, $1
DATA vnniIdx<>+44(SB)/4, $1
DATA vnniIdx<>+48(SB)/4, $1
DATA vnniIdx<>+52(SB)/4, $1
DATA vnniIdx<>+56(SB)/4, $1
DATA vnniIdx<>+60(SB)/4, $1
DATA vnniIdx<>+64(SB)/4, $2
DATA vnniIdx<>+68(SB)/4, $2
DATA vnniIdx<>+72(SB)/4, $2
DATA vnniIdx<>+76(SB)/4, $2
DATA vnniIdx<>+80(SB)/4, $2
DATA vnniIdx<>+84(SB)/4, $2
DATA vnniIdx<>+88(SB)/4, $2
DATA vnniIdx<>+92(SB)/4, $2
DATA vnniIdx<>+96(SB)/4, $3
DATA vnniIdx<>+100(SB)/4, $3
DATA vnniIdx<>+104(SB)/4, $3
DATA vnniIdx<>+108(SB)/4, $3
DATA vnniIdx<>+112(SB)/4, $3
DATA vnniIdx<>+116(SB)/4, $3
DATA vnniIdx<>+120(SB)/4, $3
DATA vnniIdx<>+124(SB)/4, $3
DATA vnniIdx<>+128(SB)/4, $4
DATA vnniIdx<>+132(SB)/4, $4
DATA vnniIdx<>+136(SB)/4, $4
DATA vnniIdx<>+140(SB)/4, $4
DATA vnniIdx<>+144(SB)/4, $4
DATA vnniIdx<>+148(SB)/4, $4
DATA vnniIdx<>+152(SB)/4, $4
DATA vnniIdx<>+156(SB)/4, $4
DATA vnniIdx<>+160(SB)/4, $5
DATA vnniIdx<>+164(SB)/4, $5
DATA vnniIdx<>+168(SB)/4, $5
DATA vnniIdx<>+172(SB)/4, $5
DATA vnniIdx<>+176(SB)/4, $5
DATA vnniIdx<>+180(SB)/4, $5
DATA vnniIdx<>+184(SB)/4, $5
DATA vnniIdx<>+188(SB)/4, $5
DATA vnniIdx<>+192(SB)/4, $6
DATA vnniIdx<>+196(SB)/4, $6
DATA vnniIdx<>+200(SB)/4, $6
DATA vnniIdx<>+204(SB)/4, $6
DATA vnniIdx<>+208(SB)/4, $6
DATA vnniIdx<>+212(SB)/4, $6
DATA vnniIdx<>+216(SB)/4, $6
DATA vnniIdx<>+220(SB)/4, $6
DATA vnniIdx<>+224(SB)/4, $7
DATA vnniIdx<>+228(SB)/4, $7
DATA vnniIdx<>+232(SB)/4, $7
DATA vnniIdx<>+236(SB)/4, $7
DATA vnniIdx<>+240(SB)/4, $7
DATA vnniIdx<>+244(SB)/4, $7
DATA vnniIdx<>+248(SB)/4, $7
DATA vnniIdx<>+252(SB)/4, $7
DATA vnniIdx<>+256(SB)/4, $8
DATA vnniIdx<>+260(SB)/4, $8
DATA vnniIdx<>+264(SB)/4, $8
DATA vnniIdx<>+268(SB)/4, $8
DATA vnniIdx<>+272(SB)/4, $8
DATA vnniIdx<>+276(SB)/4, $8
DATA vnniIdx<>+280(SB)/4, $8
DATA vnniIdx<>+284(SB)/4, $8
DATA vnniIdx<>+288(SB)/4, $9
DATA vnniIdx<>+292(SB)/4, $9
DATA vnniIdx<>+296(SB)/4, $9
DATA vnniIdx<>+300(SB)/4, $9
DATA vnniIdx<>+304(SB)/4, $9
DATA vnniIdx<>+308(SB)/4, $9
DATA vnniIdx<>+312(SB)/4, $9
DATA vnniIdx<>+316(SB)/4, $9
DATA vnniIdx<>+320(SB)/4, $10
DATA vnniIdx<>+324(SB)/4, $10
DATA vnniIdx<>+328(SB)/4, $10
DATA vnniIdx<>+332(SB)/4, $10
DATA vnniIdx<>+336(SB)/4, $10
DATA vnniIdx<>+340(SB)/4, $10
DATA vnniIdx<>+344(SB)/4, $10
DATA vnniIdx<>+348(SB)/4, $10
DATA vnniIdx<>+352(SB)/4, $11
DATA vnniIdx<>+356(SB)/4, $11
DATA vnniIdx<>+360(SB)/4, $11
DATA vnniIdx<>+364(SB)/4, $11
DATA vnniIdx<>+368(SB)/4, $11
DATA vnniIdx<>+372(SB)/4, $11
DATA vnniIdx<>+376(SB)/4, $11
DATA vnniIdx<>+380(SB)/4, $11
DATA vnniIdx<>+384(SB)/4, $12
DATA vnniIdx<>+388(SB)/4, $12
DATA vnniIdx<>+392(SB)/4, $12
DATA vnniIdx<>+396(SB)/4, $12
DATA vnniIdx<>+400(SB)/4, $12
DATA vnniIdx<>+404(SB)/4, $12
DATA vnniIdx<>+408(SB)/4, $12
DATA vnniIdx<>+412(SB)/4, $12
DATA vnniIdx<>+416(SB)/4, $13
DATA vnniIdx<>+420(SB)/4, $13
DATA vnniIdx<>+424(SB)/4, $13
DATA vnniIdx<>+428(SB)/4, $13
DATA vnniIdx<>+432(SB)/4, $13
DATA vnniIdx<>+436(SB)/4, $13
DATA vnniIdx<>+440(SB)/4, $13
DATA vnniIdx<>+444(SB)/4, $13
DATA vnniIdx<>+448(SB)/4, $14
DATA vnniIdx<>+452(SB)/4, $14
DATA vnniIdx<>+456(SB)/4, $14
DATA vnniIdx<>+460(SB)/4, $14
DATA vnniIdx<>+464(SB)/4, $14
DATA vnniIdx<>+468(SB)/4, $14
DATA vnniIdx<>+472(SB)/4, $14
DATA vnniIdx<>+476(SB)/4, $14
DATA vnniIdx<>+480(SB)/4, $15
DATA vnniIdx<>+484(SB)/4, $15
DATA vnniIdx<>+488(SB)/4, $15
DATA vnniIdx<>+492(SB)/4, $15
DATA vnniIdx<>+496(SB)/4, $15
DATA vnniIdx<>+500(SB)/4, $15
DATA vnniIdx<>+504(SB)/4, $15
DATA vnniIdx<>+508(SB)/4, $15
GLOBL vnniIdx<>(SB), RODATA|NOPTR, $512
