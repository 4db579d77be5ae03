//go:build !purego

#include "textflag.h"

// PF: the prefetch distance, as in dotq_amd64.s.
#define PF 4096

// AVX2 dot products of the legacy 32-element types (Q4_0, Q5_0 against
// Q8_0 activations; Q4_1, Q5_1 against Q8_1) and of Q5_K against Q8_K,
// after ggml's: nibbles are spread to bytes (bytes_from_nibbles_32), fifth
// bits to whole bytes (bytes_from_bits_32), then multiplied and summed as
// in dotq_amd64.s. Registers: SI activations, DI weights, CX blocks left,
// R8 the binary16 table, Y15 the nibble mask, Y13 sixteen int16 ones.

// bytes_from_bits_32: byte i of the 32-bit word is copied to lanes
// 8i..8i+7, each lane ORed with all bits but its own, so a lane is 0xff
// exactly when its bit is set.
DATA bitsShuf<>+0(SB)/8, $0x0000000000000000
DATA bitsShuf<>+8(SB)/8, $0x0101010101010101
DATA bitsShuf<>+16(SB)/8, $0x0202020202020202
DATA bitsShuf<>+24(SB)/8, $0x0303030303030303
GLOBL bitsShuf<>(SB), RODATA|NOPTR, $32

DATA bitsMask<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL bitsMask<>(SB), RODATA|NOPTR, $8

// SETUP loads the arguments and constants shared by the kernels here;
// the row counter goes to reg.
#define SETUP(reg) \
	MOVQ w+8(FP), DI \
	MOVQ tab+24(FP), R8 \
	MOVQ out+32(FP), DX \
	MOVQ rows+40(FP), reg \
	MOVL $0x0f0f0f0f, AX \
	VMOVD AX, X15 \
	VPBROADCASTD X15, Y15 \
	VPCMPEQW Y13, Y13, Y13 \
	VPSRLW $15, Y13, Y13

// ROW starts a row: the activations from the start, accumulators zero.
#define ROW \
	MOVQ x+0(FP), SI \
	MOVQ nb+16(FP), CX \
	VXORPS Y0, Y0, Y0 \
	VXORPS X1, X1, X1

// NIBBLES spreads the 16 bytes at off(DI) into Y2: low nibbles in the low
// lane (elements 0..15), high nibbles in the high lane (16..31).
#define NIBBLES(off) \
	VMOVDQU off(DI), X2 \
	VPSRLW $4, X2, X3 \
	VINSERTI128 $1, X3, Y2, Y2 \
	VPAND Y15, Y2, Y2

// BITS sets Y4 to 0xff in byte i where bit i of the word at off(DI) is set.
#define BITS(off) \
	VPBROADCASTD off(DI), Y4 \
	VPSHUFB bitsShuf<>(SB), Y4, Y4 \
	VPOR Y14, Y4, Y4 \
	VPCMPEQB Y12, Y4, Y4

// SIGNED_SUM sets Y5 to the eight int32 pair sums of signed Y2 × signed
// bytes at off(SI), as floats.
#define SIGNED_SUM(off) \
	VMOVDQU off(SI), Y3 \
	VPSIGNB Y2, Y2, Y6 \
	VPSIGNB Y2, Y3, Y7 \
	VPMADDUBSW Y7, Y6, Y5 \
	VPMADDWD Y13, Y5, Y5 \
	VCVTDQ2PS Y5, Y5

// UNSIGNED_SUM: the same with Y2 unsigned.
#define UNSIGNED_SUM(off) \
	VPMADDUBSW off(SI), Y2, Y5 \
	VPMADDWD Y13, Y5, Y5 \
	VCVTDQ2PS Y5, Y5

// SCALE2 broadcasts tab[w.d]*tab[x.d] (binary16 at woff(DI), xoff(SI)) to Y6.
#define SCALE2(woff, xoff) \
	MOVWLZX woff(DI), AX \
	MOVWLZX xoff(SI), R9 \
	VMOVSS (R8)(AX*4), X6 \
	VMULSS (R8)(R9*4), X6, X6 \
	VBROADCASTSS X6, Y6

// MINTERM adds tab[w.m]*tab[x.s] to X1 (Q4_1, Q5_1).
#define MINTERM \
	MOVWLZX 2(DI), AX \
	MOVWLZX 2(SI), R9 \
	VMOVSS (R8)(AX*4), X7 \
	VMULSS (R8)(R9*4), X7, X7 \
	VADDSS X7, X1, X1

