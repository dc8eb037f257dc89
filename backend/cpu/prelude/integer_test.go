package prelude

import (
	"fmt"
	"math/big"
	"math/bits"
	"math/rand"
	"strings"
	"testing"
)

// intType describes one Metal integer type for the reference model.
type intType struct {
	name   string
	width  uint
	signed bool
}

func (it intType) mask() uint64 { return ^uint64(0) >> (64 - it.width) }

// sval interprets the low width bits of x as the type's value.
func (it intType) sval(x uint64) *big.Int {
	x &= it.mask()
	if it.signed && x>>(it.width-1) != 0 {
		return new(big.Int).Sub(new(big.Int).SetUint64(x), new(big.Int).Lsh(big.NewInt(1), it.width))
	}
	return new(big.Int).SetUint64(x)
}

// wrap returns the bit pattern of v modulo 2^width.
func (it intType) wrap(v *big.Int) uint64 {
	m := new(big.Int).Lsh(big.NewInt(1), it.width)
	r := new(big.Int).Mod(v, m)
	return r.Uint64()
}

func (it intType) limits() (lo, hi *big.Int) {
	if it.signed {
		hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), it.width-1), big.NewInt(1))
		lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), it.width-1))
		return lo, hi
	}
	return big.NewInt(0), new(big.Int).SetUint64(it.mask())
}

// refInt computes Metal's integer functions from their definitions.
func refInt(it intType, fn string, a, b, c, d uint64) uint64 {
	a, b, c = a&it.mask(), b&it.mask(), c&it.mask()
	w := it.width
	x, y := it.sval(a), it.sval(b)
	switch fn {
	case "popcount":
		return uint64(bits.OnesCount64(a))
	case "clz":
		return uint64(bits.LeadingZeros64(a) - int(64-w))
	case "ctz":
		if a == 0 {
			return uint64(w)
		}
		return uint64(bits.TrailingZeros64(a))
	case "reverse_bits":
		return bits.Reverse64(a) >> (64 - w)
	case "rotate":
		s := uint(b % uint64(w))
		return (a<<s | a>>(w-s)) & it.mask()
	case "extract_bits":
		if d == 0 {
			return 0
		}
		v := (a >> c) & (^uint64(0) >> (64 - d))
		if it.signed && d < uint64(w) && v>>(d-1)&1 == 1 {
			v |= ^uint64(0) << d
		}
		return v & it.mask()
	case "insert_bits":
		m := (^uint64(0) >> (64 - d)) << c
		if d == 0 {
			m = 0
		}
		return (a&^m | b<<c&m) & it.mask()
	case "mulhi":
		p := new(big.Int).Mul(x, y)
		return it.wrap(p.Rsh(p, w))
	case "abs_diff":
		return new(big.Int).Abs(new(big.Int).Sub(x, y)).Uint64() & it.mask()
	case "add_sat", "sub_sat":
		r := new(big.Int)
		if fn == "add_sat" {
			r.Add(x, y)
		} else {
			r.Sub(x, y)
		}
		lo, hi := it.limits()
		if r.Cmp(hi) > 0 {
			r = hi
		}
		if r.Cmp(lo) < 0 {
			r = lo
		}
		return it.wrap(r)
	case "hadd", "rhadd":
		r := new(big.Int).Add(x, y)
		if fn == "rhadd" {
			r.Add(r, big.NewInt(1))
		}
		return it.wrap(r.Rsh(r, 1)) // Rsh floors, like an arithmetic shift
	case "abs":
		return it.wrap(new(big.Int).Abs(x))
	case "min", "max", "clamp":
		pick := func(p, q *big.Int, max bool) *big.Int {
			if (p.Cmp(q) < 0) == max {
				return q
			}
			return p
		}
		switch fn {
		case "min":
			return it.wrap(pick(x, y, false))
		case "max":
			return it.wrap(pick(x, y, true))
		}
		return it.wrap(pick(pick(x, y, true), it.sval(c), false))
	case "vec":
		return 1
	}
	panic("unknown " + fn)
}

func TestIntegerFunctions(t *testing.T) {
	types := []intType{{"uchar", 8, false}, {"char", 8, true}, {"ushort", 16, false}, {"short", 16, true},
		{"uint", 32, false}, {"int", 32, true}, {"ulong", 64, false}, {"long", 64, true}}
	fns := []string{"popcount", "clz", "ctz", "reverse_bits", "rotate", "extract_bits", "insert_bits", "mulhi",
		"abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "abs", "min", "max", "clamp", "vec"}
	r := rand.New(rand.NewSource(4))
	type call struct {
		it         intType
		fn         string
		a, b, c, d uint64
	}
	var calls []call
	for _, it := range types {
		edge := []uint64{0, 1, it.mask(), it.mask() >> 1, it.mask()>>1 + 1, 2, 3}
		for _, fn := range fns {
			for i := 0; i < 60; i++ {
				var a, b, c uint64
				if i < len(edge)*len(edge) && i < 49 {
					a, b = edge[i%len(edge)], edge[i/len(edge)%len(edge)]
					c = r.Uint64() & it.mask()
				} else {
					a, b, c = r.Uint64()&it.mask(), r.Uint64()&it.mask(), r.Uint64()&it.mask()
				}
				var d uint64
				if fn == "extract_bits" || fn == "insert_bits" {
					c = uint64(r.Intn(int(it.width)))
					d = uint64(r.Intn(int(it.width) - int(c) + 1))
				}
				if fn == "vec" {
					c = uint64(r.Intn(100))
				}
				calls = append(calls, call{it, fn, a, b, c, d})
			}
		}
	}
	var in strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&in, "%s %s %d %d %d %d\n", c.fn, c.it.name, c.a, c.b, c.c, c.d)
	}
	out := lines(buildRun(t, readTestdata(t, "integer.cpp"), in.String()))
	if len(out) != len(calls) {
		t.Fatalf("got %d lines, want %d", len(out), len(calls))
	}
	bad := 0
	for i, c := range calls {
		var got uint64
		fmt.Sscan(out[i], &got)
		if want := refInt(c.it, c.fn, c.a, c.b, c.c, c.d); got != want && bad < 30 {
			bad++
			t.Errorf("%s<%s>(%#x, %#x, %#x, %d) = %#x, want %#x", c.fn, c.it.name, c.a, c.b, c.c, c.d, got, want)
		}
	}
}
