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

// Q4_K (q4_kx16.go), super-blocks of 256 elements whose 2304 bytes hold
// the group's nibbles (chunk c, piece p, 16 rows of 4 bytes), then its
// scales d, minimum scales dmin and packed 6-bit values. A half is taken
// sub-block by sub-block: sub-block j = 2c+h is the low (h = 0) or high
// nibbles of chunk c's 8 pieces, each masked or shifted into V0, V1 and
// dotted, per token, against 4 activation bytes of a lane of V4+t (16 of
// the sub-block's 32 loaded at a time) into the token's sub-block sums
// V8+2t, V9+2t; these times the rows' 6-bit scale sc_j (shifted out of
// its word into V0, V1) are added into the token's is, V16+2t, V17+2t.
// After the 8 sub-blocks, as the Go twin does per row: the is are
// converted and added into the float sums times d·dy; then each token's
// ms = Σ m_j·(bsum_2j + bsum_2j+1) is formed in V8+2t, V9+2t from its
// block sums paired by SADDLP (V16+2t: j = 0..3, V17+2t: 4..7, by
// element), the minimums m_j shifted out of the three words (V2-V7)
// into V0, V1, and taken from the float sums times dmin·dy (FMLS, fused
// as Go fuses acc −= x·y). V2 holds the nibble mask until then. The
// integers are Q4_K's exactly; the float operations are the twin's, in
// its order.
//
// Registers that differ from Q4_0's: R0 is x+4, so the token pointers
// R7-R10 point at a block's quants (dy at −4, the block sums at 256;
// R20 = 292 a block); R11 walks the half's nibbles (R12 = 64, a piece;
// back 512 after a low sub-block, on 256 after the fourth chunk), R13
// points at the half's words of 6-bit values (the super-block + 2112 +
// R19), R16 at its scales (minus 64 − R19/2); X16_GROUPS's scale
// pointer (qshift 0) is unused.

// Q4K_LO and Q4K_HI load the half's rows of the next piece into V0, V1:
// the low nibbles and the high.
#define Q4K_LO \
	VLD1.P (R11)(R12), [V0.B16, V1.B16] \
	VAND V2.B16, V0.B16, V0.B16 \
	VAND V2.B16, V1.B16, V1.B16

#define Q4K_HI \
	VLD1.P (R11)(R12), [V0.B16, V1.B16] \
	VUSHR $4, V0.B16, V0.B16 \
	VUSHR $4, V1.B16, V1.B16

// Q4K_VALUE sets V0, V1 to the 6-bit values at bit sh of the half's
// words Vw, Vw+1 (named a, b).
#define Q4K_VALUE(a, b, sh) \
	VSHL  $(26-(sh)), a.S4, V0.S4 \
	VSHL  $(26-(sh)), b.S4, V1.S4 \
	VUSHR $26, V0.S4, V0.S4 \
	VUSHR $26, V1.S4, V1.S4

// Q4K_SC sets V0, V1 to sc_j, at bit sh of word w.
#define Q4K_SC(w, sh) \
	FLDPQ (64*(w))(R13), (F0, F1) \
	Q4K_VALUE(V0, V1, sh)

// Q4K_M7 sets V0, V1 to m_7, the top two bits of the three words.
#define Q4K_M7 \
	VUSHR $30, V6.S4, V0.S4 \
	VUSHR $30, V7.S4, V1.S4 \
	VSHL  $2, V0.S4, V0.S4 \
	VSHL  $2, V1.S4, V1.S4 \
	VUSRA $30, V4.S4, V0.S4 \
	VUSRA $30, V5.S4, V1.S4 \
	VSHL  $2, V0.S4, V0.S4 \
	VSHL  $2, V1.S4, V1.S4 \
	VUSRA $30, V2.S4, V0.S4 \
	VUSRA $30, V3.S4, V1.S4

// Q4K_SDOT adds piece p of the sub-block to a token's sums Vs, Vs+1:
// against lane i = p%4 of its activations Vx.
#define Q4K_SDOT(i, x, s) \
	SDOT_E(x, i, 0, s) \
	SDOT_E(x, i, 1, (s)+1)

#define Q4K_ACT4(off) \
	FMOVQ (off)(R7), F4 \
	FMOVQ (off)(R8), F5 \
	FMOVQ (off)(R9), F6 \
	FMOVQ (off)(R10), F7

#define Q4K_PIECE4(unpack, i) \
	unpack \
	Q4K_SDOT(i, 4, 8) \
	Q4K_SDOT(i, 5, 10) \
	Q4K_SDOT(i, 6, 12) \
	Q4K_SDOT(i, 7, 14)

