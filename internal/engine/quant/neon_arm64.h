// A64 encodings of the NEON instructions Go's assembler has no mnemonic
// for, shared by the arm64 kernels (m, n, d are vector register numbers;
// i a lane).

// FADD and FADDP Vd.4S, Vn.4S, Vm.4S.
#define FADD4(m, n, d) WORD $(0x4E20D400 | (m)<<16 | (n)<<5 | (d))
#define FADDP4(m, n, d) WORD $(0x6E20D400 | (m)<<16 | (n)<<5 | (d))
// FMLA Vd.4S, Vn.4S, Vm.4S (fused).
#define FMLA4(m, n, d) WORD $(0x4E20CC00 | (m)<<16 | (n)<<5 | (d))
// FMLS Vd.4S, Vn.4S, Vm.4S (fused: Vd − Vn·Vm).
#define FMLS4(m, n, d) WORD $(0x4EA0CC00 | (m)<<16 | (n)<<5 | (d))
// FMUL Vd.4S, Vn.4S, Vm.S[0].
#define FMUL_E0(m, n, d) WORD $(0x4F809000 | (m)<<16 | (n)<<5 | (d))
// FCVTL Vd.4S, Vn.4H and FCVTL2 Vd.4S, Vn.8H: binary16 to float32.
#define FCVTL_LO(n, d) WORD $(0x0E217800 | (n)<<5 | (d))
#define FCVTL_HI(n, d) WORD $(0x4E217800 | (n)<<5 | (d))
// SCVTF Vd.4S, Vn.4S.
#define SCVTF4(n, d) WORD $(0x4E21D800 | (n)<<5 | (d))
// MOVI Vd.2D, #0.
#define ZERO(d) WORD $(0x6F00E400 | (d))
// SDOT Vd.4S, Vn.16B, Vm.16B (ARMv8.2 dot product): each int32 lane of
// Vd plus the four products of its bytes.
#define SDOT(m, n, d) WORD $(0x4E809400 | (m)<<16 | (n)<<5 | (d))
// SDOT Vd.4S, Vn.16B, Vm.4B[i]: each int32 lane of Vd plus the products
// of its four bytes with the four bytes of lane i of Vm.
#define SDOT_E(m, i, n, d) WORD $(0x4F80E000 | ((i)&1)<<21 | ((i)>>1)<<11 | (m)<<16 | (n)<<5 | (d))
// SADDLP Vd.4S, Vn.8H (pairwise widening add).
#define SADDLP(n, d) WORD $(0x4E602800 | (n)<<5 | (d))
// MLA Vd.4S, Vn.4S, Vm.4S and MLA Vd.4S, Vn.4S, Vm.S[i] (int32).
#define MLA4(m, n, d) WORD $(0x4EA09400 | (m)<<16 | (n)<<5 | (d))
#define MLA_E(m, i, n, d) WORD $(0x6F800000 | ((i)&1)<<21 | ((i)>>1)<<11 | (m)<<16 | (n)<<5 | (d))
