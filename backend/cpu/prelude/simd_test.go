package prelude

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// foldLanes is the emulator's reduction order: a left fold over the lanes
// of mask, lowest lane first, with float32 rounding after each step.
func foldLanes(v []f32, mask uint32, op func(a, b f32) f32) f32 {
	var acc f32
	first := true
	for i := 0; i < 32; i++ {
		if mask>>i&1 == 0 {
			continue
		}
		if first {
			acc = v[i]
		} else {
			acc = op(acc, v[i])
		}
		first = false
	}
	return acc
}

func add32(a, b f32) f32 { return a + b }
func mul32(a, b f32) f32 { return a * b }

func TestSimdFunctions(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	var f, g [64]f32
	var n [64]uint32
	var in strings.Builder
	for i := range f {
		f[i] = f32((r.Float64()*2 - 1) * math.Pow(10, float64(r.Intn(12)-3)))
		g[i] = f32(0.75 + r.Float64()/2)
		n[i] = r.Uint32()
		fmt.Fprintf(&in, "%x %x %x\n", math.Float32bits(f[i]), math.Float32bits(g[i]), n[i])
	}
	out := lines(buildRun(t, readTestdata(t, "simd.cpp"), in.String()))
	if len(out) != 64 {
		t.Fatalf("got %d lines", len(out))
	}
	for tid := 0; tid < 64; tid++ {
		base := tid &^ 31
		lane := tid & 31
		x := f[base : base+32]
		y := g[base : base+32]
		k := n[base : base+32]
		all := ^uint32(0)
		below := func(incl bool) uint32 {
			if incl {
				return uint32(uint64(1)<<(lane+1) - 1)
			}
			return uint32(1)<<lane - 1
		}
		quad := uint32(0xf) << (lane &^ 3)
		fb := math.Float32bits
		var want []uint32
		put := func(v f32) { want = append(want, fb(v)) }
		put(foldLanes(x, all, add32))
		put(foldLanes(x, below(true), add32))
		put(foldLanes(x, below(false), add32)) // lane 0: empty fold is 0
		put(foldLanes(y, all, mul32))
		put(foldLanes(x, all, func(a, b f32) f32 { return f32(math.Min(float64(a), float64(b))) }))
		put(foldLanes(x, all, func(a, b f32) f32 { return f32(math.Max(float64(a), float64(b))) }))
		if lane+1 < 32 {
			put(x[lane+1])
		} else {
			put(x[lane])
		}
		if lane >= 3 {
			put(x[lane-3])
		} else {
			put(x[lane])
		}
		put(x[lane^5])
		put(x[7])
		put(x[(lane+2)&31])
		put(foldLanes(x, quad, add32))
		put(x[lane&^3|2])
		put(foldLanes(x, quad&below(false), add32))
		var sum, and, or, xor uint32
		and = ^uint32(0)
		var ballot uint32
		var maxInt int32 = math.MinInt32
		for i := 0; i < 32; i++ {
			sum += k[i]
			and &= k[i]
			or |= k[i]
			xor ^= k[i]
			if x[i] > 0 {
				ballot |= 1 << i
			}
			if int32(k[i]) > maxInt {
				maxInt = int32(k[i])
			}
		}
		want = append(want, sum, and, or, xor, ballot, 1, 0)
		// half lanes: each value rounds to half, and each addition rounds.
		hs := refHalf(float64(y[0]))
		for i := 1; i < 32; i++ {
			hs = refHalf(halfValue(hs) + halfValue(refHalf(float64(y[i]))))
		}
		want = append(want, uint32(hs))
		put(foldLanes(x, all, add32))
		put(32)
		put(foldLanes(y, below(true), mul32))
		want = append(want, uint32(maxInt))
		if lane+5 < 32 {
			put(x[lane+5])
		} else {
			put(y[lane+5-32])
		}
		if lane >= 3 {
			put(x[lane-3])
		} else {
			put(y[32-3+lane])
		}
		q := lane &^ 3
		put(x[lane^1])
		if lane&3 >= 1 {
			put(x[lane-1])
		} else {
			put(x[lane])
		}
		if lane&3+2 < 4 {
			put(x[lane+2])
		} else {
			put(x[lane])
		}
		put(x[q|(lane+1)&3])
		put(x[q|3])
		var qb uint32
		for i := 0; i < 4; i++ {
			if x[q+i] > 0 {
				qb |= 1 << i
			}
		}
		want = append(want, qb)
		put(foldLanes(x, quad&below(true), add32))
		put(foldLanes(x, quad, func(a, b f32) f32 { return f32(math.Max(float64(a), float64(b))) }))
		if lane < 20 {
			live := uint32(1)<<20 - 1
			put(foldLanes(x, live, add32))
			want = append(want, live)
			put(x[0])
			want = append(want, b2u(lane == 0))
			put(foldLanes(x, live&below(true), add32))
			// Lane 19's neighbour returned: its slot reads as zero.
			if lane+1 < 20 {
				put(x[lane+1])
			} else {
				put(0)
			}
			if lane >= 2 {
				put(x[2])
				want = append(want, b2u(lane == 2))
			}
		}
		var wantStr strings.Builder
		for _, w := range want {
			fmt.Fprintf(&wantStr, "%x ", w)
		}
		if got := out[tid]; strings.TrimSpace(got) != strings.TrimSpace(wantStr.String()) {
			t.Errorf("thread %d:\n got %s\nwant %s", tid, got, wantStr.String())
		}
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
