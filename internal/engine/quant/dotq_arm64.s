//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// Integer dot products of quantised weights with quantised activations,
// NEON (ARMv8.0 Advanced SIMD, on every arm64 CPU). For signed bytes a
// and b, SMULL/SMULL2 multiply the low and high eight lanes into int16
// (no overflow: |a|, |b| ≤ 128), SADDLP/SADALP add neighbouring int16
// pairs into four int32 lanes, SCVTF converts them to float and FMLA
// multiplies by the block scale into a float accumulator. Four-bit and
// six-bit quants are unpacked to bytes first (q < 64 is a non-negative
// int8); Q6_K's q-32 stays within int8.
//
// Go's assembler has no mnemonic for these integer widening, by-element
// and float vector instructions, so the macros below and neon_arm64.h
// encode them (A64 encodings; m, n, d are vector register numbers).

// SMULL Vd.8H, Vn.8B, Vm.8B and SMULL2 Vd.8H, Vn.16B, Vm.16B.
#define SMULL_LO(m, n, d) WORD $(0x0E20C000 | (m)<<16 | (n)<<5 | (d))
#define SMULL_HI(m, n, d) WORD $(0x4E20C000 | (m)<<16 | (n)<<5 | (d))
// SMULL Vd.4S, Vn.4H, Vm.4H and SMLAL2 Vd.4S, Vn.8H, Vm.8H.
#define SMULL_H_LO(m, n, d) WORD $(0x0E60C000 | (m)<<16 | (n)<<5 | (d))
#define SMLAL_H_HI(m, n, d) WORD $(0x4E608000 | (m)<<16 | (n)<<5 | (d))
// SADALP Vd.4S, Vn.8H (pairwise widening add, accumulating).
#define SADALP(n, d) WORD $(0x4E606800 | (n)<<5 | (d))
// SXTL Vd.8H, Vn.8B; SXTL2 Vd.8H, Vn.16B; SXTL Vd.4S, Vn.4H; SXTL2 Vd.4S, Vn.8H.
#define SXTL_B_LO(n, d) WORD $(0x0F08A400 | (n)<<5 | (d))
#define SXTL_B_HI(n, d) WORD $(0x4F08A400 | (n)<<5 | (d))
#define SXTL_H_LO(n, d) WORD $(0x0F10A400 | (n)<<5 | (d))
#define SXTL_H_HI(n, d) WORD $(0x4F10A400 | (n)<<5 | (d))
// FMLA Vd.4S, Vn.4S, Vm.S[0].
#define FMLA_E0(m, n, d) WORD $(0x4F801000 | (m)<<16 | (n)<<5 | (d))
// FSUB Vd.4S, Vn.4S, Vm.4S.
#define FSUB4(m, n, d) WORD $(0x4EA0D400 | (m)<<16 | (n)<<5 | (d))

// Each kernel comes twice: with the ARMv8.0 widening multiplies (MUL
// below) and, for CPUs with the dot-product extension, with SDOT. The
// two differ only in how sixteen byte products reach four int32 lanes,
// so the kernels take that step as a macro argument.

// MUL32 sets the four int32 lanes of Vs to sums of the 32 products of the
// signed bytes in Va, Va+1 and Vb, Vb+1, using V4..V7.
#define MUL32(a, a1, b, b1, s) \
	SMULL_LO(b, a, 4) \
	SMULL_HI(b, a, 5) \
	SMULL_LO(b1, a1, 6) \
	SMULL_HI(b1, a1, 7) \
	SADDLP(4, s) \
	SADALP(5, s) \
	SADALP(6, s) \
	SADALP(7, s)

// SDOT32 is MUL32 with SDOT.
#define SDOT32(a, a1, b, b1, s) \
	ZERO(s) \
	SDOT(b, a, s) \
	SDOT(b1, a1, s)

// MUL16 and SDOT16 set Vs to sums of the 16 products of Va and Vb.
#define MUL16(a, b, s) \
	SMULL_LO(b, a, 4) \
	SMULL_HI(b, a, 5) \
	SADDLP(4, s) \
	SADALP(5, s)

