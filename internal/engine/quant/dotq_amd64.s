//go:build !purego

#include "textflag.h"

// PF is how far ahead of the weights being read the kernels prefetch:
// decode streams every weight once per token from memory, and on the
// machines measured the hardware prefetcher alone left the kernels
// waiting (125M Q8_0 decode: 18.5 ms a token without, 12.2 ms with 4 KiB,
// 13.7 with 2 KiB, 14.1 with 8 KiB).
#define PF 4096

// PFL2 is how far ahead the Q8_0 and Q4_K kernels also ask for the
// weights into the outer caches (PREFETCHT2): more lines in flight than
// the near prefetch alone. On a 2-core VM a 160 MB matrix streamed about
// 1.2x faster in CPU time (BenchmarkDotQRowsBig; Q8_0: 24 KiB; 8 KiB
// helped less, 64 KiB not at all, PREFETCHT1 at 16 KiB less; Q4_K 1.2x).
#define PFL2 24576

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
	MOVWLZX off(DI), R9 \
	VMOVSS (R8)(AX*4), S \
	VMULSS (R8)(R9*4), S, S \
	VMOVDQU off+2(SI), A \
	VMOVDQU off+2(DI), B \
	VPSIGNB B, B, P \
	VPSIGNB B, A, Q \
	VPMADDUBSW Q, P, R \
	VPMADDWD Y15, R, R \
	VCVTDQ2PS R, R

// func q8_0RowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q8_0RowsAVX2(SB), NOSPLIT, $0-48
	MOVQ w+8(FP), DI
	MOVQ tab+24(FP), R8
	MOVQ out+32(FP), DX
	MOVQ rows+40(FP), R10
	VPCMPEQW Y15, Y15, Y15
	VPSRLW $15, Y15, Y15 // sixteen int16 ones

q80row:
	TESTQ R10, R10
	JZ    q80end
	MOVQ  x+0(FP), SI
	MOVQ  nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8

loop2:
	CMPQ CX, $2
	JLT tail
	PREFETCHT0 PF(DI)
	PREFETCHT2 PFL2(DI)
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
	JZ    q80done
	Q8_0_BLOCK(0, X1, Y2, Y3, Y4, Y5, Y6, Y0)
	VBROADCASTSS X1, Y1
	VFMADD231PS Y6, Y1, Y0
	ADDQ $34, DI

q80done:
	VADDPS       Y8, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, (DX)
	ADDQ         $4, DX
	DECQ         R10
	JMP          q80row

q80end:
	VZEROUPPER
	RET

// HSUMD leaves the sum of X's four int32 lanes in its lane 0 (T is
// clobbered). The K-quant kernels reduce a block's integer sums with it
// before rounding anything, so that their float32 steps are their Go
// twins' and the results the same bit for bit.
#define HSUMD(X, T) \
	VPSHUFD $0x4e, X, T \
	VPADDD  T, X, X \
	VPSHUFD $0xb1, X, T \
	VPADDD  T, X, X

// Q4_K weights (144-byte blocks at DI: d, dmin binary16, 12 bytes of
// packed six-bit scales and minimums, 128 bytes of nibbles) × Q8_K
// activations (292-byte blocks at SI: d float32, 256 int8, 16 int16 sums).
// The nibbles are unsigned, so VPMADDUBSW needs no sign trick; the
// minimums meet the activations through the block sums.

// Q4_K_HALF does 64 elements, c = 0..3: nibbles at 16+32c(DI), the low
// ones against 4+64c(SI) with scale word sa(SP), the high ones against
// 36+64c(SI) with scale word sb(SP); int32 sums added to Y2.
#define Q4_K_64(qoff, xlo, xhi, sa, sb) \
	VMOVDQU    qoff(DI), Y9 \
	VPAND      Y9, Y15, Y10 \
	VPSRLW     $4, Y9, Y11 \
	VPAND      Y11, Y15, Y11 \
	VPMADDUBSW xlo(SI), Y10, Y12 \
	VPMADDUBSW xhi(SI), Y11, Y13 \
	VPBROADCASTW sa(SP), Y10 \
	VPBROADCASTW sb(SP), Y11 \
	VPMADDWD   Y10, Y12, Y12 \
	VPMADDWD   Y11, Y13, Y13 \
	VPADDD     Y12, Y2, Y2 \
	VPADDD     Y13, Y2, Y2

