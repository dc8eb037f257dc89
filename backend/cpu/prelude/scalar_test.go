package prelude

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"strings"
	"testing"
)

// refHalf rounds x to binary16 bits, nearest even, by a method independent
// of the prelude's: math/big rounding for normal results, integer rounding
// of the scaled value for subnormals.
func refHalf(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	switch {
	case math.IsNaN(x):
		return 0x7e00
	case x >= 65520:
		return sign | 0x7c00
	case x < 0x1p-14:
		return sign | uint16(math.RoundToEven(x*0x1p24))
	}
	f := new(big.Float).SetPrec(11).SetMode(big.ToNearestEven).SetFloat64(x)
	mant := new(big.Float)
	exp := f.MantExp(mant)
	m, _ := mant.Float64()
	e := exp - 1 + 15
	if e >= 31 {
		return sign | 0x7c00
	}
	return sign | uint16(e)<<10 | uint16((m*2-1)*1024)
}

// refBfloat rounds x to bfloat16 bits the same way.
func refBfloat(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	switch {
	case math.IsNaN(x):
		return 0x7fc0
	case x >= (2-0x1p-8)*0x1p127:
		return sign | 0x7f80
	case x < 0x1p-126:
		return sign | uint16(math.RoundToEven(x*0x1p133))
	}
	f := new(big.Float).SetPrec(8).SetMode(big.ToNearestEven).SetFloat64(x)
	mant := new(big.Float)
	exp := f.MantExp(mant)
	m, _ := mant.Float64()
	e := exp - 1 + 127
	if e >= 255 {
		return sign | 0x7f80
	}
	return sign | uint16(e)<<7 | uint16((m*2-1)*128)
}

// halfValue decodes binary16 bits.
func halfValue(h uint16) float64 {
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
	}
	return s * math.Ldexp(1+m/1024, e-15)
}

func bfloatValue(b uint16) float64 { return float64(math.Float32frombits(uint32(b) << 16)) }

func isHalfNaN(h uint16) bool   { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }
func isBfloatNaN(b uint16) bool { return b&0x7f80 == 0x7f80 && b&0x7f != 0 }

// sameHalf compares bit patterns, treating any two NaNs as equal.
func sameHalf(a, b uint16) bool { return a == b || (isHalfNaN(a) && isHalfNaN(b)) }

func sameBfloat(a, b uint16) bool { return a == b || (isBfloatNaN(a) && isBfloatNaN(b)) }

// floatInputs returns float32 values around the half range: specials,
// rounding ties, subnormals and random values.
func floatInputs(r *rand.Rand) []float32 {
	in := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		65504, 65519.99, 65520, 65536, -65520, 1e10, 0x1p-24, 0x1p-25, 0x1p-25 * 1.0000001, 3 * 0x1p-26, 5 * 0x1p-26,
		0x1p-14, 0x1p-14 - 0x1p-24, 1 + 0x1p-11, 1 + 3*0x1p-11, 1 + 0x1p-11 + 0x1p-20, 0.1, 1.0 / 3, 2048.5, -2049}
	for i := 0; i < 20000; i++ {
		exp := uint32(127-27+r.Intn(45)) << 23
		mant := uint32(r.Intn(1 << 23))
		if i%4 == 0 {
			mant = mant&^0x1fff | 0x1000 // a tie for binary16
		}
		if i%8 == 1 {
			mant = mant&^0xffff | 0x8000 // a tie for bfloat16
		}
		in = append(in, math.Float32frombits(uint32(r.Intn(2))<<31|exp|mant))
	}
	for i := 0; i < 2000; i++ {
		in = append(in, math.Float32frombits(r.Uint32()))
	}
	return in
}

func TestHalfAndBfloatConversion(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	floats := floatInputs(r)
	doubles := []float64{1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-11, 0x1p-25 + 0x1p-60, 65519.999999, 65520, 1e300, 1e-300,
		math.Copysign(0, -1), 1 + 0x1p-8 + 0x1p-40, 1 + 0x1p-8, (2 - 0x1p-8) * 0x1p127, math.MaxFloat64, 0x1p-133 * 1.5}
	for i := 0; i < 5000; i++ {
		doubles = append(doubles, math.Ldexp(r.Float64()+0.5, r.Intn(50)-30)*float64(1-2*r.Intn(2)))
	}
	var in strings.Builder
	for _, f := range floats {
		fmt.Fprintf(&in, "f %x\n", math.Float32bits(f))
	}
	for _, d := range doubles {
		fmt.Fprintf(&in, "d %x\n", math.Float64bits(d))
	}
	for h := 0; h < 1<<16; h++ {
		fmt.Fprintf(&in, "h2f %x\n", h)
	}
	for _, extra := range flagSets(t) {
		t.Run(strings.Join(append([]string{"flags"}, extra...), " "), func(t *testing.T) {
			checkConversions(t, buildRunFlags(t, extra, readTestdata(t, "scalar.cpp"), in.String()), floats, doubles)
		})
	}
}

