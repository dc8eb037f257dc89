package prelude

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

type f32 = float32

// r32 rounds a float64 to float32 (nearest even).
func r32(x float64) f32 { return f32(x) }

// fma32 is the correctly rounded float32 fused multiply-add.
func fma32(a, b, c f32) f32 {
	if math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) || math.IsInf(float64(c), 0) || a != a || b != b || c != c {
		return f32(math.FMA(float64(a), float64(b), float64(c))) // no finite rounding involved
	}
	p := new(big.Float).SetPrec(200).Mul(big.NewFloat(float64(a)).SetPrec(200), big.NewFloat(float64(b)))
	p.Add(p, big.NewFloat(float64(c)))
	r, _ := p.Float32()
	return r
}

// halfOf rounds a float32 result to binary16 and back, as the prelude's
// half functions do with their float result.
func halfOf(x f32) f32 { return f32(halfValue(refHalf(float64(x)))) }

// hin rounds an argument to half, as the test program does.
func hin(x f32) f32 { return halfOf(x) }

// fmin32 and fmax32 follow C's fmin and fmax: a NaN argument loses.
func fmin32(x, y f32) f32 {
	if x != x {
		return y
	}
	if y != y {
		return x
	}
	return f32(math.Min(float64(x), float64(y)))
}

func fmax32(x, y f32) f32 {
	if x != x {
		return y
	}
	if y != y {
		return x
	}
	return f32(math.Max(float64(x), float64(y)))
}

func clamp32(x, lo, hi f32) f32 { return fmin32(fmax32(x, lo), hi) }