#define SDOT16(a, b, s) \
	ZERO(s) \
	SDOT(b, a, s)

// SCALE loads the float32 binary16 table entry for the uint16 at off(p)
// into Fd, via Rt. R3 holds the table.
#define SCALE(off, p, t, fd) \
	MOVHU off(p), t \
	ADD   t<<2, R3, t \
	FMOVS (t), fd

// REDUCE stores the sum of the four lanes of Vv to (R4) and advances R4.
#define REDUCE(v, fv) \
	FADDP4(v, v, v) \
	FADDP4(v, v, v) \
	FMOVS.P fv, 4(R4)

// The kernels' arguments: x at x+0(FP) (activation blocks), w+8(FP)
// (weight rows), nb+16(FP) (blocks in a row), tab+24(FP) (the binary16
// table), out+32(FP), rows+40(FP). Registers: R0 the activations, R1 the
// weights, R2 blocks left, R3 the table, R4 the next output, R5 rows left.
#define ARGS \
	MOVD w+8(FP), R1 \
	MOVD tab+24(FP), R3 \
	MOVD out+32(FP), R4 \
	MOVD rows+40(FP), R5

// Q8_0 block: d (binary16) then 32 int8.

// Q8_0_BLOCK does one block into the float accumulator Vacc: the product
// of the scales in F16, the integer sums in V18.
#define Q8_0_BLOCK(dot32, acc) \
	SCALE(0, R0, R6, F16) \
	SCALE(0, R1, R7, F17) \
	FMULS F17, F16, F16 \
	ADD   $2, R0 \
	ADD   $2, R1 \
	VLD1.P 32(R0), [V0.B16, V1.B16] \
	VLD1.P 32(R1), [V2.B16, V3.B16] \
	dot32(0, 1, 2, 3, 18) \
	SCVTF4(18, 18) \
	FMLA_E0(16, 18, acc)

// Q8_0_ROWS is the body of a Q8_0 kernel: two blocks at a time into two
// accumulators.
#define Q8_0_ROWS(dot32) \
	ARGS \
q80row: \
	CBZ  R5, q80end \
	MOVD x+0(FP), R0 \
	MOVD nb+16(FP), R2 \
	VEOR V30.B16, V30.B16, V30.B16 \
	VEOR V31.B16, V31.B16, V31.B16 \
q80loop2: \
	CMP  $2, R2 \
	BLT  q80tail \
	Q8_0_BLOCK(dot32, 30) \
	Q8_0_BLOCK(dot32, 31) \
	SUB  $2, R2 \
	B    q80loop2 \
q80tail: \
	CBZ  R2, q80done \
	Q8_0_BLOCK(dot32, 30) \
q80done: \
	FADD4(31, 30, 30) \
	REDUCE(30, F30) \
	SUB  $1, R5 \
	B    q80row \
q80end: \
	RET

// func q8_0RowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q8_0RowsNEON(SB), NOSPLIT, $0-48
	Q8_0_ROWS(MUL32)

// func q8_0RowsSDOT(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q8_0RowsSDOT(SB), NOSPLIT, $0-48
	Q8_0_ROWS(SDOT32)

// Q4_0 weights (18-byte blocks: d binary16, 16 bytes of nibbles; element
// j < 16 the low nibble of byte j, element 16+j the high one, each minus
// 8) × Q8_0 activations.

// Q4_0_BLOCK does one block into the float accumulator Vacc: the product
// of the scales in F16, the nibbles minus 8 in V8, V9 (V29 the nibble
// mask, V28 eights), the integer sums in V18.
#define Q4_0_BLOCK(dot32, acc) \
	SCALE(0, R0, R6, F16) \
	SCALE(0, R1, R7, F17) \
	FMULS F17, F16, F16 \
	ADD   $2, R0 \
	ADD   $2, R1 \
	VLD1.P 32(R0), [V0.B16, V1.B16] \
	VLD1.P 16(R1), [V2.B16] \
	VAND  V29.B16, V2.B16, V8.B16 \
	VUSHR $4, V2.B16, V9.B16 \
	VSUB  V28.B16, V8.B16, V8.B16 \
	VSUB  V28.B16, V9.B16, V9.B16 \
	dot32(8, 9, 0, 1, 18) \
	SCVTF4(18, 18) \
	FMLA_E0(16, 18, acc)

