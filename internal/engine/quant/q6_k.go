package quant

import "encoding/binary"

// Q6_K: super-blocks of 256 elements, 210 bytes (ggml block_q6_K):
//
//	ql     [128]byte  low 4 bits
//	qh     [64]byte   high 2 bits
//	scales [16]int8   sub-block scales (16 sub-blocks of 16)
//	d      uint16     binary16 super-block scale
//
// For half h (0, 1) and l < 32, with L = ql[64h:], H = qh[32h:]:
// element 128h+l    = low nibble of L[l]    | bits 0-1 of H[l] << 4,
// element 128h+32+l = low nibble of L[32+l] | bits 2-3 of H[l] << 4,
// element 128h+64+l = high nibble of L[l]   | bits 4-5 of H[l] << 4,
// element 128h+96+l = high nibble of L[32+l]| bits 6-7 of H[l] << 4;
// value = d * scales[e/16] * (q - 32).

const q6_KBytes = 128 + 64 + 16 + 2

func init() {
	register(Q6_K, Kernel{BlockSize: qkK, BlockBytes: q6_KBytes, Dequant: dequantQ6_K, Dot: dotQ6_K, Quantize: quantizeQ6_K, ActType: Q8_K, DotQ: dotQ6_KImpl, DotQRows: rowsQ6_KImpl})
}

func dequantQ6_K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	for i := 0; i < nb; i++ {
		b := src[i*q6_KBytes : (i+1)*q6_KBytes]
		d := f16ToF32(binary.LittleEndian.Uint16(b[208:]))
		y := dst[i*qkK : (i+1)*qkK]
		for h := 0; h < 2; h++ {
			ql := b[64*h : 64*h+64]
			qh := b[128+32*h : 128+32*h+32]
			sc := b[192+8*h : 192+8*h+8]
			yy := y[128*h : 128*h+128]
			for l := 0; l < 32; l++ {
				is := l / 16
				q1 := int(ql[l]&0x0f|(qh[l]>>0&3)<<4) - 32
				q2 := int(ql[l+32]&0x0f|(qh[l]>>2&3)<<4) - 32
				q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
				yy[l] = float32(d*float32(int8(sc[is]))) * float32(q1)
				yy[l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
				yy[l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
				yy[l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
			}
		}
	}
}

func dotQ6_K(x []float32, w []byte) float32 {
	nb := len(x) / qkK
	w = w[:nb*q6_KBytes]
	t := f16Table
	var sum float32
	for i := 0; i < nb; i++ {
		b := (*[q6_KBytes]byte)(w[i*q6_KBytes:])
		xb := (*[qkK]float32)(x[i*qkK:])
		var bs float32
		for h := 0; h < 2; h++ {
			ql := (*[64]byte)(b[64*h:])
			qh := (*[32]byte)(b[128+32*h:])
			sc := (*[8]byte)(b[192+8*h:])
			xx := (*[128]float32)(xb[128*h:])
			for g := 0; g < 2; g++ { // the two 16-element scale groups
				lA := (*[16]byte)(ql[16*g:])
				lB := (*[16]byte)(ql[32+16*g:])
				hh := (*[16]byte)(qh[16*g:])
				x1 := (*[16]float32)(xx[16*g:])
				x2 := (*[16]float32)(xx[32+16*g:])
				x3 := (*[16]float32)(xx[64+16*g:])
				x4 := (*[16]float32)(xx[96+16*g:])
				var a1, a2, a3, a4 float32
				for l := 0; l < 16; l++ {
					a, c, h := lA[l], lB[l], hh[l]
					a1 += x1[l] * float32(int8(a&0x0f|h<<4&0x30)-32)
					a2 += x2[l] * float32(int8(c&0x0f|h<<2&0x30)-32)
					a3 += x3[l] * float32(int8(a>>4|h&0x30)-32)
					a4 += x4[l] * float32(int8(c>>4|h>>2&0x30)-32)
				}
				bs += float32(int8(sc[g]))*a1 + float32(int8(sc[g+2]))*a2 +
					float32(int8(sc[g+4]))*a3 + float32(int8(sc[g+6]))*a4
			}
		}
		sum += t[uint16(b[208])|uint16(b[209])<<8] * bs
	}
	return sum
}