// exactMath holds the functions whose float32 result is fully determined:
// the reference is computed from the definition with float32 rounding at
// each step.
var exactMath = map[string]func(x, y, z f32) f32{
	"sqrt":  func(x, _, _ f32) f32 { return r32(math.Sqrt(float64(x))) },
	"rsqrt": func(x, _, _ f32) f32 { return 1 / r32(math.Sqrt(float64(x))) },
	"floor": func(x, _, _ f32) f32 { return f32(math.Floor(float64(x))) },
	"ceil":  func(x, _, _ f32) f32 { return f32(math.Ceil(float64(x))) },
	"round": func(x, _, _ f32) f32 { return f32(math.Round(float64(x))) },
	"rint":  func(x, _, _ f32) f32 { return f32(math.RoundToEven(float64(x))) },
	"trunc": func(x, _, _ f32) f32 { return f32(math.Trunc(float64(x))) },
	"fract": func(x, _, _ f32) f32 {
		if math.IsInf(float64(x), 0) {
			return f32(math.Copysign(0, float64(x)))
		}
		if x != x {
			return x
		}
		return fmin32(x-f32(math.Floor(float64(x))), math.Float32frombits(0x3f7fffff))
	},
	"fabs": func(x, _, _ f32) f32 { return f32(math.Abs(float64(x))) },
	"abs":  func(x, _, _ f32) f32 { return f32(math.Abs(float64(x))) },
	"sign": func(x, _, _ f32) f32 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		case x == 0:
			return x
		}
		return 0
	},
	"median3": func(x, y, z f32) f32 { return fmax32(fmin32(x, y), fmin32(fmax32(x, y), z)) },
	"fmax3":   func(x, y, z f32) f32 { return fmax32(fmax32(x, y), z) },
	"imedian3": func(x, y, z f32) f32 {
		a, b, c := toInt(x), toInt(y), toInt(z)
		s := []int{a, b, c}
		sort.Ints(s)
		return f32(s[1])
	},
	"saturate": func(x, _, _ f32) f32 { return clamp32(x, 0, 1) },
	"fmod":     func(x, y, _ f32) f32 { return f32(math.Mod(float64(x), float64(y))) },
	"fmin":     func(x, y, _ f32) f32 { return fmin32(x, y) },
	"fmax":     func(x, y, _ f32) f32 { return fmax32(x, y) },
	"min":      func(x, y, _ f32) f32 { return fmin32(x, y) },
	"max":      func(x, y, _ f32) f32 { return fmax32(x, y) },
	"copysign": func(x, y, _ f32) f32 { return f32(math.Copysign(float64(x), float64(y))) },
	"step":     func(x, y, _ f32) f32 { return map[bool]f32{true: 0, false: 1}[y < x] },
	"divide":   func(x, y, _ f32) f32 { return x / y },
	"fma":      func(x, y, z f32) f32 { return fma32(x, y, z) },
	"mix":      func(x, y, z f32) f32 { d := y - x; p := d * z; return x + p },
	"clamp":    func(x, y, z f32) f32 { return clamp32(x, y, z) },
	"smoothstep": func(x, y, z f32) f32 {
		t := clamp32((z-x)/(y-x), 0, 1)
		a := t * t
		b := 2 * t
		c := 3 - b
		return a * c
	},
	"ldexp":   func(x, y, _ f32) f32 { return r32(math.Ldexp(float64(x), int(y))) },
	"frexp_m": func(x, _, _ f32) f32 { m, _ := math.Frexp(float64(x)); return f32(m) },
	"frexp_e": func(x, _, _ f32) f32 { _, e := math.Frexp(float64(x)); return f32(e) },
	"modf_f": func(x, _, _ f32) f32 {
		if math.IsInf(float64(x), 0) {
			return f32(math.Copysign(0, float64(x))) // C's modf, unlike Go's
		}
		_, f := math.Modf(float64(x))
		return f32(f)
	},
	"modf_i":      func(x, _, _ f32) f32 { i, _ := math.Modf(float64(x)); return f32(i) },
	"isnan":       func(x, _, _ f32) f32 { return b2f(x != x) },
	"isinf":       func(x, _, _ f32) f32 { return b2f(math.IsInf(float64(x), 0)) },
	"isfinite":    func(x, _, _ f32) f32 { return b2f(!math.IsInf(float64(x), 0) && x == x) },
	"signbit":     func(x, _, _ f32) f32 { return b2f(math.Signbit(float64(x))) },
	"isordered":   func(x, y, _ f32) f32 { return b2f(x == x && y == y) },
	"isunordered": func(x, y, _ f32) f32 { return b2f(x != x || y != y) },
	"logb":        func(x, _, _ f32) f32 { return f32(math.Logb(float64(x))) },
	"ilogb": func(x, _, _ f32) f32 {
		switch {
		case x == 0 || x != x:
			return math.MinInt32
		case math.IsInf(float64(x), 0):
			return math.MaxInt32
		}
		return f32(math.Ilogb(float64(x)))
	},
	"fmax_sv":   func(x, y, _ f32) f32 { return fmax32(x, y) },
	"step_sv":   func(x, y, _ f32) f32 { return map[bool]f32{true: 0, false: 1}[y < x] },
	"clamp_vss": func(x, y, z f32) f32 { return clamp32(x, y, z) },
	"smoothstep_ssv": func(x, y, z f32) f32 {
		t := clamp32((z-x)/(y-x), 0, 1)
		a := t * t
		b := 2 * t
		c := 3 - b
		return a * c
	},
	"dot3": func(x, y, z f32) f32 { a := x * z; b := y * x; c := z * y; s := a + b; return s + c },
	"length3": func(x, y, z f32) f32 {
		a := x * x
		b := y * y
		c := z * z
		s := a + b
		s = s + c
		return r32(math.Sqrt(float64(s)))
	},
	"cross_y":      func(x, y, z f32) f32 { a := z * z; b := x * y; return a - b },
	"precise_sqrt": func(x, _, _ f32) f32 { return r32(math.Sqrt(float64(x))) },
	"normalize_x": func(x, y, z f32) f32 {
		a := x * x
		b := y * y
		c := z * z
		s := a + b
		s = s + c
		return x * (1 / r32(math.Sqrt(float64(s))))
	},
	"h_sqrt":  func(x, _, _ f32) f32 { return halfOf(r32(math.Sqrt(float64(hin(x))))) },
	"h_floor": func(x, _, _ f32) f32 { return halfOf(f32(math.Floor(float64(hin(x))))) },
	"h_fmin":  func(x, y, _ f32) f32 { return fmin32(hin(x), hin(y)) },
	"h_max":   func(x, y, _ f32) f32 { return fmax32(hin(x), hin(y)) },
	"h_fma":   func(x, y, z f32) f32 { return halfOf(fma32(hin(x), hin(y), hin(z))) },
	"h_clamp": func(x, y, z f32) f32 { return clamp32(hin(x), hin(y), hin(z)) },
	"h_mix":   func(x, y, z f32) f32 { d := hin(y) - hin(x); p := d * hin(z); return halfOf(hin(x) + p) },
}