// func q4_KRowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q4_KRowsAVX2(SB), NOSPLIT, $16-48
	MOVQ w+8(FP), DI
	MOVQ tab+24(FP), R8
	MOVQ out+32(FP), DX
	MOVQ rows+40(FP), BX
	MOVL   $0x0f0f0f0f, AX
	VMOVD  AX, X15
	VPBROADCASTD X15, Y15 // nibble mask

q4krow:
	TESTQ BX, BX
	JZ    q4kend
	MOVQ  x+0(FP), SI
	MOVQ  nb+16(FP), CX
	VXORPS X0, X0, X0 // the row's sum

q4kloop:
	TESTQ CX, CX
	JZ    q4kdone
	PREFETCHT0 PF(DI)
	PREFETCHT0 PF+64(DI)
	PREFETCHT0 PF+128(DI)
	PREFETCHT2 PFL2(DI)
	PREFETCHT2 PFL2+64(DI)
	PREFETCHT2 PFL2+128(DI)
	// Unpack the scales and minimums as ggml does with utmp[4]:
	// scales in R9 (bytes 0..7), minimums in R13.
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
	ORL  R13, R12         // utmp[3]: minimums 4..7
	MOVL R10, R13
	ANDL $0x3f3f3f3f, R13 // utmp[2]: minimums 0..3
	ANDL $0x0f0f0f0f, R11
	MOVL R9, R14
	SHRL $6, R14
	ANDL $0x03030303, R14
	SHLL $4, R14
	ORL  R14, R11         // utmp[1]: scales 4..7
	ANDL $0x3f3f3f3f, R9  // utmp[0]: scales 0..3
	SHLQ $32, R11
	ORQ  R11, R9
	SHLQ $32, R12
	ORQ  R12, R13
	VMOVQ R9, X3
	VPINSRQ $1, R13, X3, X3
	VPMOVZXBW X3, Y4      // 8 scales, 8 minimums as int16
	VMOVDQU X4, 0(SP)     // the scales, for broadcasting

	// Minimums × block sums of each 32 activations, reduced exactly to
	// ms; X1 = (dmin*dy)*ms, as dotQ4_KGo rounds it.
	VEXTRACTI128 $1, Y4, X5
	VMOVDQU 260(SI), Y6
	VEXTRACTI128 $1, Y6, X7
	VPHADDW X7, X6, X6
	VPMADDWD X6, X5, X5
	HSUMD(X5, X7)
	VCVTDQ2PS X5, X5
	MOVWLZX 2(DI), AX
	VMOVSS  (R8)(AX*4), X7
	VMULSS  (SI), X7, X7
	VMULSS  X5, X7, X1

	VPXOR Y2, Y2, Y2
	Q4_K_64(16, 4, 36, 0, 2)
	Q4_K_64(48, 68, 100, 4, 6)
	Q4_K_64(80, 132, 164, 8, 10)
	Q4_K_64(112, 196, 228, 12, 14)
	// is, exactly; sum += (d*dy)*is - X1.
	VEXTRACTI128 $1, Y2, X3
	VPADDD X3, X2, X2
	HSUMD(X2, X3)
	VCVTDQ2PS X2, X2
	MOVWLZX 0(DI), AX
	VMOVSS  (R8)(AX*4), X7
	VMULSS  (SI), X7, X7
	VMULSS  X2, X7, X7
	VSUBSS  X1, X7, X7
	VADDSS  X7, X0, X0

	ADDQ $292, SI
	ADDQ $144, DI
	DECQ CX
	JMP  q4kloop

q4kdone:
	VMOVSS       X0, (DX)
	ADDQ         $4, DX
	DECQ         BX
	JMP          q4krow

q4kend:
	VZEROUPPER
	RET

// Q6_K weights (210-byte blocks at DI: ql 128, qh 64, 16 int8 scales,
// d binary16) × Q8_K activations. Six-bit quants q in [0, 64) stand for
// q-32: Σ(q-32)*y = Σq*y - 32*Σy, the second from the block sums.

