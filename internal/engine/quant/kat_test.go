package quant

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// Known-answer tests: blocks assembled byte by byte, with the expected
// values worked out by hand from the layouts in each file's comment.

// katCase is one hand-built block and its decoded values: every element
// is def(i) except those listed in special.
type katCase struct {
	typ     Type
	block   []byte
	def     func(i int) float32
	special map[int]float32
}

func h16(b []byte, off int, h uint16) { binary.LittleEndian.PutUint16(b[off:], h) }

const (
	half1    = 0x3c00 // 1.0 in binary16
	halfHalf = 0x3800 // 0.5
	half2    = 0x4000 // 2.0
	halfM2   = 0xc000 // -2.0
)

func katCases() map[string]katCase {
	cs := map[string]katCase{}

	b := make([]byte, 34)
	h16(b, 0, halfHalf)
	b[2], b[3], b[33] = 2, 0xfd, 127 // 2, -3, 127
	cs["Q8_0"] = katCase{Q8_0, b, func(int) float32 { return 0 }, map[int]float32{0: 1, 1: -1.5, 31: 63.5}}

	b = make([]byte, 18)
	h16(b, 0, half2)
	for j := 2; j < 18; j++ {
		b[j] = 0x88 // 8 - 8 = 0
	}
	b[2], b[3] = 0x9f, 0x08 // elements 0 (15), 16 (9), 1 (8), 17 (0)
	cs["Q4_0"] = katCase{Q4_0, b, func(int) float32 { return 0 }, map[int]float32{0: 14, 16: 2, 17: -16}}

	b = make([]byte, 20)
	h16(b, 0, half1)
	h16(b, 2, halfM2)
	b[4] = 0x3a // element 0: 10, element 16: 3
	cs["Q4_1"] = katCase{Q4_1, b, func(int) float32 { return -2 }, map[int]float32{0: 8, 16: 1}}

	b = make([]byte, 22)
	h16(b, 0, half1)
	binary.LittleEndian.PutUint32(b[2:], 1<<0|1<<17) // fifth bits of elements 0 and 17
	b[6] = 0x21                                      // element 0: 1, element 16: 2
	cs["Q5_0"] = katCase{Q5_0, b, func(int) float32 { return -16 }, map[int]float32{0: 1, 16: -14, 17: 0}}

	b = make([]byte, 24)
	h16(b, 0, halfHalf)
	h16(b, 2, half1)
	binary.LittleEndian.PutUint32(b[4:], 1<<31) // fifth bit of element 31
	b[8+15] = 0xf0                              // element 15: 0, element 31: 15
	cs["Q5_1"] = katCase{Q5_1, b, func(int) float32 { return 1 }, map[int]float32{31: 16.5}}

	// Q4_K: sub-block 0 has scale 2, min 4; sub-block 5 scale 37, min 19
	// (six-bit values whose top bits go to the spare bits of bytes 1 and 5).
	kscales := func(s []byte) {
		s[0], s[4] = 2, 4
		s[9] = 37&15 | (19&15)<<4
		s[1] |= (37 >> 4) << 6
		s[5] |= (19 >> 4) << 6
	}
	b = make([]byte, 144)
	h16(b, 0, half1)
	h16(b, 2, halfHalf)
	kscales(b[4:16])
	b[16+0] = 0x07  // element 0: q 7 in sub-block 0
	b[16+64] = 0xa0 // element 160 (chunk 2, high nibble): q 10 in sub-block 5
	cs["Q4_K"] = katCase{Q4_K, b, func(i int) float32 {
		switch i / 32 {
		case 0:
			return -2 // 2*0 - 0.5*4
		case 5:
			return -9.5 // 37*0 - 0.5*19
		}
		return 0
	}, map[int]float32{0: 12, 160: 360.5}}

	b = make([]byte, 176)
	h16(b, 0, half1)
	h16(b, 2, halfHalf)
	kscales(b[4:16])
	b[16+0] = 1<<0 | 1<<5 // fifth bits: element 0 (bit 0), element 160 (bit 2*2+1)
	b[48+0] = 0x07
	b[48+64] = 0xa0
	cs["Q5_K"] = katCase{Q5_K, b, cs["Q4_K"].def, map[int]float32{0: 2*23 - 2, 160: 37*26 - 9.5, 32: 0}}

	b = make([]byte, 210)
	h16(b, 208, halfHalf)
	b[192+0], b[192+3], b[192+12] = 2, 0xff, 4 // scales 2, -1, 4
	b[0], b[128] = 5, 2                        // element 0: 5 | 2<<4 = 37
	b[72], b[128+40] = 0xf0, 0x30              // element 200: 15 | 3<<4 = 63
	cs["Q6_K"] = katCase{Q6_K, b, func(i int) float32 {
		switch i / 16 {
		case 0:
			return -32 // 0.5*2*(0-32)
		case 3:
			return 16 // 0.5*-1*(0-32)
		case 12:
			return -64 // 0.5*4*(0-32)
		}
		return 0
	}, map[int]float32{0: 5, 200: 62}}

	b = make([]byte, 84)
	b[0], b[9] = 0x21, 0x3f // sub-block 0: scale 1, min 2; sub-block 9: 15, 3
	h16(b, 80, half2)
	h16(b, 82, halfHalf)
	b[16+0] = 0x02  // element 0: q 2
	b[16+48] = 0x03 // element 144 (half 1, shift 0, second 16): q 3
	cs["Q2_K"] = katCase{Q2_K, b, func(i int) float32 {
		switch i / 16 {
		case 0:
			return -1 // 2*1*0 - 0.5*2
		case 9:
			return -1.5
		}
		return 0
	}, map[int]float32{0: 3, 144: 88.5}}

	// Q3_K: scale 0 = 35-32 = 3, scale 13 = 27-32 = -5, the rest 32-32 = 0.
	b = make([]byte, 110)
	h16(b, 108, half1)
	s := b[96:108]
	s[0] = 3                // low bits of scale 0 (35 = 0b10_0011)
	s[5] = 0xb0             // low bits of scale 13 (27 = 0b01_1011), high nibble
	s[8], s[9] = 0xaa, 0x6a // top bits: 2 everywhere, 1 for scale 13
	s[10], s[11] = 0xaa, 0xaa
	b[0] = 0x01     // hmask[0] bit 0: element 0 high bit
	b[16] = 0x40    // hmask[16] bit 6: element 208 high bit
	b[32+0] = 0x01  // element 0 low bits 1
	b[32+48] = 0x20 // element 208: bits 4-5 of qs[48] = 2
	cs["Q3_K"] = katCase{Q3_K, b, func(i int) float32 {
		switch i / 16 {
		case 0:
			return -12 // 3*(0-4)
		case 13:
			return 20 // -5*(0-4)
		}
		return 0
	}, map[int]float32{0: 3, 208: -10}}

	b = make([]byte, 8)
	h16(b, 0, 0x0001) // smallest subnormal, 2^-24
	h16(b, 2, 0xfbff) // -65504
	h16(b, 4, 0x3555) // 0.333251953125
	h16(b, 6, 0x0400) // smallest normal, 2^-14
	cs["F16"] = katCase{F16, b, nil, map[int]float32{0: 1.0 / (1 << 24), 1: -65504, 2: 0.333251953125, 3: 1.0 / (1 << 14)}}

	b = make([]byte, 4)
	h16(b, 0, 0x7c00) // +inf
	h16(b, 2, 0xfc00) // -inf
	cs["F16 infinities"] = katCase{F16, b, nil, map[int]float32{0: float32(math.Inf(1)), 1: float32(math.Inf(-1))}}

	b = make([]byte, 4)
	h16(b, 0, 0x3fc0) // 1.5
	h16(b, 2, 0xc2f7) // -123.5
	cs["BF16"] = katCase{BF16, b, nil, map[int]float32{0: 1.5, 1: -123.5}}

	b = make([]byte, 8)
	binary.LittleEndian.PutUint32(b, math.Float32bits(-0.1))
	binary.LittleEndian.PutUint32(b[4:], 1) // smallest float32 subnormal
	cs["F32"] = katCase{F32, b, nil, map[int]float32{0: -0.1, 1: math.Float32frombits(1)}}
	return cs
}

