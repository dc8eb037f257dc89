// Package f16 converts between float64 and the 16-bit floating-point
// formats of Metal, half (IEEE binary16) and bfloat (the top half of a
// float32), so that spec generation, reference kernels and tests round
// the same way the GPU does: to nearest, ties to even, in one step.
package f16

import "math"

// format describes a binary floating-point format with an implicit
// leading bit.
type format struct {
	mant int // stored mantissa bits
	emin int // exponent of the smallest normal
	emax int // exponent of the largest finite value
}

var (
	half  = format{mant: 10, emin: -14, emax: 15}
	bfl16 = format{mant: 7, emin: -126, emax: 127}
)

// round converts v to f's bits (sign in bit 15) with round-to-nearest-even,
// overflowing to infinity; NaN becomes the quiet NaN with v's sign.
func (f format) round(v float64) uint16 {
	var sign uint16
	if math.Signbit(v) {
		sign = 0x8000
	}
	expShift := uint(f.mant)
	inf := uint16(f.emax-f.emin+2) << expShift // all-ones exponent
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return sign | inf | 1<<(expShift-1)
	case math.IsInf(v, 0):
		return sign | inf
	case a == 0:
		return sign
	}
	e := math.Ilogb(a)
	if e < f.emin {
		// Subnormal: the scaled value is exact in float64 and RoundToEven
		// rounds it once; a carry to 1<<mant is the smallest normal.
		return sign | uint16(math.RoundToEven(math.Ldexp(a, f.mant-f.emin)))
	}
	// r is in [1<<mant, 1<<(mant+1)]; the top means the mantissa carried
	// into the exponent.
	r := uint16(math.RoundToEven(math.Ldexp(a, f.mant-e)))
	if r == 1<<(expShift+1) {
		r >>= 1
		e++
	}
	if e > f.emax {
		return sign | inf
	}
	return sign | uint16(e-f.emin+1)<<expShift | r&(1<<expShift-1)
}

// widen converts f's bits h to a float64, exactly.
func (f format) widen(h uint16) float64 {
	expShift := uint(f.mant)
	emask := uint16(f.emax - f.emin + 2) // all-ones exponent
	e := int(h>>expShift) & int(emask)
	m := float64(h & (1<<expShift - 1))
	var v float64
	switch e {
	case 0:
		v = math.Ldexp(m, f.emin-f.mant)
	case int(emask):
		if m != 0 {
			return math.NaN()
		}
		v = math.Inf(1)
	default:
		v = math.Ldexp(float64(int(1)<<f.mant)+m, e+f.emin-1-f.mant)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

// FromFloat64 returns the half bits nearest v, ties to even. Values from
// 65520 up become infinity; NaN becomes a quiet NaN.
func FromFloat64(v float64) uint16 { return half.round(v) }

// ToFloat64 returns the value of half bits h exactly.
func ToFloat64(h uint16) float64 { return half.widen(h) }

// BFloatFromFloat64 returns the bfloat bits nearest v, ties to even,
// rounding once from v (not through float32, which would round twice).
func BFloatFromFloat64(v float64) uint16 { return bfl16.round(v) }

// BFloatToFloat64 returns the value of bfloat bits h exactly.
func BFloatToFloat64(h uint16) float64 { return bfl16.widen(h) }