// Q6_K_128 does half h: ql at ql(DI), qh at qh(DI), activations at x(SI),
// scale words s0..s7(SP); int32 sums added to Y2.
#define Q6_K_128(ql, ql2, qh, x0, x1, x2, x3, s0, s1, s2, s3, s4, s5, s6, s7) \
	VMOVDQU ql(DI), Y5 \
	VMOVDQU ql2(DI), Y6 \
	VMOVDQU qh(DI), Y7 \
	VPSLLW  $4, Y7, Y8 \
	VPAND   Y8, Y14, Y8 \
	VPSLLW  $2, Y7, Y9 \
	VPAND   Y9, Y14, Y9 \
	VPAND   Y7, Y14, Y10 \
	VPSRLW  $2, Y7, Y11 \
	VPAND   Y11, Y14, Y11 \
	VPAND   Y5, Y15, Y12 \
	VPOR    Y12, Y8, Y8 \
	VPAND   Y6, Y15, Y12 \
	VPOR    Y12, Y9, Y9 \
	VPSRLW  $4, Y5, Y5 \
	VPAND   Y5, Y15, Y5 \
	VPOR    Y5, Y10, Y10 \
	VPSRLW  $4, Y6, Y6 \
	VPAND   Y6, Y15, Y6 \
	VPOR    Y6, Y11, Y11 \
	VPMADDUBSW x0(SI), Y8, Y8 \
	VPMADDUBSW x1(SI), Y9, Y9 \
	VPMADDUBSW x2(SI), Y10, Y10 \
	VPMADDUBSW x3(SI), Y11, Y11 \
	VPBROADCASTW s0(SP), X12 \
	VPBROADCASTW s1(SP), X13 \
	VINSERTI128 $1, X13, Y12, Y12 \
	VPMADDWD Y12, Y8, Y8 \
	VPBROADCASTW s2(SP), X12 \
	VPBROADCASTW s3(SP), X13 \
	VINSERTI128 $1, X13, Y12, Y12 \
	VPMADDWD Y12, Y9, Y9 \
	VPBROADCASTW s4(SP), X12 \
	VPBROADCASTW s5(SP), X13 \
	VINSERTI128 $1, X13, Y12, Y12 \
	VPMADDWD Y12, Y10, Y10 \
	VPBROADCASTW s6(SP), X12 \
	VPBROADCASTW s7(SP), X13 \
	VINSERTI128 $1, X13, Y12, Y12 \
	VPMADDWD Y12, Y11, Y11 \
	VPADDD Y9, Y8, Y8 \
	VPADDD Y11, Y10, Y10 \
	VPADDD Y10, Y8, Y8 \
	VPADDD Y8, Y2, Y2

// func q6_KRowsAVX2(x, w *byte, nb int, tab *[1 << 16]float32, out *float32, rows int)
TEXT ·q6_KRowsAVX2(SB), NOSPLIT, $32-48
	MOVQ w+8(FP), DI
	MOVQ tab+24(FP), R8
	MOVQ out+32(FP), DX
	MOVQ rows+40(FP), BX
	MOVL   $0x0f0f0f0f, AX
	VMOVD  AX, X15
	VPBROADCASTD X15, Y15 // low-nibble mask
	MOVL   $0x30303030, AX
	VMOVD  AX, X14
	VPBROADCASTD X14, Y14 // bits 4-5

q6krow:
	TESTQ BX, BX
	JZ    q6kend
	MOVQ  x+0(FP), SI
	MOVQ  nb+16(FP), CX
	VXORPS Y0, Y0, Y0

q6kloop:
	TESTQ CX, CX
	JZ    q6kdone
	PREFETCHT0 PF(DI)
	PREFETCHT0 PF+64(DI)
	PREFETCHT0 PF+128(DI)
	PREFETCHT0 PF+192(DI)
	VPMOVSXBW 192(DI), Y3 // 16 scales as int16
	VMOVDQU   Y3, 0(SP)
	// -32 * Σ scale*blocksum
	VPMADDWD  260(SI), Y3, Y2
	VPSLLD    $5, Y2, Y2
	VPXOR     Y4, Y4, Y4
	VPSUBD    Y2, Y4, Y2
	Q6_K_128(0, 32, 128, 4, 36, 68, 100, 0, 2, 4, 6, 8, 10, 12, 14)
	Q6_K_128(64, 96, 160, 132, 164, 196, 228, 16, 18, 20, 22, 24, 26, 28, 30)
	// is, exactly; sum += (d*dy)*is, as dotQ6_KGo rounds it.
	VEXTRACTI128 $1, Y2, X3
	VPADDD X3, X2, X2
	HSUMD(X2, X3)
	VCVTDQ2PS X2, X2
	MOVWLZX 208(DI), AX
	VMOVSS  (R8)(AX*4), X7
	VMULSS  (SI), X7, X7
	VMULSS  X2, X7, X7
	VADDSS  X7, X0, X0
	ADDQ $292, SI
	ADDQ $210, DI
	DECQ CX
	JMP  q6kloop

q6kdone:
	VMOVSS       X0, (DX)
	ADDQ         $4, DX
	DECQ         BX
	JMP          q6krow

q6kend:
	VZEROUPPER
	RET
