package f16

import (
	"math"
	"testing"
)

// conv is one format's pair of conversions with the facts the tests check
// them against, which come from the IEEE layout rather than from the code.
type conv struct {
	name     string
	round    func(float64) uint16
	widen    func(uint16) float64
	maxBits  uint16  // largest finite positive pattern
	overflow float64 // 2^(emax+1): the value infinity stands for when rounding
	mantBits uint
	bias     int
}

var convs = []conv{
	{"half", FromFloat64, ToFloat64, 0x7bff, 65536, 10, 15},
	{"bfloat", BFloatFromFloat64, BFloatToFloat64, 0x7f7f, 0x1p128, 7, 127},
}

// decode is an independent reading of the bit layout, by formula.
func (c conv) decode(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h&0x7fff) >> c.mantBits
	m := float64(h & (1<<c.mantBits - 1))
	frac := m / float64(int(1)<<c.mantBits)
	switch e {
	case 0:
		return sign * frac * math.Pow(2, float64(1-c.bias))
	case int(0x7fff >> c.mantBits):
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * (1 + frac) * math.Pow(2, float64(e-c.bias))
}

// TestWidenAll checks every one of the 65536 patterns against the layout
// formula and that rounding the value gives the pattern back.
func TestWidenAll(t *testing.T) {
	for _, c := range convs {
		for i := range 1 << 16 {
			h := uint16(i)
			got, want := c.widen(h), c.decode(h)
			if math.IsNaN(want) {
				if !math.IsNaN(got) {
					t.Fatalf("%s widen(%#04x) = %v, want NaN", c.name, h, got)
				}
				if r := c.round(got); r&0x7fff>>c.mantBits != 0x7fff>>c.mantBits || r&(1<<c.mantBits-1) == 0 {
					t.Fatalf("%s round(NaN) = %#04x, not a NaN", c.name, r)
				}
				continue
			}
			if got != want || math.Signbit(got) != math.Signbit(want) {
				t.Fatalf("%s widen(%#04x) = %v, want %v", c.name, h, got, want)
			}
			if r := c.round(got); r != h {
				t.Fatalf("%s round(%v) = %#04x, want %#04x", c.name, got, r, h)
			}
		}
	}
}

// TestRoundMidpoints checks, for every pair of adjacent non-negative
// finite patterns (and the largest finite with infinity), that the exact
// midpoint rounds to the even pattern and that the nearest float64 on
// either side of it rounds to that side, for both signs.
func TestRoundMidpoints(t *testing.T) {
	for _, c := range convs {
		for h := uint16(0); h <= c.maxBits; h++ {
			lo := c.widen(h)
			hi := c.overflow
			if h < c.maxBits {
				hi = c.widen(h + 1)
			}
			mid := lo + (hi-lo)/2 // exact: one more bit than the format has
			even := h
			if h&1 == 1 {
				even = h + 1
			}
			for _, tt := range []struct {
				v    float64
				want uint16
			}{
				{mid, even},
				{math.Nextafter(mid, lo), h},
				{math.Nextafter(mid, hi), h + 1},
				{lo, h},
			} {
				if got := c.round(tt.v); got != tt.want {
					t.Fatalf("%s round(%v) = %#04x, want %#04x", c.name, tt.v, got, tt.want)
				}
				if got := c.round(-tt.v); got != tt.want|0x8000 {
					t.Fatalf("%s round(%v) = %#04x, want %#04x", c.name, -tt.v, got, tt.want|0x8000)
				}
			}
		}
	}
}

func TestRoundSpecial(t *testing.T) {
	tests := []struct {
		f    func(float64) uint16
		v    float64
		want uint16
	}{
		{FromFloat64, math.Inf(1), 0x7c00},
		{FromFloat64, math.Inf(-1), 0xfc00},
		{FromFloat64, 1e300, 0x7c00},
		{FromFloat64, 1e-300, 0},
		{FromFloat64, math.Copysign(0, -1), 0x8000},
		{FromFloat64, 65519.99, 0x7bff},
		{FromFloat64, 65520, 0x7c00},
		{FromFloat64, 0x1p-14 - 0x1p-26, 0x0400}, // a subnormal carries into the normal range
		{FromFloat64, math.NaN(), 0x7e00},
		{BFloatFromFloat64, math.NaN(), 0x7fc0},
		{BFloatFromFloat64, math.Inf(-1), 0xff80},
		{BFloatFromFloat64, 3.140625, 0x4049},
		// Just above a tie in bfloat but a tie once rounded to float32:
		// rounding through float32 would give 0x3f80.
		{BFloatFromFloat64, 1 + 0x1p-8 + 0x1p-40, 0x3f81},
	}
	for _, tt := range tests {
		if got := tt.f(tt.v); got != tt.want {
			t.Errorf("round(%v) = %#04x, want %#04x", tt.v, got, tt.want)
		}
	}
}