// Q4_0_ROWS is the body of a Q4_0 kernel: two blocks at a time into two
// accumulators.
#define Q4_0_ROWS(dot32) \
	ARGS \
	VMOVI $15, V29.B16 \
	VMOVI $8, V28.B16 \
q40row: \
	CBZ  R5, q40end \
	MOVD x+0(FP), R0 \
	MOVD nb+16(FP), R2 \
	VEOR V30.B16, V30.B16, V30.B16 \
	VEOR V31.B16, V31.B16, V31.B16 \
q40loop2: \
	CMP  $2, R2 \
	BLT  q40tail \
	Q4_0_BLOCK(dot32, 30) \
	Q4_0_BLOCK(dot32, 31) \
	SUB  $2, R2 \
	B    q40loop2 \
q40tail: \
	CBZ  R2, q40done \
	Q4_0_BLOCK(dot32, 30) \
q40done: \
	FADD4(31, 30, 30) \
	REDUCE(30, F30) \
	SUB  $1, R5 \
	B    q40row \
q40end: \
	RET

// func q4_0RowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q4_0RowsNEON(SB), NOSPLIT, $0-48
	Q4_0_ROWS(MUL32)

// func q4_0RowsSDOT(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q4_0RowsSDOT(SB), NOSPLIT, $0-48
	Q4_0_ROWS(SDOT32)

// Q4_K weights (144-byte blocks at R1: d, dmin binary16, 12 bytes of
// packed six-bit scales and minimums, 128 bytes of nibbles) × Q8_K
// activations (292-byte blocks at R0: d float32, 256 int8, 16 int16
// sums). The minimums meet the activations through the block sums.

// Q4_K_64 does 64 elements c = 0..3: the 32 nibble bytes at R7 against
// the 64 activations at R6 (low nibbles the first 32, high nibbles the
// next 32), the sums scaled by the int32 lanes i and i+1 of Vsc into V19
// (V16 and V17 hold the float scales).
#define Q4_K_64(dot32, sc, i) \
	VLD1.P 32(R7), [V0.B16, V1.B16] \
	VLD1.P 64(R6), [V8.B16, V9.B16, V10.B16, V11.B16] \
	VAND  V31.B16, V0.B16, V12.B16 \
	VAND  V31.B16, V1.B16, V13.B16 \
	VUSHR $4, V0.B16, V14.B16 \
	VUSHR $4, V1.B16, V15.B16 \
	dot32(12, 13, 8, 9, 25) \
	MLA_E(sc, i, 25, 19) \
	dot32(14, 15, 10, 11, 26) \
	MLA_E(sc, (i)+1, 26, 19)

// Q4_K_ROWS is the body of a Q4_K kernel: V30 sums d*dy times the scaled
// sums, V29 dmin*dy times the minimum terms.
#define Q4_K_ROWS(dot32) \
	ARGS \
	VMOVI $15, V31.B16 \
q4krow: \
	CBZ  R5, q4kend \
	MOVD x+0(FP), R0 \
	MOVD nb+16(FP), R2 \
	VEOR V30.B16, V30.B16, V30.B16 \
	VEOR V29.B16, V29.B16, V29.B16 \
q4kloop: \
	CBZ R2, q4kdone \
	Q4_K_SCALES \
	ADD  $4, R0, R6 \
	ADD  $16, R1, R7 \
	VEOR V19.B16, V19.B16, V19.B16 \
	Q4_K_64(dot32, 23, 0) \
	Q4_K_64(dot32, 23, 2) \
	Q4_K_64(dot32, 24, 0) \
	Q4_K_64(dot32, 24, 2) \
	SCVTF4(19, 19) \
	FMLA_E0(16, 19, 30) \
	ADD $292, R0 \
	ADD $144, R1 \
	SUB $1, R2 \
	B   q4kloop \
q4kdone: \
	FSUB4(29, 30, 30) \
	REDUCE(30, F30) \
	SUB $1, R5 \
	B   q4krow \
