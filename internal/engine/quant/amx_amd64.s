//go:build !purego

#include "textflag.h"

// The AMX tiles of the Q8_0 16-row groups (q8_0x16.go), for 16 or 8
// tokens. Per block of a group, one TDPBSUD
// (signed bytes by unsigned bytes, into int32) multiplies tile 0, the
// tokens' 32 activation quants (T rows of 32 bytes, ldx apart), by tile
// 1, the block's weights as the layout keeps them (8 rows of 64 bytes:
// row p holds elements 4p..4p+3 of the 16 rows, 4 bytes a row, exactly
// the K/4 × 4N shape the instruction's second operand has), into tile 2,
// zeroed first: row t, lane i is then Σ u·q over the block for token t
// and weight row i. Tile 2 goes to the stack (TILESTORED) and each token's
// row from there through the AVX-512 steps of the VNNI kernels
// (q8_0x16_amd64.s): the correction added (the integer block sum is then
// exact), converted to float, multiplied by d_w·d_x and added by
// VFMADD231PS into the token's accumulator (Z16-Z31), so the results are
// those of the VNNI tiles bit for bit. (Q4_0's groups would need their
// nibbles split into bytes in memory for the instruction to load; done
// per block, that made them slower than the VNNI tiles.)
//
// The tile configuration is loaded at the start of each call and the
// tile state released (TILERELEASE) before it returns, so no tile state
// lives between calls: a goroutine moved to another thread between two
// calls finds nothing missing, and the Go scheduler cannot move it in the
// middle of one (an assembly function has no asynchronous safe point;
// a signal arriving meanwhile has the kernel save and restore the tile
// registers with the rest of the extended state).
//
// Go's assembler has no AMX mnemonics: the instructions are written as
// bytes (VEX encodings, Intel SDM vol. 2), each with its meaning; they
// use fixed registers: AX holds 64, the stride of tiles 1 and 2.
//
// Registers: SI, R15, R12 and R11 the activations of tokens 0, 4, 8 and
// 12 (block k at 40·k; R8 = ldx, R9 = 3·ldx), DI the group's quants, DX
// its scales, R10 the outputs (R13 = 4·ldo, R14 = 12·ldo), BX the groups
// left, CX the blocks left. Stack: the int32 tile at 0(SP), 64 bytes a
// token.

// LDTILECFG (AX): load the tile configuration AX points at.
#define LDTILECFG_AX BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x00
// TILERELEASE: return the tiles to their initial (unused) state.
#define TILERELEASE BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
// TILELOADD tmm0, (SI)(R8*1): the tokens' quants of block k, ldx apart.
#define LOAD_ACT BYTE $0xC4; BYTE $0xA2; BYTE $0x7B; BYTE $0x4B; BYTE $0x04; BYTE $0x06
// TILELOADD tmm1, (DI)(AX*1): the block's 8 rows of weights, 64 bytes apart.
#define LOAD_W8 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x0C; BYTE $0x07
// TILEZERO tmm2.
#define ZERO_C BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xD0
// TDPBSUD tmm2, tmm0, tmm1: tmm2[t][i] += Σ_j int8(tmm0[t][4p+j]) · uint8(tmm1[p][4i+j]).
#define DOT BYTE $0xC4; BYTE $0xE2; BYTE $0x72; BYTE $0x5E; BYTE $0xD0
// TILESTORED (SP)(AX*1), tmm2: the block sums to the stack, 64 bytes a token.
#define STORE_C BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x14; BYTE $0x04

// SCALE adds one token's block into its accumulator: the block sums of
// its tile row at c(SP) plus the correction at corr, as float, times
// d_w (Z8) · d_x (at dx).
#define SCALE(c, corr, dx, zs, zd, acc) \
	VMOVDQU32   c(SP), zs; \
	VPADDD.BCST corr, zs, zs; \
	VCVTDQ2PS   zs, zs; \
	VMULPS.BCST dx, Z8, zd; \
	VFMADD231PS zd, zs, acc