#define Q4K_QUARTER4(unpack) \
	Q4K_PIECE4(unpack, 0) \
	Q4K_PIECE4(unpack, 1) \
	Q4K_PIECE4(unpack, 2) \
	Q4K_PIECE4(unpack, 3)

// Q4K_SUB4 is sub-block j (unpack Q4K_LO or Q4K_HI) for 4 tokens, its
// scale at bit sh of word w.
#define Q4K_SUB4(unpack, j, w, sh) \
	ZERO(8) \
	ZERO(9) \
	ZERO(10) \
	ZERO(11) \
	ZERO(12) \
	ZERO(13) \
	ZERO(14) \
	ZERO(15) \
	Q4K_ACT4(32*(j)) \
	Q4K_QUARTER4(unpack) \
	Q4K_ACT4(32*(j)+16) \
	Q4K_QUARTER4(unpack) \
	Q4K_SC(w, sh) \
	MLA4(0, 8, 16) \
	MLA4(1, 9, 17) \
	MLA4(0, 10, 18) \
	MLA4(1, 11, 19) \
	MLA4(0, 12, 20) \
	MLA4(1, 13, 21) \
	MLA4(0, 14, 22) \
	MLA4(1, 15, 23)

// Q4K_SUBS is the 8 sub-blocks of a half, sub the tile's Q4K_SUB; the
// scales sc_0..4 are word 0's, sc_5..7 word 1's first three.
#define Q4K_SUBS(sub) \
	sub(Q4K_LO, 0, 0, 0) \
	SUB $512, R11 \
	sub(Q4K_HI, 1, 0, 6) \
	sub(Q4K_LO, 2, 0, 12) \
	SUB $512, R11 \
	sub(Q4K_HI, 3, 0, 18) \
	sub(Q4K_LO, 4, 0, 24) \
	SUB $512, R11 \
	sub(Q4K_HI, 5, 1, 0) \
	sub(Q4K_LO, 6, 1, 6) \
	SUB $512, R11 \
	sub(Q4K_HI, 7, 1, 12)

// Q4K_IS adds a token's is (Via, Via+1, converted) times d·dy into its
// float sums Vfa, Vfa+1 (d in V0, V1; dy at −4(Rrt)).
#define Q4K_IS(rt, ia, fa) \
	FMOVS -4(rt), F3 \
	FMUL_E0(3, 0, 8) \
	FMUL_E0(3, 1, 9) \
	SCVTF4(ia, ia) \
	SCVTF4((ia)+1, (ia)+1) \
	FMLA4(8, ia, fa) \
	FMLA4(9, (ia)+1, (fa)+1)

// Q4K_MS takes a token's ms (Vma, Vma+1, converted) times dmin·dy from
// its float sums (dmin in V0, V1).
#define Q4K_MS(rt, ma, fa) \
	FMOVS -4(rt), F3 \
	FMUL_E0(3, 0, 4) \
	FMUL_E0(3, 1, 5) \
	SCVTF4(ma, ma) \
	SCVTF4((ma)+1, (ma)+1) \
	FMLS4(4, ma, fa) \
	FMLS4(5, (ma)+1, (fa)+1)

// Q4K_BSUMS loads a token's 16 block sums into Vb, Vb+1 (named a, c)
// as the 8 sums of its sub-blocks, and clears its ms Vm, Vm+1.
#define Q4K_BSUMS(rt, a, c, b, m) \
	FLDPQ 256(rt), (a, c) \
	SADDLP(b, b) \
	SADDLP((b)+1, (b)+1) \
	ZERO(m) \
	ZERO((m)+1)

// Q4K_WORDS loads the half's three words of 6-bit values into V2-V7.
#define Q4K_WORDS \
	FLDPQ 0(R13), (F2, F3) \
	FLDPQ 64(R13), (F4, F5) \
	FLDPQ 128(R13), (F6, F7)

// Q4K_SCALES loads the half's 8 binary16 scales at off(R16) into V0, V1.
#define Q4K_SCALES(off) \
	FMOVQ off(R16), F0 \
	FCVTL_HI(0, 1) \
	FCVTL_LO(0, 0)

// Q4K_MJ4 adds m_j (V0, V1) times sub-block j's sums (lane i of the
// tokens' V16+2t+r) into the 4 tokens' ms.
#define Q4K_MJ4(r, i) \
	MLA_E(16+(r), i, 0, 8) \
	MLA_E(16+(r), i, 1, 9) \
	MLA_E(18+(r), i, 0, 10) \
	MLA_E(18+(r), i, 1, 11) \
	MLA_E(20+(r), i, 0, 12) \
	MLA_E(20+(r), i, 1, 13) \
	MLA_E(22+(r), i, 0, 14) \
	MLA_E(22+(r), i, 1, 15)