q4kend: \
	RET

// Q4_K_SCALES sets F16 = d*dy and F17 = dmin*dy, unpacks the six-bit
// scales and minimums as ggml does with utmp[4] (scales 0..3 as int32 in
// V23, 4..7 in V24), and adds dmin*dy times the minimums times the sums
// of each 32 activations to V29.
#define Q4_K_SCALES \
	FMOVS (R0), F18 \
	SCALE(0, R1, R6, F16) \
	SCALE(2, R1, R7, F17) \
	FMULS F18, F16, F16 \
	FMULS F18, F17, F17 \
	MOVWU 4(R1), R10 \
	MOVWU 8(R1), R11 \
	MOVWU 12(R1), R12 \
	LSRW  $4, R12, R13 \
	ANDW  $0x0f0f0f0f, R13, R13 \
	LSRW  $6, R11, R14 \
	ANDW  $0x03030303, R14, R14 \
	ORRW  R14<<4, R13, R13 \
	ANDW  $0x3f3f3f3f, R11, R14 \
	ANDW  $0x0f0f0f0f, R12, R15 \
	LSRW  $6, R10, R19 \
	ANDW  $0x03030303, R19, R19 \
	ORRW  R19<<4, R15, R15 \
	ANDW  $0x3f3f3f3f, R10, R10 \
	ORR   R15<<32, R10, R10 \
	ORR   R13<<32, R14, R14 \
	VMOV  R10, V20.D[0] \
	VMOV  R14, V20.D[1] \
	VUXTL  V20.B8, V21.H8 \
	VUXTL2 V20.B16, V22.H8 \
	VUXTL  V21.H4, V23.S4 \
	VUXTL2 V21.H8, V24.S4 \
	ADD   $260, R0, R6 \
	VLD1  (R6), [V25.H8, V26.H8] \
	VADDP V26.H8, V25.H8, V27.H8 \
	SMULL_H_LO(22, 27, 28) \
	SMLAL_H_HI(22, 27, 28) \
	SCVTF4(28, 28) \
	FMLA_E0(17, 28, 29)

// In Q4_K_SCALES, R10..R13 hold the 32-bit words of ggml's utmp: R10
// utmp[0] (scales 0..3), R15 utmp[1] (scales 4..7), R14 utmp[2]
// (minimums 0..3), R13 utmp[3] (minimums 4..7); V20 gets the scales in
// bytes 0..7 and the minimums in bytes 8..15, V22 the minimums as int16,
// and V27 the eight sums of 32 activations (pairs of the stored sums of
// 16).

// func q4_KRowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q4_KRowsNEON(SB), NOSPLIT, $0-48
	Q4_K_ROWS(MUL32)

// func q4_KRowsSDOT(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q4_KRowsSDOT(SB), NOSPLIT, $0-48
	Q4_K_ROWS(SDOT32)

// Q6_K weights (210-byte blocks at R1: ql 128, qh 64, 16 int8 scales,
// d binary16) × Q8_K activations. Six-bit quants q in [0, 64) stand for
// q-32, made into signed bytes before the products.

// Q6_DOT16 multiplies the 16 signed bytes of V14 with those of Vy and adds
// the sums, scaled by int32 lane i of Vsc, into V27.
#define Q6_DOT16(dot16, y, sc, i) \
	dot16(14, y, 18) \
	MLA_E(sc, i, 18, 27)