func checkConversions(t *testing.T, output string, floats []float32, doubles []float64) {
	out := lines(output)
	if want := len(floats) + len(doubles) + 1<<16; len(out) != want {
		t.Fatalf("got %d output lines, want %d", len(out), want)
	}
	bad := 0
	check := func(what string, x float64, line string) {
		var h, b uint16
		if _, err := fmt.Sscanf(line, "%x %x", &h, &b); err != nil {
			t.Fatalf("bad output %q: %v", line, err)
		}
		if wh := refHalf(x); !sameHalf(h, wh) && bad < 20 {
			bad++
			t.Errorf("half(%s %g) = %04x, want %04x", what, x, h, wh)
		}
		if wb := refBfloat(x); !sameBfloat(b, wb) && bad < 20 {
			bad++
			t.Errorf("bfloat(%s %g) = %04x, want %04x", what, x, b, wb)
		}
	}
	for i, f := range floats {
		check("float", float64(f), out[i])
	}
	for i, d := range doubles {
		check("double", d, out[len(floats)+i])
	}
	for h := 0; h < 1<<16; h++ {
		var fb uint32
		fmt.Sscanf(out[len(floats)+len(doubles)+h], "%x", &fb)
		got := float64(math.Float32frombits(fb))
		want := halfValue(uint16(h))
		if !(got == want && math.Signbit(got) == math.Signbit(want)) && !(math.IsNaN(got) && math.IsNaN(want)) && bad < 20 {
			bad++
			t.Errorf("float(half %04x) = %g, want %g", h, got, want)
		}
		// Every half converts back to itself.
		if rt := refHalf(got); !sameHalf(rt, uint16(h)) && bad < 20 {
			bad++
			t.Errorf("half %04x does not round trip (%04x)", h, rt)
		}
	}
}

func TestHalfArithmeticRoundsEachOperation(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	type pair = halfPair
	var pairs []pair
	special := []uint16{0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3555}
	for _, a := range special {
		for _, b := range special {
			pairs = append(pairs, pair{a, b})
		}
	}
	for i := 0; i < 20000; i++ {
		pairs = append(pairs, pair{uint16(r.Intn(0x7c00)) | uint16(r.Intn(2))<<15, uint16(r.Intn(0x7c00)) | uint16(r.Intn(2))<<15})
	}
	var bpairs []pair
	for i := 0; i < 5000; i++ {
		bpairs = append(bpairs, pair{uint16(r.Intn(0x7f80)) | uint16(r.Intn(2))<<15, uint16(r.Intn(0x7f80)) | uint16(r.Intn(2))<<15})
	}
	ints := []int{0, 1, -1, 3, 7, 100, -2049, 4097, 65504, 70000}
	var in strings.Builder
	for _, p := range pairs {
		fmt.Fprintf(&in, "h %x %x\n", p.a, p.b)
	}
	for _, p := range bpairs {
		fmt.Fprintf(&in, "b %x %x\n", p.a, p.b)
	}
	for i, n := range ints {
		fmt.Fprintf(&in, "hi %x %d\n", pairs[len(special)*len(special)+i].a, n)
	}
	for _, extra := range flagSets(t) {
		t.Run(strings.Join(append([]string{"flags"}, extra...), " "), func(t *testing.T) {
			out := lines(buildRunFlags(t, extra, readTestdata(t, "scalar.cpp"), in.String()))
			checkArithmetic(t, out, pairs, bpairs, ints, len(special))
		})
	}
}

type halfPair struct{ a, b uint16 }