// STORE writes the row's sum (Y0 and the scalar X1) to out and moves on.
#define STORE \
	VEXTRACTF128 $1, Y0, X2 \
	VADDPS X2, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
	VADDSS X1, X0, X0 \
	VMOVSS X0, (DX) \
	ADDQ $4, DX

// func q4_0RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q4_0RowsAVX2(SB), NOSPLIT, $0-48
	SETUP(R10)
	MOVL $0x08080808, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
q40row:
	TESTQ R10, R10
	JZ q40end
	ROW
q40loop:
	TESTQ CX, CX
	JZ q40done
	PREFETCHT0 PF(DI)
	NIBBLES(2)
	VPSUBB Y14, Y2, Y2
	SIGNED_SUM(2)
	SCALE2(0, 0)
	VFMADD231PS Y5, Y6, Y0
	ADDQ $34, SI
	ADDQ $18, DI
	DECQ CX
	JMP q40loop
q40done:
	STORE
	DECQ R10
	JMP q40row
q40end:
	VZEROUPPER
	RET

// func q4_1RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q4_1RowsAVX2(SB), NOSPLIT, $0-48
	SETUP(R10)
q41row:
	TESTQ R10, R10
	JZ q41end
	ROW
q41loop:
	TESTQ CX, CX
	JZ q41done
	PREFETCHT0 PF(DI)
	NIBBLES(4)
	UNSIGNED_SUM(4)
	SCALE2(0, 0)
	VFMADD231PS Y5, Y6, Y0
	MINTERM
	ADDQ $36, SI
	ADDQ $20, DI
	DECQ CX
	JMP q41loop
q41done:
	STORE
	DECQ R10
	JMP q41row
q41end:
	VZEROUPPER
	RET

// func q5_0RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q5_0RowsAVX2(SB), NOSPLIT, $0-48
	SETUP(R10)
	VPBROADCASTQ bitsMask<>(SB), Y14
	VPCMPEQB Y12, Y12, Y12 // all ones
	MOVL $0xf0f0f0f0, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
q50row:
	TESTQ R10, R10
	JZ q50end
	ROW
q50loop:
	TESTQ CX, CX
	JZ q50done
	PREFETCHT0 PF(DI)
	NIBBLES(6)
	BITS(2)
	VPANDN Y11, Y4, Y4 // 0xf0 where the fifth bit is clear: q-16 < 0
	VPOR Y4, Y2, Y2
	SIGNED_SUM(2)
	SCALE2(0, 0)
	VFMADD231PS Y5, Y6, Y0
	ADDQ $34, SI
	ADDQ $22, DI
	DECQ CX
	JMP q50loop
q50done:
	STORE
	DECQ R10
	JMP q50row
q50end:
	VZEROUPPER
	RET

// func q5_1RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q5_1RowsAVX2(SB), NOSPLIT, $0-48
	SETUP(R10)
	VPBROADCASTQ bitsMask<>(SB), Y14
	VPCMPEQB Y12, Y12, Y12
	MOVL $0x10101010, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
q51row:
	TESTQ R10, R10
	JZ q51end
	ROW
q51loop:
	TESTQ CX, CX
	JZ q51done
	PREFETCHT0 PF(DI)
	NIBBLES(8)
	BITS(4)
	VPAND Y11, Y4, Y4 // 0x10 where the fifth bit is set
	VPOR Y4, Y2, Y2
	UNSIGNED_SUM(4)
	SCALE2(0, 0)
	VFMADD231PS Y5, Y6, Y0
	MINTERM
	ADDQ $36, SI
	ADDQ $24, DI
	DECQ CX
	JMP q51loop
q51done:
	STORE
	DECQ R10
	JMP q51row
q51end:
	VZEROUPPER
	RET

// Q5_K (176-byte blocks: d, dmin, 12 scale bytes, qh 32, qs 128) × Q8_K:
// as Q4_K in dotq_amd64.s, each nibble ORed with its fifth bit (bit 2c
// of qh for the low nibbles of quarter c, 2c+1 for the high) moved to 0x10.

