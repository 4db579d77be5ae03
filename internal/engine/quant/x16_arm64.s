//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// The Q4_0 and Q8_0 kernels on groups of 16 interleaved rows
// (q4_0vnni.go, q8_0x16.go) for CPUs with the dot-product extension: a
// tile of 4 or 1 tokens. SDOT by element adds to each int32 lane of a
// register of weights (one row a lane, four bytes each) the products with
// four activation bytes of one lane of another register, the broadcast
// the layouts were made for. NEON has 32 registers of four lanes, so a
// kernel takes a group in two halves of 8 rows (each a pair of
// registers), over every block, the activations of its tokens read once
// per half:
//
//	V0-V3     the weights of one piece (Q4_0: V0, V1 the high nibbles of
//	          rows 0-3 and 4-7, V2, V3 the low; Q8_0: two pieces' pairs)
//	V4        the nibble mask (Q4_0) or bytes of 0x80 (Q8_0)
//	V5-V7     the half's 8 scales, then widened: rows 0-3 in V6, 4-7 in V7
//	V8+2t     token t's activation quants 0-15, V9+2t quants 16-31
//	V16+2t    token t's integer block sums of rows 0-3, V17+2t of rows 4-7
//	V24+2t    token t's float sums of rows 0-3, V25+2t of rows 4-7
//
// Q4_0's nibbles, 0..15, are the same bytes signed, so its integer sums
// start from the activations' correction (−8·Σq) as the VNNI kernels'
// do and come out Σ (u−8)·q exactly. Q8_0's are stored unsigned
// (u = q+128) for VPDPBUSD; an EOR with 0x80 gives back the signed q,
// whose sums start from zero and come out Σ q·x, the same integer the
// Go twin forms from its correction. Per block and token each sum is
// converted to float and added to the float sum times d_w·d_x (FMLA,
// fused, as Go fuses the twin's multiply-add on arm64), the twin's order.
//
// General registers: R0 the tokens' activations (rows R1 = ldx bytes
// apart), R2 the group, R3 blocks a row, R4 groups left, R5 the group's
// outputs (rows R6 = 4·ldo bytes apart), R7-R10 tokens 0-3 (block k at
// 40·k), R11 the half's quants (R12 = 64, a piece), R13 its scales
// (R15 = 32, a block's), R14 blocks left, R16 the outputs being stored,
// R17 a group's bytes, R19 the half (0 or 32 bytes into a piece, 8
// floats into the group's outputs), R20 = 40 (an activation block).

// LD1 {Vt.16B, Vt+1.16B}, [Xn], #32 and LD1 ..., [Xn], Xm.
#define LD1_2P(n, t) WORD $(0x4CDFA000 | (n)<<5 | (t))
#define LD1_2PR(m, n, t) WORD $(0x4CC0A000 | (m)<<16 | (n)<<5 | (t))
// LD1R {Vt.4S}, [Xn], #4 (one word to every lane).
#define LD1R_P4(n, t) WORD $(0x4DDFC800 | (n)<<5 | (t))
// ORR Vd.16B, Vn.16B, Vn.16B (a copy).
#define MOV16(n, d) WORD $(0x4EA01C00 | (n)<<16 | (n)<<5 | (d))
// LDR S0, [Xn], #4 and LDUR S0, [Xn, #-4].
#define LDR_S0_P4(n) WORD $(0xBC404400 | (n)<<5)
#define LDUR_S0_M4(n) WORD $(0xBC5FC000 | (n)<<5)

// X16_ENTRY loads the arguments of a kernel whose group of one block is
// gbytes.
#define X16_ENTRY(gbytes) \
	MOVD x+0(FP), R0 \
	MOVD ldx+8(FP), R1 \
	MOVD w+16(FP), R2 \
	MOVD nb+24(FP), R3 \
	MOVD groups+32(FP), R4 \
	MOVD out+40(FP), R5 \
	MOVD ldo+48(FP), R6 \
	LSL  $2, R6 \
	MOVD $64, R12 \
	MOVD $32, R15 \
	MOVD $40, R20 \
	MOVD $gbytes, R17 \
	MUL  R3, R17

// X16_GROUPS is a kernel's loops: each group, each half, each block
// (block), then the half's float sums stored (store, from R16); zero
// clears them. The half's scales follow the group's quants (nb << qshift
// bytes).
#define X16_GROUPS(qshift, zero, block, store) \
grp: \
	CBZ  R4, done \
	MOVD ZR, R19 \