// Q4K_MINS is the ms of a half, mj the tile's Q4K_MJ: m_0 and m_1 are
// word 1's last two values, m_2..6 word 2's, m_7 the top bits.
#define Q4K_MINS(mj) \
	Q4K_VALUE(V4, V5, 18) \
	mj(0, 0) \
	Q4K_VALUE(V4, V5, 24) \
	mj(0, 1) \
	Q4K_VALUE(V6, V7, 0) \
	mj(0, 2) \
	Q4K_VALUE(V6, V7, 6) \
	mj(0, 3) \
	Q4K_VALUE(V6, V7, 12) \
	mj(1, 0) \
	Q4K_VALUE(V6, V7, 18) \
	mj(1, 1) \
	Q4K_VALUE(V6, V7, 24) \
	mj(1, 2) \
	Q4K_M7 \
	mj(1, 3)

#define Q4K_BLOCK4 \
	VMOVI $15, V2.B16 \
	ADD   $2112, R11, R13 \
	ZERO(16) \
	ZERO(17) \
	ZERO(18) \
	ZERO(19) \
	ZERO(20) \
	ZERO(21) \
	ZERO(22) \
	ZERO(23) \
	Q4K_SUBS(Q4K_SUB4) \
	ADD $256, R11 \
	SUB R19>>1, R13, R16 \
	Q4K_SCALES(-64) \
	Q4K_IS(R7, 16, 24) \
	Q4K_IS(R8, 18, 26) \
	Q4K_IS(R9, 20, 28) \
	Q4K_IS(R10, 22, 30) \
	Q4K_BSUMS(R7, F16, F17, 16, 8) \
	Q4K_BSUMS(R8, F18, F19, 18, 10) \
	Q4K_BSUMS(R9, F20, F21, 20, 12) \
	Q4K_BSUMS(R10, F22, F23, 22, 14) \
	Q4K_WORDS \
	Q4K_MINS(Q4K_MJ4) \
	Q4K_SCALES(-32) \
	Q4K_MS(R7, 8, 24) \
	Q4K_MS(R8, 10, 26) \
	Q4K_MS(R9, 12, 28) \
	Q4K_MS(R10, 14, 30) \
	ADD R20, R7 \
	ADD R20, R8 \
	ADD R20, R9 \
	ADD R20, R10

// The 1-token tile: the same with token 0 alone.
#define Q4K_PIECE1(unpack, i) \
	unpack \
	Q4K_SDOT(i, 4, 8)

#define Q4K_QUARTER1(unpack) \
	Q4K_PIECE1(unpack, 0) \
	Q4K_PIECE1(unpack, 1) \
	Q4K_PIECE1(unpack, 2) \
	Q4K_PIECE1(unpack, 3)

#define Q4K_SUB1(unpack, j, w, sh) \
	ZERO(8) \
	ZERO(9) \
	FMOVQ (32*(j))(R7), F4 \
	Q4K_QUARTER1(unpack) \
	FMOVQ (32*(j)+16)(R7), F4 \
	Q4K_QUARTER1(unpack) \
	Q4K_SC(w, sh) \
	MLA4(0, 8, 16) \
	MLA4(1, 9, 17)

#define Q4K_MJ1(r, i) \
	MLA_E(16+(r), i, 0, 8) \
	MLA_E(16+(r), i, 1, 9)

#define Q4K_BLOCK1 \
	VMOVI $15, V2.B16 \
	ADD   $2112, R11, R13 \
	ZERO(16) \
	ZERO(17) \
	Q4K_SUBS(Q4K_SUB1) \
	ADD $256, R11 \
	SUB R19>>1, R13, R16 \
	Q4K_SCALES(-64) \
	Q4K_IS(R7, 16, 24) \
	Q4K_BSUMS(R7, F16, F17, 16, 8) \
	Q4K_WORDS \
	Q4K_MINS(Q4K_MJ1) \
	Q4K_SCALES(-32) \
	Q4K_MS(R7, 8, 24) \
	ADD R20, R7

// func q4kx16S4(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
TEXT ·q4kx16S4(SB), NOSPLIT, $0-56
	X16_ENTRY(2304)
	ADD  $4, R0
	MOVD $292, R20
	X16_GROUPS(0, ZERO4, Q4K_BLOCK4, STORE4)

// func q4kx16S1(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
TEXT ·q4kx16S1(SB), NOSPLIT, $0-56
	X16_ENTRY(2304)
	ADD  $4, R0
	MOVD $292, R20
	X16_GROUPS(0, ZERO1, Q4K_BLOCK1, STORE1)