// Q5_K_64: quarter c: nibbles at qoff(DI), activations xlo, xhi, scale
// words sa, sb; FIFTH_LO/HI shift qh (Y8) so the bit lands on bit 4.
#define Q5_K_64(qoff, xlo, xhi, sa, sb, shlo, nlo, shhi, nhi) \
	VMOVDQU    qoff(DI), Y9 \
	VPAND      Y9, Y15, Y10 \
	VPSRLW     $4, Y9, Y11 \
	VPAND      Y11, Y15, Y11 \
	shlo       $nlo, Y8, Y12 \
	VPAND      Y12, Y14, Y12 \
	VPOR       Y12, Y10, Y10 \
	shhi       $nhi, Y8, Y12 \
	VPAND      Y12, Y14, Y12 \
	VPOR       Y12, Y11, Y11 \
	VPMADDUBSW xlo(SI), Y10, Y12 \
	VPMADDUBSW xhi(SI), Y11, Y10 \
	VPBROADCASTW sa(SP), Y11 \
	VPMADDWD   Y11, Y12, Y12 \
	VPBROADCASTW sb(SP), Y11 \
	VPMADDWD   Y11, Y10, Y10 \
	VPADDD     Y12, Y2, Y2 \
	VPADDD     Y10, Y2, Y2

// func q5_KRowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q5_KRowsAVX2(SB), NOSPLIT, $16-48
	SETUP(BX)
	MOVL $0x10101010, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
q5krow:
	TESTQ BX, BX
	JZ q5kend
	ROW
q5kloop:
	TESTQ CX, CX
	JZ q5kdone
	PREFETCHT0 PF(DI)
	PREFETCHT0 PF+64(DI)
	PREFETCHT0 PF+128(DI)
	MOVL 4(DI), R9
	MOVL 8(DI), R10
	MOVL 12(DI), R11
	MOVL R11, R12
	SHRL $4, R12
	ANDL $0x0f0f0f0f, R12
	MOVL R10, R13
	SHRL $6, R13
	ANDL $0x03030303, R13
	SHLL $4, R13
	ORL  R13, R12
	MOVL R10, R13
	ANDL $0x3f3f3f3f, R13
	ANDL $0x0f0f0f0f, R11
	MOVL R9, R14
	SHRL $6, R14
	ANDL $0x03030303, R14
	SHLL $4, R14
	ORL  R14, R11
	ANDL $0x3f3f3f3f, R9
	SHLQ $32, R11
	ORQ  R11, R9
	SHLQ $32, R12
	ORQ  R12, R13
	VMOVQ R9, X3
	VPINSRQ $1, R13, X3, X3
	VPMOVZXBW X3, Y4
	VMOVDQU X4, 0(SP)
	VEXTRACTI128 $1, Y4, X5
	VMOVDQU 260(SI), Y6
	VEXTRACTI128 $1, Y6, X7
	VPHADDW X7, X6, X6
	VPMADDWD X6, X5, X5
	VCVTDQ2PS X5, X5
	MOVWLZX 2(DI), AX
	VMOVSS  (R8)(AX*4), X7
	VMULSS  (SI), X7, X7
	VBROADCASTSS X7, X7
	VFMADD231PS X5, X7, X1 // Σ dmin*dy*minimum terms, subtracted at the end

	VMOVDQU 16(DI), Y8 // qh
	VPXOR Y2, Y2, Y2
	Q5_K_64(48, 4, 36, 0, 2, VPSLLW, 4, VPSLLW, 3)
	Q5_K_64(80, 68, 100, 4, 6, VPSLLW, 2, VPSLLW, 1)
	Q5_K_64(112, 132, 164, 8, 10, VPSRLW, 0, VPSRLW, 1)
	Q5_K_64(144, 196, 228, 12, 14, VPSRLW, 2, VPSRLW, 3)
	VCVTDQ2PS Y2, Y2
	MOVWLZX 0(DI), AX
	VMOVSS  (R8)(AX*4), X7
	VMULSS  (SI), X7, X7
	VBROADCASTSS X7, Y7
	VFMADD231PS Y2, Y7, Y0

	ADDQ $292, SI
	ADDQ $176, DI
	DECQ CX
	JMP  q5kloop
q5kdone:
	VEXTRACTF128 $1, Y0, X2
	VADDPS       X2, X0, X0
	VSUBPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, (DX)
	ADDQ         $4, DX
	DECQ         BX
	JMP          q5krow
q5kend:
	VZEROUPPER
	RET