// piExact gives sinpi, cospi and tanpi at integers and half-integers,
// where they are exact.
func piExact(fn string, x f32) f32 {
	n := math.Mod(float64(x), 2) // exact
	switch fn {
	case "sinpi":
		switch n {
		case 0.5, -1.5:
			return 1
		case -0.5, 1.5:
			return -1
		}
		return f32(math.Copysign(0, float64(x)))
	case "cospi":
		switch math.Abs(n) {
		case 0:
			return 1
		case 1:
			return -1
		}
		return 0
	}
	m := math.Mod(float64(x), 1)
	if m == 0 {
		return f32(math.Copysign(0, float64(x)))
	}
	return f32(math.Copysign(math.Inf(1), m))
}

// toInt converts like the test program's int(x); the test only passes
// integers in range.
func toInt(x f32) int { return int(x) }

func b2f(b bool) f32 {
	if b {
		return 1
	}
	return 0
}

// libmMath holds functions whose result comes from the host libm: the
// reference is the float64 result and the check allows 2 ulps.
var libmMath = map[string]func(x, y float64) float64{
	"exp": func(x, _ float64) float64 { return math.Exp(x) }, "exp2": func(x, _ float64) float64 { return math.Exp2(x) },
	"exp10": func(x, _ float64) float64 { return math.Pow(10, x) }, "log": func(x, _ float64) float64 { return math.Log(x) },
	"log2": func(x, _ float64) float64 { return math.Log2(x) }, "log10": func(x, _ float64) float64 { return math.Log10(x) },
	"sin": func(x, _ float64) float64 { return math.Sin(x) }, "cos": func(x, _ float64) float64 { return math.Cos(x) },
	"tan": func(x, _ float64) float64 { return math.Tan(x) }, "asin": func(x, _ float64) float64 { return math.Asin(x) },
	"acos": func(x, _ float64) float64 { return math.Acos(x) }, "atan": func(x, _ float64) float64 { return math.Atan(x) },
	"sinh": func(x, _ float64) float64 { return math.Sinh(x) }, "cosh": func(x, _ float64) float64 { return math.Cosh(x) },
	"tanh": func(x, _ float64) float64 { return math.Tanh(x) }, "pow": func(x, y float64) float64 { return math.Pow(x, y) },
	"powr": func(x, y float64) float64 { return math.Pow(x, y) }, "atan2": func(x, y float64) float64 { return math.Atan2(x, y) },
	"fast_exp": func(x, _ float64) float64 { return math.Exp(x) },
	"sinpi":    func(x, _ float64) float64 { return math.Sin(math.Mod(x, 2) * math.Pi) },
	"cospi":    func(x, _ float64) float64 { return math.Cos(math.Mod(x, 2) * math.Pi) },
	"tanpi":    func(x, _ float64) float64 { return math.Tan(math.Mod(x, 1) * math.Pi) },
	"sincos_s": func(x, _ float64) float64 { return math.Sin(x) }, "sincos_c": func(x, _ float64) float64 { return math.Cos(x) },
}

// ulpDiff is the distance between two float32 values in units in the last
// place (0 for two NaNs).
func ulpDiff(a, b f32) int64 {
	if a != a && b != b {
		return 0
	}
	key := func(x f32) int64 {
		u := int64(math.Float32bits(x))
		if u>>31 != 0 {
			return -(u & 0x7fffffff)
		}
		return u
	}
	d := key(a) - key(b)
	if d < 0 {
		d = -d
	}
	return d
}