func checkArithmetic(t *testing.T, out []string, pairs, bpairs []halfPair, ints []int, nspecial int) {
	if len(out) != len(pairs)+len(bpairs)+len(ints) {
		t.Fatalf("got %d lines", len(out))
	}
	bad := 0
	for i, p := range pairs {
		var got [7]uint16
		fmt.Sscanf(out[i], "%x %x %x %x %x %x %x", &got[0], &got[1], &got[2], &got[3], &got[4], &got[5], &got[6])
		x, y := halfValue(p.a), halfValue(p.b)
		// float64 holds sums and products of halves exactly, and rounds
		// quotients and square roots with enough spare bits that rounding
		// again to binary16 is correct.
		want := [7]uint16{refHalf(x + y), refHalf(x - y), refHalf(x * y), refHalf(x / y), refHalf(math.Sqrt(x)), refHalf(x + y), refHalf(x / y)}
		for k := range got {
			if !sameHalf(got[k], want[k]) && bad < 20 {
				bad++
				t.Errorf("half op %d on %04x, %04x = %04x, want %04x", k, p.a, p.b, got[k], want[k])
			}
		}
	}
	for i, p := range bpairs {
		var got [4]uint16
		fmt.Sscanf(out[len(pairs)+i], "%x %x %x %x", &got[0], &got[1], &got[2], &got[3])
		x, y := bfloatValue(p.a), bfloatValue(p.b)
		want := [4]uint16{refBfloat(x + y), refBfloat(x - y), refBfloat(x * y), refBfloat(x / y)}
		for k := range got {
			if !sameBfloat(got[k], want[k]) && bad < 20 {
				bad++
				t.Errorf("bfloat op %d on %04x, %04x = %04x, want %04x", k, p.a, p.b, got[k], want[k])
			}
		}
	}
	for i, n := range ints {
		var got [3]uint16
		fmt.Sscanf(out[len(pairs)+len(bpairs)+i], "%x %x %x", &got[0], &got[1], &got[2])
		a := pairs[nspecial*nspecial+i].a
		x := halfValue(a)
		nh := refHalf(float64(n))
		want := [3]uint16{refHalf(x * halfValue(nh)), refHalf(x + halfValue(nh)), nh}
		for k := range got {
			if !sameHalf(got[k], want[k]) {
				t.Errorf("half %04x with int %d: op %d = %04x, want %04x", a, n, k, got[k], want[k])
			}
		}
	}
}

// TestHalfConditional checks the Metal idiom `c ? h : 0`: the result is a
// half (an integer operand converts to half, the half does not convert to
// int), for either operand order and for bfloat; and that the explicit
// conversion int(h) truncates and float += half is float arithmetic.
func TestHalfConditional(t *testing.T) {
	type tc struct {
		h    uint16
		i    int
		cond int
	}
	cases := []tc{
		{0x3e00, 0, 1},     // 1.5
		{0x3e00, 0, 0},     // 0
		{0xc500, 7, 0},     // -5 vs 7
		{0xc500, 7, 1},     // -5
		{0x7bff, 65519, 0}, // 65519 rounds to 65504
		{0x7bff, 65520, 0}, // 65520 overflows to inf
		{0x0001, 2049, 0},  // 2049 rounds to even (2048)
		{0x8000, -3, 1},    // -0 stays -0
	}
	var in strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&in, "sel %x %d %d\n", c.h, c.i, c.cond)
	}
	out := lines(buildRun(t, readTestdata(t, "scalar.cpp"), in.String()))
	if len(out) != len(cases) {
		t.Fatalf("got %d lines, want %d:\n%s", len(out), len(cases), strings.Join(out, "\n"))
	}
	for k, c := range cases {
		var s1, s2, b1 uint16
		var trunc int
		var fbits uint32
		if n, err := fmt.Sscanf(out[k], "%x %x %x %d %x", &s1, &s2, &b1, &trunc, &fbits); n != 5 {
			t.Fatalf("line %q: %v", out[k], err)
		}
		x := halfValue(c.h)
		picked, other := x, float64(c.i)
		if c.cond == 0 {
			picked, other = float64(c.i), x
		}
		if want := refHalf(picked); !sameHalf(s1, want) {
			t.Errorf("%v ? h(%04x) : %d = %04x, want %04x", c.cond != 0, c.h, c.i, s1, want)
		}
		if want := refHalf(other); !sameHalf(s2, want) {
			t.Errorf("%v ? %d : h(%04x) = %04x, want %04x", c.cond != 0, c.i, c.h, s2, want)
		}
		if want := refBfloat(picked); b1 != want {
			t.Errorf("%v ? b(%v) : %d = bfloat %04x, want %04x", c.cond != 0, x, c.i, b1, want)
		}
		if want := int(math.Trunc(x)); trunc != want {
			t.Errorf("int(h(%04x)) = %d, want %d", c.h, trunc, want)
		}
		if want := math.Float32bits(float32(0.5 + x)); fbits != want {
			t.Errorf("0.5f += h(%04x) = %08x, want %08x", c.h, fbits, want)
		}
	}
}