half: \
	ADD  R19, R2, R11 \
	LSL  $qshift, R3, R13 \
	ADD  R2, R13, R13 \
	ADD  R19>>1, R13, R13 \
	MOVD R0, R7 \
	ADD  R1, R7, R8 \
	ADD  R1, R8, R9 \
	ADD  R1, R9, R10 \
	MOVD R3, R14 \
	zero \
blk: \
	block \
	SUBS $1, R14 \
	BNE  blk \
	ADD  R19, R5, R16 \
	store \
	ADD  $32, R19 \
	CMP  $64, R19 \
	BNE  half \
	ADD  R17, R2 \
	ADD  $64, R5 \
	SUB  $1, R4 \
	B    grp \
done: \
	RET

#define ZERO4 \
	ZERO(24) \
	ZERO(25) \
	ZERO(26) \
	ZERO(27) \
	ZERO(28) \
	ZERO(29) \
	ZERO(30) \
	ZERO(31)

#define ZERO1 \
	ZERO(24) \
	ZERO(25)

#define STORE4 \
	VST1.P [V24.S4, V25.S4], (R16)(R6) \
	VST1.P [V26.S4, V27.S4], (R16)(R6) \
	VST1.P [V28.S4, V29.S4], (R16)(R6) \
	VST1.P [V30.S4, V31.S4], (R16)(R6)

#define STORE1 \
	VST1 [V24.S4, V25.S4], (R16)

// X16_SCALES widens the half's 8 binary16 scales of the block into V6
// and V7.
#define X16_SCALES \
	VLD1.P (R13)(R15), [V5.B16] \
	FCVTL_LO(5, 6) \
	FCVTL_HI(5, 7)

// X16_SUM adds the integer block sums in Via, Via+1 times the scales
// times d_x (in S0) to the float sums Vfa, Vfa+1.
#define X16_SUM(ia, fa) \
	SCVTF4(ia, ia) \
	SCVTF4((ia)+1, (ia)+1) \
	FMUL_E0(0, 6, 1) \
	FMUL_E0(0, 7, 2) \
	FMLA4(1, ia, fa) \
	FMLA4(2, (ia)+1, (fa)+1)

// Q4_0.

// Q4_TOKEN loads the block's quants of the token at Rrt into Vxl, Vxl+1
// and sets its integer sums Via, Via+1 to the correction; Rrt is left at
// the block's d_x.
#define Q4_TOKEN(rt, xl, ia) \
	LD1_2P(rt, xl) \
	LD1R_P4(rt, ia) \
	MOV16(ia, (ia)+1)

// Q4_UNPACK loads the next piece of the half's rows and unpacks its
// nibbles into V0-V3.
#define Q4_UNPACK \
	VLD1.P (R11)(R12), [V0.B16, V1.B16] \
	VAND  V4.B16, V0.B16, V2.B16 \
	VAND  V4.B16, V1.B16, V3.B16 \
	VUSHR $4, V0.B16, V0.B16 \
	VUSHR $4, V1.B16, V1.B16

// Q4_SDOT adds piece p of a token: the low nibbles against its quants
// 4p..4p+3, the high ones against 16+4p..16+4p+3.
#define Q4_SDOT(p, xl, ia) \
	SDOT_E(xl, p, 2, ia) \
	SDOT_E(xl, p, 3, (ia)+1) \
	SDOT_E((xl)+1, p, 0, ia) \
	SDOT_E((xl)+1, p, 1, (ia)+1)

#define Q4_PIECE4(p) \
	Q4_UNPACK \
	Q4_SDOT(p, 8, 16) \
	Q4_SDOT(p, 10, 18) \
	Q4_SDOT(p, 12, 20) \
	Q4_SDOT(p, 14, 22)

#define Q4_BLOCK4 \
	Q4_TOKEN(7, 8, 16) \
	Q4_TOKEN(8, 10, 18) \
	Q4_TOKEN(9, 12, 20) \
	Q4_TOKEN(10, 14, 22) \
	Q4_PIECE4(0) \
	Q4_PIECE4(1) \
	Q4_PIECE4(2) \
	Q4_PIECE4(3) \
	X16_SCALES \
	LDR_S0_P4(7) \
	X16_SUM(16, 24) \
	LDR_S0_P4(8) \
	X16_SUM(18, 26) \
	LDR_S0_P4(9) \
	X16_SUM(20, 28) \
	LDR_S0_P4(10) \
	X16_SUM(22, 30)

#define Q4_BLOCK1 \
	Q4_TOKEN(7, 8, 16) \
	Q4_UNPACK \
	Q4_SDOT(0, 8, 16) \
	Q4_UNPACK \
	Q4_SDOT(1, 8, 16) \
	Q4_UNPACK \
	Q4_SDOT(2, 8, 16) \
	Q4_UNPACK \
	Q4_SDOT(3, 8, 16) \
	X16_SCALES \
	LDR_S0_P4(7) \
	X16_SUM(16, 24)