func TestKnownAnswers(t *testing.T) {
	for name, c := range katCases() {
		t.Run(name, func(t *testing.T) {
			k, err := Lookup(c.typ)
			if err != nil {
				t.Fatal(err)
			}
			n := len(c.block) / k.BlockBytes * k.BlockSize
			want := make([]float32, n)
			for i := range want {
				if v, ok := c.special[i]; ok {
					want[i] = v
				} else {
					want[i] = c.def(i)
				}
			}
			got := make([]float32, n)
			k.Dequant(got, c.block)
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("Dequant element %d = %v, want %v", i, got[i], want[i])
				}
			}
			// Dot with a one-hot x picks out single elements exactly
			// (not with an infinite weight: 0*inf is NaN).
			x := make([]float32, n)
			for i := range want {
				if math.IsInf(float64(want[i]), 0) {
					if got := k.Dot(x, c.block); !math.IsNaN(float64(got)) {
						t.Errorf("Dot(zeros) with an infinite weight = %v, want NaN", got)
					}
					continue
				}
				x[i] = 1
				if got := k.Dot(x, c.block); got != want[i] {
					t.Errorf("Dot(one-hot %d) = %v, want %v", i, got, want[i])
				}
				x[i] = 0
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	sizes := []struct {
		typ        Type
		block, len int
	}{
		{F32, 1, 4}, {F16, 1, 2}, {BF16, 1, 2}, {Q8_0, 32, 34}, {Q4_0, 32, 18},
		{Q4_1, 32, 20}, {Q5_0, 32, 22}, {Q5_1, 32, 24}, {Q2_K, 256, 84},
		{Q3_K, 256, 110}, {Q4_K, 256, 144}, {Q5_K, 256, 176}, {Q6_K, 256, 210},
	}
	for _, s := range sizes {
		t.Run(s.typ.String(), func(t *testing.T) {
			k, err := Lookup(s.typ)
			if err != nil {
				t.Fatal(err)
			}
			if k.BlockSize != s.block || k.BlockBytes != s.len {
				t.Errorf("block %d elements / %d bytes, want %d / %d", k.BlockSize, k.BlockBytes, s.block, s.len)
			}
			if k.Dequant == nil || k.Dot == nil || k.Quantize == nil {
				t.Error("kernel has a nil function")
			}
			if got, err := ParseType(s.typ.String()); err != nil || got != s.typ {
				t.Errorf("ParseType(%q) = %v, %v", s.typ.String(), got, err)
			}
			if got, err := RowBytes(s.typ, 4096); err != nil || got != 4096/s.block*s.len {
				t.Errorf("RowBytes(4096) = %d, %v; want %d", got, err, 4096/s.block*s.len)
			}
		})
	}
	if _, err := Lookup(Q8_K); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Lookup(Q8_K) error = %v, want ErrUnsupported", err)
	}
	if _, err := RowBytes(Q4_K, 100); err == nil {
		t.Error("RowBytes(Q4_K, 100) gave no error for a partial block")
	}
}