// SCALE8 is SCALE on tokens 0-7, SCALE16 on tokens 0-15.
#define SCALE8 \
	SCALE(0, 32(SI), 36(SI), Z0, Z1, Z16); \
	SCALE(64, 32(SI)(R8*1), 36(SI)(R8*1), Z2, Z3, Z17); \
	SCALE(128, 32(SI)(R8*2), 36(SI)(R8*2), Z4, Z5, Z18); \
	SCALE(192, 32(SI)(R9*1), 36(SI)(R9*1), Z6, Z7, Z19); \
	SCALE(256, 32(R15), 36(R15), Z0, Z1, Z20); \
	SCALE(320, 32(R15)(R8*1), 36(R15)(R8*1), Z2, Z3, Z21); \
	SCALE(384, 32(R15)(R8*2), 36(R15)(R8*2), Z4, Z5, Z22); \
	SCALE(448, 32(R15)(R9*1), 36(R15)(R9*1), Z6, Z7, Z23)

#define SCALE16 \
	SCALE8; \
	SCALE(512, 32(R12), 36(R12), Z0, Z1, Z24); \
	SCALE(576, 32(R12)(R8*1), 36(R12)(R8*1), Z2, Z3, Z25); \
	SCALE(640, 32(R12)(R8*2), 36(R12)(R8*2), Z4, Z5, Z26); \
	SCALE(704, 32(R12)(R9*1), 36(R12)(R9*1), Z6, Z7, Z27); \
	SCALE(768, 32(R11), 36(R11), Z0, Z1, Z28); \
	SCALE(832, 32(R11)(R8*1), 36(R11)(R8*1), Z2, Z3, Z29); \
	SCALE(896, 32(R11)(R8*2), 36(R11)(R8*2), Z4, Z5, Z30); \
	SCALE(960, 32(R11)(R9*1), 36(R11)(R9*1), Z6, Z7, Z31)

// ZERO8 and ZERO16 clear the accumulators of 8 and 16 tokens.
#define ZERO8 \
	VPXORD Z16, Z16, Z16; VPXORD Z17, Z17, Z17; VPXORD Z18, Z18, Z18; VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; VPXORD Z21, Z21, Z21; VPXORD Z22, Z22, Z22; VPXORD Z23, Z23, Z23

#define ZERO16 \
	ZERO8; \
	VPXORD Z24, Z24, Z24; VPXORD Z25, Z25, Z25; VPXORD Z26, Z26, Z26; VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; VPXORD Z29, Z29, Z29; VPXORD Z30, Z30, Z30; VPXORD Z31, Z31, Z31

// STORE8 and STORE16 write the accumulators of 8 and 16 tokens to the
// group's 16 outputs of each token (AX is free then).
#define STORE8 \
	VMOVUPS Z16, (R10); \
	VMOVUPS Z17, (R10)(R13*1); \
	VMOVUPS Z18, (R10)(R13*2); \
	VMOVUPS Z19, (R10)(R14*1); \
	LEAQ    (R10)(R13*4), AX; \
	VMOVUPS Z20, (AX); \
	VMOVUPS Z21, (AX)(R13*1); \
	VMOVUPS Z22, (AX)(R13*2); \
	VMOVUPS Z23, (AX)(R14*1)

#define STORE16 \
	STORE8; \
	LEAQ    (AX)(R13*4), AX; \
	VMOVUPS Z24, (AX); \
	VMOVUPS Z25, (AX)(R13*1); \
	VMOVUPS Z26, (AX)(R13*2); \
	VMOVUPS Z27, (AX)(R14*1); \
	LEAQ    (AX)(R13*4), AX; \
	VMOVUPS Z28, (AX); \
	VMOVUPS Z29, (AX)(R13*1); \
	VMOVUPS Z30, (AX)(R13*2); \
	VMOVUPS Z31, (AX)(R14*1)

// SETUP reads the arguments and loads the tile configuration cfg.
#define SETUP(cfg) \
	LEAQ  cfg(SB), AX; \
	LDTILECFG_AX; \
	MOVQ  w+16(FP), DI; \
	MOVQ  groups+32(FP), BX; \
	MOVQ  out+40(FP), R10; \
	MOVQ  ldx+8(FP), R8; \
	LEAQ  (R8)(R8*2), R9; \
	MOVQ  ldo+48(FP), R13; \
	SHLQ  $2, R13; \
	LEAQ  (R13)(R13*2), R14