// func q4x16S4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
TEXT ·q4x16S4(SB), NOSPLIT, $0-56
	X16_ENTRY(288)
	VMOVI $15, V4.B16
	X16_GROUPS(8, ZERO4, Q4_BLOCK4, STORE4)

// func q4x16S1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
TEXT ·q4x16S1(SB), NOSPLIT, $0-56
	X16_ENTRY(288)
	VMOVI $15, V4.B16
	X16_GROUPS(8, ZERO1, Q4_BLOCK1, STORE1)

// Q8_0.

// Q8_TOKEN loads the block's quants of the token at Rrt into Vxl, Vxl+1,
// clears its integer sums Via, Via+1 and leaves Rrt at the next block.
#define Q8_TOKEN(rt, xl, ia) \
	LD1_2PR(20, rt, xl) \
	ZERO(ia) \
	ZERO((ia)+1)

// Q8_LOAD loads the next piece of the half's rows into Va, Vb, signed.
#define Q8_LOAD(a, b) \
	VLD1.P (R11)(R12), [a.B16, b.B16] \
	VEOR V4.B16, a.B16, a.B16 \
	VEOR V4.B16, b.B16, b.B16

// Q8_SDOT adds a piece held in Vw, Vw+1 of a token: against lane i of
// its quants register Vx.
#define Q8_SDOT(w, x, i, ia) \
	SDOT_E(x, i, w, ia) \
	SDOT_E(x, i, (w)+1, (ia)+1)

// Q8_PIECE4 is piece 4·xo+i into Va, Vb (numbered w, w+1) for 4 tokens.
#define Q8_PIECE4(a, b, w, xo, i) \
	Q8_LOAD(a, b) \
	Q8_SDOT(w, 8+(xo), i, 16) \
	Q8_SDOT(w, 10+(xo), i, 18) \
	Q8_SDOT(w, 12+(xo), i, 20) \
	Q8_SDOT(w, 14+(xo), i, 22)

#define Q8_PIECE1(a, b, w, xo, i) \
	Q8_LOAD(a, b) \
	Q8_SDOT(w, 8+(xo), i, 16)

#define Q8_BLOCK4 \
	Q8_TOKEN(7, 8, 16) \
	Q8_TOKEN(8, 10, 18) \
	Q8_TOKEN(9, 12, 20) \
	Q8_TOKEN(10, 14, 22) \
	Q8_PIECE4(V0, V1, 0, 0, 0) \
	Q8_PIECE4(V2, V3, 2, 0, 1) \
	Q8_PIECE4(V0, V1, 0, 0, 2) \
	Q8_PIECE4(V2, V3, 2, 0, 3) \
	Q8_PIECE4(V0, V1, 0, 1, 0) \
	Q8_PIECE4(V2, V3, 2, 1, 1) \
	Q8_PIECE4(V0, V1, 0, 1, 2) \
	Q8_PIECE4(V2, V3, 2, 1, 3) \
	X16_SCALES \
	LDUR_S0_M4(7) \
	X16_SUM(16, 24) \
	LDUR_S0_M4(8) \
	X16_SUM(18, 26) \
	LDUR_S0_M4(9) \
	X16_SUM(20, 28) \
	LDUR_S0_M4(10) \
	X16_SUM(22, 30)

#define Q8_BLOCK1 \
	Q8_TOKEN(7, 8, 16) \
	Q8_PIECE1(V0, V1, 0, 0, 0) \
	Q8_PIECE1(V2, V3, 2, 0, 1) \
	Q8_PIECE1(V0, V1, 0, 0, 2) \
	Q8_PIECE1(V2, V3, 2, 0, 3) \
	Q8_PIECE1(V0, V1, 0, 1, 0) \
	Q8_PIECE1(V2, V3, 2, 1, 1) \
	Q8_PIECE1(V0, V1, 0, 1, 2) \
	Q8_PIECE1(V2, V3, 2, 1, 3) \
	X16_SCALES \
	LDUR_S0_M4(7) \
	X16_SUM(16, 24)

// func q8x16S4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
TEXT ·q8x16S4(SB), NOSPLIT, $0-56
	X16_ENTRY(544)
	VMOVI $0x80, V4.B16
	X16_GROUPS(9, ZERO4, Q8_BLOCK4, STORE4)

// func q8x16S1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
TEXT ·q8x16S1(SB), NOSPLIT, $0-56
	X16_ENTRY(544)
	VMOVI $0x80, V4.B16
	X16_GROUPS(9, ZERO1, Q8_BLOCK1, STORE1)