func TestMathFunctions(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	specials := []f32{0, f32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 2.5, -2.5, 3.5, 1e-40, f32(math.Inf(1)),
		f32(math.Inf(-1)), f32(math.NaN()), 1e20, -7.25, 0.999999}
	arg := func(i int) f32 {
		if i < len(specials) {
			return specials[i]
		}
		return f32((r.Float64()*2 - 1) * math.Pow(10, float64(r.Intn(5)-2)))
	}
	type call struct {
		fn      string
		x, y, z f32
	}
	var calls []call
	for fn := range exactMath {
		for i := 0; i < 120; i++ {
			c := call{fn, arg(i), arg(r.Intn(len(specials) + 40)), arg(r.Intn(len(specials) + 40))}
			if fn == "ldexp" {
				c.y = f32(r.Intn(300) - 150) // the exponent argument is an int
			}
			if fn == "imedian3" { // int arguments: keep the conversions in range
				c.x, c.y, c.z = f32(r.Intn(200)-100), f32(r.Intn(200)-100), f32(r.Intn(200)-100)
			}
			calls = append(calls, c)
		}
	}
	for _, fn := range []string{"sinpi@", "cospi@", "tanpi@"} {
		for i := -8; i <= 8; i++ {
			calls = append(calls, call{fn, f32(i) / 2, 0, 0})
		}
		calls = append(calls, call{fn, 1e7, 0, 0}, call{fn, -1e7 - 1, 0, 0}, call{fn, f32(math.Copysign(0, -1)), 0, 0})
	}
	for fn := range libmMath {
		for i := 0; i < 120; i++ {
			x, y := f32(r.Float64()*4-2), f32(r.Float64()*4-2)
			if fn == "log" || fn == "log2" || fn == "log10" || fn == "pow" || fn == "powr" {
				x = f32(r.Float64() * 100)
			}
			calls = append(calls, call{fn, x, y, 0})
		}
	}
	for i := 0; i < 120; i++ {
		calls = append(calls, call{"h_exp", f32(r.Float64()*6 - 3), 0, 0})
	}
	for i := 0; i < 50; i++ {
		calls = append(calls, call{"vec", arg(i % 20), f32(r.Float64()), f32(r.Float64() * 3)})
	}
	var in strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&in, "%s %x %x %x\n", c.fn, math.Float32bits(c.x), math.Float32bits(c.y), math.Float32bits(c.z))
	}
	out := lines(buildRun(t, readTestdata(t, "math.cpp"), in.String()))
	if len(out) != len(calls) {
		t.Fatalf("got %d lines, want %d", len(out), len(calls))
	}
	bad := 0
	for i, c := range calls {
		if c.fn == "vec" {
			if out[i] != "1" {
				t.Errorf("vector forms differ from scalar forms for %v", c)
			}
			continue
		}
		var bitsGot uint32
		if _, err := fmt.Sscanf(out[i], "%x", &bitsGot); err != nil {
			t.Fatalf("%s: bad output %q", c.fn, out[i])
		}
		got := math.Float32frombits(bitsGot)
		f, ok := exactMath[c.fn]
		if name, pi := strings.CutSuffix(c.fn, "@"); pi {
			f, ok = func(x, _, _ f32) f32 { return piExact(name, x) }, true
		}
		if ok {
			want := f(c.x, c.y, c.z)
			same := math.Float32bits(got) == math.Float32bits(want) || (got != got && want != want)
			if !same && bad < 30 {
				bad++
				t.Errorf("%s(%g, %g, %g) = %g (%08x), want %g (%08x)", c.fn, c.x, c.y, c.z, got, bitsGot, want, math.Float32bits(want))
			}
			continue
		}
		if c.fn == "h_exp" {
			// The half result of a float libm exp: within one half ulp of
			// the correctly rounded value.
			want := refHalf(math.Exp(float64(hin(c.x))))
			if d := int(refHalf(float64(got))) - int(want); (d > 1 || d < -1) && bad < 30 {
				bad++
				t.Errorf("exp(half(%g)) = %g, want half bits %04x within 1 ulp", c.x, got, want)
			}
			continue
		}
		want := r32(libmMath[c.fn](float64(c.x), float64(c.y)))
		if d := ulpDiff(got, want); d > 2 && bad < 30 {
			bad++
			t.Errorf("%s(%g, %g) = %g, want %g within 2 ulps (off by %d)", c.fn, c.x, c.y, got, want, d)
		}
	}
}