// Q6_K_GROUP does the four 16-element groups g of one half: low bits in
// lA (ql[16g:]) and lB (ql[32+16g:]), high bits in h (qh[16g:]),
// activations in Vy1..Vy4, scales in Vlo (0..3 of the half) and Vhi (4..7).
#define Q6_K_GROUP(dot16, lA, lB, h, y1, y2, y3, y4, lo, hi, g) \
	VSHL  $4, h.B16, V14.B16 \
	VAND  V30.B16, V14.B16, V14.B16 \
	VAND  V31.B16, lA.B16, V15.B16 \
	VORR  V15.B16, V14.B16, V14.B16 \
	VSUB  V29.B16, V14.B16, V14.B16 \
	Q6_DOT16(dot16, y1, lo, g) \
	VSHL  $2, h.B16, V14.B16 \
	VAND  V30.B16, V14.B16, V14.B16 \
	VAND  V31.B16, lB.B16, V15.B16 \
	VORR  V15.B16, V14.B16, V14.B16 \
	VSUB  V29.B16, V14.B16, V14.B16 \
	Q6_DOT16(dot16, y2, lo, (g)+2) \
	VAND  V30.B16, h.B16, V14.B16 \
	VUSHR $4, lA.B16, V15.B16 \
	VORR  V15.B16, V14.B16, V14.B16 \
	VSUB  V29.B16, V14.B16, V14.B16 \
	Q6_DOT16(dot16, y3, hi, g) \
	VUSHR $2, h.B16, V14.B16 \
	VAND  V30.B16, V14.B16, V14.B16 \
	VUSHR $4, lB.B16, V15.B16 \
	VORR  V15.B16, V14.B16, V14.B16 \
	VSUB  V29.B16, V14.B16, V14.B16 \
	Q6_DOT16(dot16, y4, hi, (g)+2)

// Q6_K_HALF does half h: ql at R7 (64 bytes), qh at R8 (32 bytes), the
// 128 activations at R6, scales in Vlo and Vhi.
#define Q6_K_HALF(dot16, lo, hi) \
	VLD1.P 64(R7), [V0.B16, V1.B16, V2.B16, V3.B16] \
	VLD1.P 32(R8), [V16.B16, V17.B16] \
	VLD1.P 64(R6), [V6.B16, V7.B16, V8.B16, V9.B16] \
	VLD1.P 64(R6), [V10.B16, V11.B16, V12.B16, V13.B16] \
	Q6_K_GROUP(dot16, V0, V2, V16, 6, 8, 10, 12, lo, hi, 0) \
	Q6_K_GROUP(dot16, V1, V3, V17, 7, 9, 11, 13, lo, hi, 1)

// Q6_K_ROWS is the body of a Q6_K kernel, summing into V28.
#define Q6_K_ROWS(dot16) \
	ARGS \
	VMOVI $15, V31.B16 \
	VMOVI $48, V30.B16 \
	VMOVI $32, V29.B16 \
q6krow: \
	CBZ  R5, q6kend \
	MOVD x+0(FP), R0 \
	MOVD nb+16(FP), R2 \
	VEOR V28.B16, V28.B16, V28.B16 \
q6kloop: \
	CBZ R2, q6kdone \
	ADD  $192, R1, R6 \
	VLD1 (R6), [V26.B16] \
	SXTL_B_LO(26, 25) \
	SXTL_B_HI(26, 24) \
	SXTL_H_LO(25, 20) \
	SXTL_H_HI(25, 21) \
	SXTL_H_LO(24, 22) \
	SXTL_H_HI(24, 23) \
	ADD  $4, R0, R6 \
	MOVD R1, R7 \
	ADD  $128, R1, R8 \
	VEOR V27.B16, V27.B16, V27.B16 \
	Q6_K_HALF(dot16, 20, 21) \
	Q6_K_HALF(dot16, 22, 23) \
	SCVTF4(27, 27) \
	FMOVS (R0), F18 \
	SCALE(208, R1, R10, F16) \
	FMULS F18, F16, F16 \
	FMLA_E0(16, 27, 28) \
	ADD $292, R0 \
	ADD $210, R1 \
	SUB $1, R2 \
	B   q6kloop \
q6kdone: \
	REDUCE(28, F28) \
	SUB $1, R5 \
	B   q6krow \
q6kend: \
	RET

// In Q6_K_ROWS, V20..V23 hold the 16 int8 scales as int32, four to a
// register; V31, V30 and V29 the masks 0x0f, 0x30 and the offset 32.

// func q6_KRowsNEON(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q6_KRowsNEON(SB), NOSPLIT, $0-48
	Q6_K_ROWS(MUL16)

// func q6_KRowsSDOT(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q6_KRowsSDOT(SB), NOSPLIT, $0-48
	Q6_K_ROWS(SDOT16)