// GROUP starts a group: the token pointers at block 0, CX its blocks, DX
// its scales after qsBytes·nb bytes of quants (shift = log2 qsBytes).
#define GROUP(shift) \
	MOVQ x+0(FP), SI; \
	LEAQ (SI)(R8*4), R15; \
	LEAQ (R15)(R8*4), R12; \
	LEAQ (R12)(R8*4), R11; \
	MOVQ nb+24(FP), CX; \
	MOVQ CX, AX; \
	SHLQ $shift, AX; \
	LEAQ (DI)(AX*1), DX; \
	MOVQ $64, AX

// NEXT moves the token pointers to the next block.
#define NEXT \
	ADDQ $40, SI; \
	ADDQ $40, R15; \
	ADDQ $40, R12; \
	ADDQ $40, R11

// The tile configurations (palette 1): tile 0 T rows of 32 bytes (the
// activations), tile 1 8 rows of 64 (the weights), tile 2 T rows of 64
// (the sums); bytes 16-47 are the tiles' row widths, 48-63 their rows.
DATA amxCfg16<>+0(SB)/8, $1
DATA amxCfg16<>+8(SB)/8, $0
DATA amxCfg16<>+16(SB)/8, $0x0000004000400020
DATA amxCfg16<>+24(SB)/8, $0
DATA amxCfg16<>+32(SB)/8, $0
DATA amxCfg16<>+40(SB)/8, $0
DATA amxCfg16<>+48(SB)/8, $0x0000000000100810
DATA amxCfg16<>+56(SB)/8, $0
GLOBL amxCfg16<>(SB), RODATA|NOPTR, $64

DATA amxCfg8<>+0(SB)/8, $1
DATA amxCfg8<>+8(SB)/8, $0
DATA amxCfg8<>+16(SB)/8, $0x0000004000400020
DATA amxCfg8<>+24(SB)/8, $0
DATA amxCfg8<>+32(SB)/8, $0
DATA amxCfg8<>+40(SB)/8, $0
DATA amxCfg8<>+48(SB)/8, $0x0000000000080808
DATA amxCfg8<>+56(SB)/8, $0
GLOBL amxCfg8<>(SB), RODATA|NOPTR, $64

// func q8x16M16(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
TEXT ·q8x16M16(SB), 0, $1024-56
	SETUP(amxCfg16<>)

q8x16M16group:
	TESTQ BX, BX
	JZ    q8x16M16end
	GROUP(9)
	ZERO16

q8x16M16block:
	LOAD_ACT
	LOAD_W8
	ZERO_C
	DOT
	STORE_C
	VCVTPH2PS (DX), Z8
	SCALE16
	NEXT
	ADDQ $512, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  q8x16M16block

	STORE16
	MOVQ DX, DI // the next group starts after this one's scales
	ADDQ $64, R10
	DECQ BX
	JMP  q8x16M16group

q8x16M16end:
	TILERELEASE
	VZEROUPPER
	RET

// func q8x16M8(x *byte, ldx int, w *byte, nb int, groups int, out *float32, ldo int)
TEXT ·q8x16M8(SB), 0, $1024-56
	SETUP(amxCfg8<>)

q8x16M8group:
	TESTQ BX, BX
	JZ    q8x16M8end
	GROUP(9)
	ZERO8

q8x16M8block:
	LOAD_ACT
	LOAD_W8
	ZERO_C
	DOT
	STORE_C
	VCVTPH2PS (DX), Z8
	SCALE8
	NEXT
	ADDQ $512, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  q8x16M8block

	STORE8
	MOVQ DX, DI // the next group starts after this one's scales
	ADDQ $64, R10
	DECQ BX
	JMP  q8x16M8group

q8x16M8end:
	TILERELEASE
	VZEROUPPER
	RET

// func xcr0() uint32
TEXT ·xcr0(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, ret+0(FP)
	RET

// func xinuse() uint32
TEXT ·xinuse(SB), NOSPLIT, $0-4
	MOVL $1, CX
	XGETBV
	MOVL AX, ret+0(FP)
	RET
