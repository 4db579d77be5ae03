package quant

import (
	"math"
	"testing"
)

// refF16 decodes binary16 the straightforward way, from the definition:
// (-1)^s * 2^(e-15) * (1 + m/1024), or 2^-14 * m/1024 for subnormals.
func refF16(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(s))
	case 0:
		return s * math.Ldexp(m, -24)
	default:
		return s * math.Ldexp(1024+m, e-25)
	}
}

func TestF16AllValues(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got := f16ToF32(h)
		want := refF16(h)
		if math.IsNaN(want) {
			if !math.IsNaN(float64(got)) {
				t.Fatalf("f16ToF32(%#04x) = %v, want NaN", h, got)
			}
		} else if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			t.Fatalf("f16ToF32(%#04x) = %v, want %v", h, got, want)
		}
		if back := f32ToF16(got); back != h {
			t.Fatalf("f32ToF16(f16ToF32(%#04x)) = %#04x, want %#04x", h, back, h)
		}
		if tab := f16Table[h]; math.Float32bits(tab) != math.Float32bits(got) {
			t.Fatalf("f16Table[%#04x] = %v, want %v", h, tab, got)
		}
	}
}

// TestF32ToF16Rounding checks round-to-nearest-even at and around every
// midpoint between consecutive finite binary16 values of both signs, against
// a reference that picks the nearer neighbour in float64.
func TestF32ToF16Rounding(t *testing.T) {
	for i := 0; i < 0x7c00; i++ {
		for _, sign := range []uint16{0, 0x8000} {
			lo, hi := uint16(i)|sign, uint16(i+1)|sign
			a, b := refF16(lo), refF16(hi) // b is infinity for i = 0x7bff
			mid := (a + b) / 2
			if i == 0x7bff {
				mid = math.Copysign(65520, a) // overflow threshold
			}
			m32 := float32(mid)
			if float64(m32) != mid {
				t.Fatalf("midpoint %v of %#04x not exact in float32", mid, lo)
			}
			below := math.Nextafter32(m32, 0)
			above := math.Nextafter32(m32, float32(math.Copysign(math.Inf(1), mid)))
			wantMid := lo
			if i&1 == 1 {
				wantMid = hi
			}
			for _, c := range []struct {
				x    float32
				want uint16
			}{{below, lo}, {m32, wantMid}, {above, hi}} {
				if got := f32ToF16(c.x); got != c.want {
					t.Fatalf("f32ToF16(%g) = %#04x, want %#04x", c.x, got, c.want)
				}
			}
		}
	}
	for _, c := range []struct {
		name string
		x    float32
		want uint16
	}{
		{"tiny rounds to zero", 1e-10, 0},
		{"negative tiny keeps sign", -1e-10, 0x8000},
		{"huge to inf", 1e10, 0x7c00},
		{"inf", float32(math.Inf(-1)), 0xfc00},
		{"f32 subnormal", math.Float32frombits(1), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := f32ToF16(c.x); got != c.want {
				t.Errorf("f32ToF16(%g) = %#04x, want %#04x", c.x, got, c.want)
			}
		})
	}
	if got := f32ToF16(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("f32ToF16(NaN) = %#04x, want a NaN", got)
	}
}

func TestBF16(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := bf16ToF32(h)
		if want := math.Float32frombits(uint32(h) << 16); math.Float32bits(f) != math.Float32bits(want) {
			t.Fatalf("bf16ToF32(%#04x) = %v, want %v", h, f, want)
		}
		if back := f32ToBF16(f); back != h && !(math.IsNaN(float64(f)) && back == h|64) {
			t.Fatalf("f32ToBF16(bf16ToF32(%#04x)) = %#04x", h, back)
		}
	}
	for _, c := range []struct {
		name string
		bits uint32
		want uint16
	}{
		{"below half rounds down", 0x3f807fff, 0x3f80},
		{"tie to even stays", 0x3f808000, 0x3f80},
		{"tie to even up", 0x3f818000, 0x3f82},
		{"above half rounds up", 0x3f808001, 0x3f81},
		{"signalling NaN quietened", 0x7f800001, 0x7fc0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := f32ToBF16(math.Float32frombits(c.bits)); got != c.want {
				t.Errorf("f32ToBF16(%#08x) = %#04x, want %#04x", c.bits, got, c.want)
			}
		})
	}
}
