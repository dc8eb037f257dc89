package conformance

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"metalab/backend"
	"metalab/internal/f16"
)

// A tcase is one kernel run whose outputs are known in advance.
type tcase struct {
	name    string
	file    string
	entry   string
	defines map[string]string
	consts  map[string]backend.Value
	tgs     backend.Dim3
	threads backend.Dim3
	bufs    []backend.Buffer
	want    map[int][]byte // expected outputs by buffer index
	elem    int            // element size for difference reports
	tgmem   int            // static threadgroup memory by Metal's layout rule (declarations in order, each aligned, total rounded up to 16)
}

// dim is a one-dimensional size.
func dim(x int) backend.Dim3 { return backend.Dim3{X: x, Y: 1, Z: 1} }

// in and out are input and read-back buffers bound at index i.
func in(i int, b []byte) backend.Buffer  { return backend.Buffer{Index: i, Data: b} }
func out(i int, b []byte) backend.Buffer { return backend.Buffer{Index: i, Data: b, Output: true} }

// cases lists the conformance cases, each with its Go-computed outputs.
func cases() []tcase {
	var cs []tcase
	cs = append(cs, reduceCase(), simdUintCase(), simdFloatCase(), simdDivergentCase(), simdVoteAllCase(), swizzleCase(),
		halfConvertCase(), halfArithCase(), uintWrapCase(), atomicsCase(), attrsCase(), templateCase("scale_f32x64", 64, false),
		templateCase("scale_i32x32", 32, true), tgParamCase(), raceFixedCase(), polyCase(), helpersCase())
	cs = append(cs, fconstCases()...)
	cs = append(cs, matrixCases()...)
	cs = append(cs, stdlibCases()...)
	cs = append(cs, tensorCases()...)
	return cs
}

// TestConformance runs every case under several fiber orders and compares
// every output byte with the Go computation.
func TestConformance(t *testing.T) {
	b := newBackend(t)
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			src := source(t, c.file, c.entry)
			src.Defines, src.Constants = c.defines, c.consts
			if len(c.want) == 0 {
				t.Fatal("the case compares no output buffer")
			}
			p := compile(t, b, src)
			if p.ThreadgroupMemory() != c.tgmem {
				t.Errorf("static threadgroup memory %d bytes, want %d", p.ThreadgroupMemory(), c.tgmem)
			}
			for _, o := range orders {
				got := run(t, p, backend.Dispatch{Buffers: c.bufs, Threadgroups: c.tgs, Threads: c.threads, Order: o})
				for idx, want := range c.want {
					if d := diff(got[idx], want, c.elem); d != "" {
						t.Errorf("order %s, buffer %d: %s", o, idx, d)
					}
				}
			}
		})
	}
}

func reduceCase() tcase {
	const groups, n = 4, 256
	r := rng(1)
	x := make([]float32, groups*n)
	for i := range x {
		x[i] = r.float()
	}
	sums := make([]float32, groups)
	for g := range sums {
		p := append([]float32(nil), x[g*n:(g+1)*n]...)
		for s := n / 2; s > 0; s >>= 1 {
			for i := 0; i < s; i++ {
				p[i] = p[i] + p[i+s]
			}
		}
		sums[g] = p[0]
	}
	return tcase{name: "reduce", file: "reduce.metal", entry: "tg_reduce", tgs: dim(groups), threads: dim(n),
		bufs: []backend.Buffer{in(0, f32bytes(x)), out(1, make([]byte, 4*groups))},
		want: map[int][]byte{1: f32bytes(sums)}, elem: 4, tgmem: 4 * n}
}

// simdGroups calls f for each simd group of 32 consecutive values.
func simdGroups[T any](v []T, f func(base int, lanes []T)) {
	for base := 0; base < len(v); base += 32 {
		f(base, v[base:base+32])
	}
}

func simdUintCase() tcase {
	const n, nops = 128, 30
	r := rng(2)
	v := make([]uint32, n)
	for i := range v {
		v[i] = r.next()
	}
	v[5] = 0 // the first simd group has a zero: simd_all false, simd_any true there
	v[70] = 0
	want := make([]uint32, n*nops)
	fold := func(l []uint32, init uint32, op func(a, b uint32) uint32) uint32 {
		acc := init
		for _, x := range l {
			acc = op(acc, x)
		}
		return acc
	}
	add := func(a, b uint32) uint32 { return a + b }
	mul := func(a, b uint32) uint32 { return a * b }
	or1 := func(l []uint32) []uint32 {
		o := make([]uint32, len(l))
		for i, x := range l {
			o[i] = x | 1
		}
		return o
	}
	simdGroups(v, func(base int, l []uint32) {
		l1 := or1(l)
		var ballot uint32
		all, anyZero := uint32(1), uint32(0)
		for i, x := range l {
			if x&1 != 0 {
				ballot |= 1 << i
			}
			if x == 0 {
				all, anyZero = 0, 1
			}
		}
		for lane := 0; lane < 32; lane++ {
			o := want[(base+lane)*nops:]
			o[0] = fold(l, 0, add)
			o[1] = fold(l1, 1, mul)
			o[2] = fold(l, math.MaxUint32, func(a, b uint32) uint32 { return min(a, b) })
			o[3] = fold(l, 0, func(a, b uint32) uint32 { return max(a, b) })
			o[4] = fold(l, math.MaxUint32, func(a, b uint32) uint32 { return a & (b | 0xF0000000) })
			o[5] = fold(l, 0, func(a, b uint32) uint32 { return a | (b & 0x0F0F0F0F) })
			o[6] = fold(l, 0, func(a, b uint32) uint32 { return a ^ b })
			o[7] = fold(l[:lane+1], 0, add)
			o[8] = fold(l[:lane], 0, add)
			o[9] = fold(l1[:lane+1], 1, mul)
			o[10] = fold(l1[:lane], 1, mul)
			o[11] = l[(lane*7+3)%32]
			o[12] = l[lane^5]
			o[13] = l[lane]
			if lane >= 3 {
				o[13] = l[lane-3]
			}
			o[14] = l[lane]
			if lane+3 < 32 {
				o[14] = l[lane+3]
			}
			o[15] = l[(lane+32-5)%32]
			o[16] = l[(lane+5)%32]
			o[17] = l[9]
			o[18] = l[0]
			o[19] = all
			o[20] = anyZero
			o[21] = ballot
			o[22] = 0
			if lane == 0 {
				o[22] = 1
			}
			o[23] = 0xFFFFFFFF
			q := lane &^ 3
			o[24] = l[q] + l[q+1] + l[q+2] + l[q+3]
			o[25] = l[q+(lane+1)%4]
			o[26] = l[q+2]
			o[27] = l[q+(lane%4)^3]
			o[28] = l[lane]
			if lane%4 < 3 {
				o[28] = l[lane+1]
			}
			o[29] = max(l[q], l[q+1], l[q+2], l[q+3])
		}
	})
	return tcase{name: "simd_uint", file: "simd.metal", entry: "simd_uint", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, u32bytes(v)), out(1, make([]byte, 4*n*nops))},
		want: map[int][]byte{1: u32bytes(want)}, elem: 4}
}

func simdFloatCase() tcase {
	const n = 64
	r := rng(3)
	v := make([]float32, n)
	for i := range v {
		v[i] = r.float() * 100
	}
	want := make([]float32, 4*n)
	simdGroups(v, func(base int, l []float32) {
		var total float32
		mx := float32(math.Inf(-1))
		for _, x := range l {
			total += x
			mx = max(mx, x)
		}
		var acc float32
		for lane, x := range l {
			w := want[4*(base+lane):]
			w[0] = total
			w[2] = acc
			acc += x
			w[1] = acc
			w[3] = mx
		}
	})
	return tcase{name: "simd_float", file: "simd.metal", entry: "simd_float", tgs: dim(1), threads: dim(n),
		bufs: []backend.Buffer{in(0, f32bytes(v)), out(1, make([]byte, 16*n))},
		want: map[int][]byte{1: f32bytes(want)}, elem: 4}
}

func simdDivergentCase() tcase {
	const n = 64
	r := rng(4)
	v := make([]uint32, n)
	for i := range v {
		v[i] = r.next() >> 8
	}
	want := make([]uint32, 4*n)
	simdGroups(v, func(base int, l []uint32) {
		var mask, sum uint32
		first := -1
		for lane := range l {
			if lane >= 5 && lane%3 != 0 {
				mask |= 1 << lane
				sum += l[lane]
				if first < 0 {
					first = lane
				}
			}
		}
		for lane := range l {
			w := want[4*(base+lane):]
			if mask&(1<<lane) == 0 {
				w[0], w[1], w[2], w[3] = math.MaxUint32, math.MaxUint32, math.MaxUint32, math.MaxUint32
				continue
			}
			w[0], w[1], w[3] = mask, l[first], sum
			if lane == first {
				w[2] = 1
			}
		}
	})
	return tcase{name: "simd_divergent", file: "simd.metal", entry: "simd_divergent", tgs: dim(1), threads: dim(n),
		bufs: []backend.Buffer{in(0, u32bytes(v)), out(1, make([]byte, 16*n))},
		want: map[int][]byte{1: u32bytes(want)}, elem: 4}
}

// simdVoteAllCase runs 48 threads: a full SIMD-group and one of 16 lanes.
func simdVoteAllCase() tcase {
	const n = 48
	want := make([]uint32, n)
	for i := range want {
		full := uint32(0)
		if i < 32 {
			full = 1
		}
		want[i] = full | 1<<1 | 1<<2
		if i%2 == 0 {
			want[i] |= 1<<4 | 1<<5 // half the lanes voted: all() is false
		}
	}
	return tcase{name: "simd_vote_all", file: "simd.metal", entry: "simd_vote_all", tgs: dim(1), threads: dim(n),
		bufs: []backend.Buffer{out(0, make([]byte, 4*n))},
		want: map[int][]byte{0: u32bytes(want)}, elem: 4}
}

func swizzleCase() tcase {
	const n = 32
	r := rng(5)
	v := make([]float32, 4*n)
	for i := range v {
		v[i] = r.float() * 8
	}
	want := make([]float32, 20*n)
	for i := 0; i < n; i++ {
		x, y, z, w := v[4*i], v[4*i+1], v[4*i+2], v[4*i+3]
		o := want[20*i:]
		copy(o[0:4], []float32{w, z, y, x})
		copy(o[4:8], []float32{x, y, z * 2, w * 2})
		// c = (z, w, z+1, w+2); d = (z, y, x, x+y)
		copy(o[8:12], []float32{z + z, w + y, (z + 1) + x, (w + 2) + (x + y)})
		copy(o[12:16], []float32{x * z, y * y, z * x, (x + y) - (x + y)})
		// f = (x-1, y+1, z+1+10, w-1+20), written through swizzles;
		// t = addmul(v.zw, f.xy).
		fx, fy, fz, fw := x-1, y+1, (z+1)+10, (w-1)+20
		copy(o[16:20], []float32{z + float32(fx*2), w + float32(fy*2), fz, fw})
	}
	return tcase{name: "swizzle", file: "swizzle.metal", entry: "swizzle", tgs: dim(1), threads: dim(n),
		bufs: []backend.Buffer{in(0, f32bytes(v)), out(1, make([]byte, 80*n))},
		want: map[int][]byte{1: f32bytes(want)}, elem: 4}
}

func halfConvertCase() tcase {
	special := []float32{
		1, -1, 0, float32(math.Copysign(0, -1)),
		1 + 1.0/2048, 1 + 3.0/2048, 1 + 1.0/1024 + 1.0/2048, // ties: to even down, to even up, up
		65504, 65519.99, 65520, -65520, 1e6, float32(math.Inf(1)), float32(math.Inf(-1)),
		1.0 / (1 << 24), 1.0 / (1 << 25), 3.0 / (1 << 26), 1.0 / (1 << 14), 1.0/(1<<14) - 1.0/(1<<24), -1.0 / (1 << 25),
		1e-8, -1e-8, 0.1, 1.0 / 3, float32(math.NaN()),
	}
	r := rng(6)
	x := append([]float32(nil), special...)
	for len(x) < 64 {
		x = append(x, r.float()*float32(int(r.next()%40000)))
	}
	bits := make([]uint16, len(x))
	back := make([]float32, len(x))
	for i, f := range x {
		if math.IsNaN(float64(f)) {
			x[i] = math.Float32frombits(0x7fc00000)
		}
		bits[i] = f16.FromFloat64(float64(x[i]))
		back[i] = float32(f16.ToFloat64(bits[i]))
		if bits[i]&0x7fff > 0x7c00 {
			back[i] = math.Float32frombits(0x7fc00000 | uint32(bits[i]&0x8000)<<16)
		}
	}
	return tcase{name: "half_convert", file: "half.metal", entry: "half_convert", tgs: dim(1), threads: dim(len(x)),
		bufs: []backend.Buffer{in(0, f32bytes(x)), out(1, make([]byte, 2*len(x))), out(2, make([]byte, 4*len(x)))},
		want: map[int][]byte{1: u16bytes(bits), 2: f32bytes(back)}, elem: 2}
}

func halfArithCase() tcase {
	const n = 256
	r := rng(7)
	a := make([]uint16, n)
	b := make([]uint16, n)
	finite := func() uint16 {
		for {
			h := uint16(r.next())
			if h&0x7c00 != 0x7c00 {
				return h
			}
		}
	}
	for i := range a {
		a[i], b[i] = finite(), finite()
	}
	// Sums that a float32 intermediate would round twice.
	a[0], b[0] = 0x6800, 0x0001 // 2048 + 2^-24
	a[1], b[1] = 0x7bff, 0x5000 // 65504 + 32: rounds to inf
	a[2], b[2] = 0x3c00, 0x8400 // 1 - 2^-14
	want := make([]uint16, 4*n)
	round := func(x float64) float64 { return f16.ToFloat64(f16.FromFloat64(x)) }
	lit := f16.FromFloat64(round(round(0.1)+1) + 3)
	for i := range a {
		x, y := f16.ToFloat64(a[i]), f16.ToFloat64(b[i])
		want[4*i] = f16.FromFloat64(x + y)
		want[4*i+1] = f16.FromFloat64(x * y)
		want[4*i+2] = f16.FromFloat64(round(x*y) + x)
		want[4*i+3] = lit
	}
	return tcase{name: "half_arith", file: "half.metal", entry: "half_arith", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, u16bytes(a)), in(1, u16bytes(b)), out(2, make([]byte, 8*n))},
		want: map[int][]byte{2: u16bytes(want)}, elem: 2}
}

func uintWrapCase() tcase {
	const n = 64
	r := rng(8)
	a := make([]uint32, n)
	b := make([]uint32, n)
	for i := range a {
		a[i], b[i] = r.next(), r.next()
	}
	want := make([]uint32, 4*n)
	for i := range a {
		x, y := a[i], b[i]
		want[4*i] = x*y + 0xFFFFFFF0
		want[4*i+1] = x - y
		want[4*i+2] = (x << (y & 31)) ^ (x >> 3)
		want[4*i+3] = uint32(uint16(uint16(x)*uint16(y) + 65535))
	}
	return tcase{name: "uint_wrap_implicit_buffers", file: "uint_wrap.metal", entry: "uint_wrap", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, u32bytes(a)), in(1, u32bytes(b)), out(2, make([]byte, 16*n))},
		want: map[int][]byte{2: u32bytes(want)}, elem: 4}
}

func atomicsCase() tcase {
	const groups, n = 4, 64
	r := rng(9)
	v := make([]uint32, groups*n)
	for i := range v {
		v[i] = r.next()
	}
	counters := []uint32{0, 0, math.MaxUint32}
	wantCounters := []uint32{groups * n, 0, math.MaxUint32}
	outs := make([]uint32, 2*groups)
	for g := 0; g < groups; g++ {
		for _, x := range v[g*n : (g+1)*n] {
			outs[2*g] += x
			outs[2*g+1] = max(outs[2*g+1], x)
			wantCounters[1] ^= x
			wantCounters[2] = min(wantCounters[2], x)
		}
	}
	return tcase{name: "atomics", file: "atomics.metal", entry: "atomics", tgs: dim(groups), threads: dim(n),
		bufs: []backend.Buffer{out(0, u32bytes(counters)), out(1, make([]byte, 8*groups)), in(2, u32bytes(v))},
		want: map[int][]byte{0: u32bytes(wantCounters), 1: u32bytes(outs)}, elem: 4, tgmem: 16}
}

func matrixCases() []tcase {
	r := rng(10)
	mat := func() []float32 {
		m := make([]float32, 64)
		for i := range m {
			m[i] = float32(int(r.next()%9) - 4)
		}
		return m
	}
	a, b, c := mat(), mat(), mat()
	want := make([]float32, 64)
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			acc := c[8*i+j]
			for k := 0; k < 8; k++ {
				acc += a[8*i+k] * b[8*k+j]
			}
			want[8*i+j] = acc
		}
	}
	return []tcase{
		{name: "simdgroup_matrix", file: "matrix.metal", entry: "matmul8", tgs: dim(1), threads: dim(32),
			bufs: []backend.Buffer{in(0, f32bytes(a)), in(1, f32bytes(b)), in(2, f32bytes(c)), out(3, make([]byte, 256))},
			want: map[int][]byte{3: f32bytes(want)}, elem: 4},
		{name: "simdgroup_matrix_inplace", file: "matrix.metal", entry: "matmul8_inplace", tgs: dim(1), threads: dim(32),
			bufs: []backend.Buffer{in(0, f32bytes(a)), in(1, f32bytes(b)), out(2, f32bytes(c))},
			want: map[int][]byte{2: f32bytes(want)}, elem: 4},
	}
}

func attrsCase() tcase {
	tgs := backend.Dim3{X: 2, Y: 3, Z: 2}
	th := backend.Dim3{X: 8, Y: 4, Z: 3} // 96 threads: a partial last quad count check and 3 simdgroups
	grid := backend.Dim3{X: tgs.X * th.X, Y: tgs.Y * th.Y, Z: tgs.Z * th.Z}
	want := make([]uint32, grid.Count()*24)
	per := th.Count()
	for gz := 0; gz < tgs.Z; gz++ {
		for gy := 0; gy < tgs.Y; gy++ {
			for gx := 0; gx < tgs.X; gx++ {
				for z := 0; z < th.Z; z++ {
					for y := 0; y < th.Y; y++ {
						for x := 0; x < th.X; x++ {
							px, py, pz := gx*th.X+x, gy*th.Y+y, gz*th.Z+z
							lin := (pz*grid.Y+py)*grid.X + px
							idx := (z*th.Y+y)*th.X + x
							o := want[lin*24:]
							vals := []int{px, py, pz, x, y, z, gx, gy, th.X, th.Y, th.Z, tgs.X, tgs.Y, tgs.Z,
								grid.X, grid.Y, grid.Z, idx, idx % 32, idx / 32, (per + 31) / 32, 32, 32,
								idx%4 | (idx/4)<<8 | ((per+3)/4)<<16}
							for i, v := range vals {
								o[i] = uint32(v)
							}
						}
					}
				}
			}
		}
	}
	return tcase{name: "thread_attributes", file: "attrs.metal", entry: "attrs", tgs: tgs, threads: th,
		bufs: []backend.Buffer{out(0, make([]byte, 4*len(want)))},
		want: map[int][]byte{0: u32bytes(want)}, elem: 4}
}

func templateCase(host string, n int, isInt bool) tcase {
	const groups = 2
	r := rng(11)
	if isInt {
		x := make([]uint32, groups*n)
		for i := range x {
			x[i] = r.next()
		}
		want := make([]uint32, len(x))
		for i := range x {
			g, tid := i/n, i%n
			want[i] = uint32(int32(x[g*n+(tid+1)%n])*int32(n) + int32(x[i]))
		}
		return tcase{name: "template_" + host, file: "template.metal", entry: host, tgs: dim(groups), threads: dim(n),
			bufs: []backend.Buffer{in(0, u32bytes(x)), out(1, make([]byte, 4*len(x)))},
			want: map[int][]byte{1: u32bytes(want)}, elem: 4, tgmem: 4 * n}
	}
	x := make([]float32, groups*n)
	for i := range x {
		x[i] = r.float()
	}
	want := make([]float32, len(x))
	for i := range x {
		g, tid := i/n, i%n
		want[i] = x[g*n+(tid+1)%n]*float32(n) + x[i]
	}
	return tcase{name: "template_" + host, file: "template.metal", entry: host, tgs: dim(groups), threads: dim(n),
		bufs: []backend.Buffer{in(0, f32bytes(x)), out(1, make([]byte, 4*len(x)))},
		want: map[int][]byte{1: f32bytes(want)}, elem: 4, tgmem: 4 * n}
}

func tgParamCase() tcase {
	const groups, n = 2, 128
	r := rng(12)
	x := make([]float32, groups*n)
	for i := range x {
		x[i] = r.float()
	}
	want := make([]float32, len(x))
	for i := range x {
		g, tid := i/n, i%n
		want[i] = x[g*n+n-1-tid]
	}
	return tcase{name: "threadgroup_param", file: "tgparam.metal", entry: "tg_param", tgs: dim(groups), threads: dim(n),
		bufs: []backend.Buffer{in(0, f32bytes(x)), out(1, make([]byte, 4*len(x))), {Index: 0, Threadgroup: true, Size: 4 * n}},
		want: map[int][]byte{1: f32bytes(want)}, elem: 4}
}

func raceInputs() ([]uint32, []uint32) {
	const groups, n = 2, 128
	r := rng(13)
	x := make([]uint32, groups*n)
	for i := range x {
		x[i] = r.next() | 1
	}
	want := make([]uint32, len(x))
	for i := range x {
		g, tid := i/n, i%n
		want[i] = x[g*n+(tid+1)%n]
	}
	return x, want
}

func raceFixedCase() tcase {
	x, want := raceInputs()
	return tcase{name: "race_fixed", file: "race.metal", entry: "race_fixed", tgs: dim(2), threads: dim(128),
		bufs: []backend.Buffer{in(0, u32bytes(x)), out(1, make([]byte, 4*len(x)))},
		want: map[int][]byte{1: u32bytes(want)}, elem: 4, tgmem: 512}
}

func fconstCases() []tcase {
	const n = 64
	r := rng(14)
	x := make([]float32, n)
	for i := range x {
		x[i] = r.float() + 2 // nonzero, so v + 0 keeps its bits
	}
	mk := func(name string, defines map[string]string, consts map[string]backend.Value, f func(v float32) float32) tcase {
		want := make([]float32, n)
		for i, v := range x {
			want[i] = f(v)
		}
		return tcase{name: name, file: "fconst.metal", entry: "fconst", defines: defines, consts: consts, tgs: dim(1), threads: dim(n),
			bufs: []backend.Buffer{in(0, f32bytes(x)), out(1, make([]byte, 4*n))},
			want: map[int][]byte{1: f32bytes(want)}, elem: 4}
	}
	return []tcase{
		mk("function_constants_and_defines",
			map[string]string{"BIAS": "0.25f", "DOUBLE_IT": "1"},
			map[string]backend.Value{"scale": {Type: "float", Bits: uint64(math.Float32bits(3))}, "has_bias": {Type: "bool", Bits: 1}},
			func(v float32) float32 { return (v*3+0.25)*2 + 0 }),
		mk("function_constants_unset", nil, nil, func(v float32) float32 { return v + 0 }),
		mk("function_constant_defined_int", nil,
			map[string]backend.Value{"reps": {Type: "int", Bits: 2}},
			func(float32) float32 { return -1 + 2 }),
	}
}

// TestRaceProbe checks that the racy kernel's output changes with the fiber
// order while its fixed twin's does not.
func TestRaceProbe(t *testing.T) {
	b := newBackend(t)
	x, want := raceInputs()
	probe := []backend.Order{{Kind: "in-order"}, {Kind: "reversed"}, {Kind: "shuffle", Seed: 1}, {Kind: "shuffle", Seed: 7}}
	for _, entry := range []string{"racy", "race_fixed"} {
		p := compile(t, b, source(t, "race.metal", entry))
		var outs [][]byte
		for _, o := range probe {
			got := run(t, p, backend.Dispatch{Threadgroups: dim(2), Threads: dim(128), Order: o,
				Buffers: []backend.Buffer{in(0, u32bytes(x)), out(1, make([]byte, 4*len(x)))}})
			outs = append(outs, got[1])
		}
		differ := false
		for _, o := range outs[1:] {
			if string(o) != string(outs[0]) {
				differ = true
			}
		}
		switch entry {
		case "racy":
			if !differ {
				t.Errorf("racy: outputs identical under %v; the race probe would miss it", probe)
			}
		case "race_fixed":
			if differ {
				t.Errorf("race_fixed: outputs differ across fiber orders")
			}
			if d := diff(outs[0], u32bytes(want), 4); d != "" {
				t.Errorf("race_fixed: %s", d)
			}
		}
	}
}

// TestFailures checks that broken kernels come back as typed failures and
// that the backend keeps working afterwards.
func TestFailures(t *testing.T) {
	b := newBackend(t)
	tests := []struct {
		entry   string
		threads int
		bufs    []backend.Buffer
		timeout time.Duration
		want    backend.FailureKind
	}{
		{"crash", 4, []backend.Buffer{out(0, make([]byte, 16))}, 0, backend.BadAccess}, // a write through a null pointer
		{"hang", 4, []backend.Buffer{out(0, make([]byte, 4))}, 2 * time.Second, backend.Timeout},
		{"far", 4, []backend.Buffer{out(0, make([]byte, 16))}, 0, backend.BadAccess},
		{"deadlock", 32, []backend.Buffer{out(0, make([]byte, 128))}, 0, backend.Deadlock},
		{"oob", 8, []backend.Buffer{out(0, make([]byte, 32))}, 0, backend.BadAccess},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			p := compile(t, b, source(t, "failures.metal", tt.entry))
			_, err := p.Run(context.Background(), backend.Dispatch{Buffers: tt.bufs, Threadgroups: dim(1), Threads: dim(tt.threads), Timeout: tt.timeout})
			var f *backend.Failure
			if !errors.As(err, &f) {
				t.Fatalf("Run error = %v, want a *backend.Failure of kind %s", err, tt.want)
			}
			if f.Kind != tt.want {
				t.Errorf("failure kind = %s (%s), want %s\n%s", f.Kind, f.Msg, tt.want, f.Log)
			}
		})
	}
	// A barrier some threads never reach because they returned is not a
	// deadlock: it completes, with a warning.
	p := compile(t, b, source(t, "failures.metal", "divergent"))
	res, err := p.Run(context.Background(), backend.Dispatch{Buffers: []backend.Buffer{out(0, make([]byte, 128))}, Threadgroups: dim(1), Threads: dim(32)})
	if err != nil {
		t.Fatalf("divergent: %v", err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Kind != backend.FindDivergent || res.Findings[0].Access.Line != 48 {
		t.Errorf("divergent: findings %+v, want one divergent-barrier warning at line 48", res.Findings)
	}
	// The backend still runs a good kernel after the failures.
	c := reduceCase()
	p = compile(t, b, source(t, c.file, c.entry))
	got := run(t, p, backend.Dispatch{Buffers: c.bufs, Threadgroups: c.tgs, Threads: c.threads})
	if d := diff(got[1], c.want[1], 4); d != "" {
		t.Errorf("after failures: %s", d)
	}
}

// polyGo is bench.metal's poly in Go float32 arithmetic.
func polyGo(x float32) float32 {
	v, acc := x, float32(0)
	for k := 0; k < 64; k++ {
		acc = acc*v + 0.5
		v = v*0.999 + 0.001
	}
	return acc
}

func polyCase() tcase {
	const n = 256
	r := rng(21)
	x := make([]float32, n)
	want := make([]float32, n)
	for i := range x {
		x[i] = r.float()
		want[i] = polyGo(x[i])
	}
	return tcase{name: "poly", file: "bench.metal", entry: "poly", tgs: dim(2), threads: dim(n / 2),
		bufs: []backend.Buffer{in(0, f32bytes(x)), out(1, make([]byte, 4*n))},
		want: map[int][]byte{1: f32bytes(want)}, elem: 4}
}

func helpersCase() tcase {
	const groups, n = 3, 64
	r := rng(15)
	x := make([]float32, 4*groups*n)
	for i := range x {
		x[i] = r.float()
	}
	want := make([]float32, len(x))
	for g := 0; g < groups; g++ {
		for t := 0; t < n; t++ {
			for c := 0; c < 4; c++ {
				s := x[4*(g*n)+c] + x[4*(g*n+1)+c]
				want[4*(g*n+t)+c] = (s + 4.5) + 30
			}
		}
	}
	return tcase{name: "helper_threadgroup_memory", file: "helpers.metal", entry: "helpers", tgs: dim(groups), threads: dim(n),
		bufs: []backend.Buffer{in(0, f32bytes(x)), out(1, make([]byte, 4*len(x)))},
		want: map[int][]byte{1: f32bytes(want)}, elem: 4,
		tgmem: 64, // kernel h at 0 (6 B), stage_vec v at 16 (32 B), stage_bytes c at 48 (5 B)
	}
}

// TestConformanceChecking runs every case in the checking mode: the bytes
// must be the plain run's and no case may show a race, an uninitialised
// read or a bad access (the conformance kernels are correct Metal).
func TestConformanceChecking(t *testing.T) {
	b := newBackend(t)
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			src := source(t, c.file, c.entry)
			src.Defines, src.Constants = c.defines, c.consts
			src.Check = true
			p := compile(t, b, src)
			for _, o := range []backend.Order{{Kind: "in-order"}, {Kind: "simd-ahead"}} {
				res, err := p.Run(context.Background(), backend.Dispatch{Buffers: c.bufs, Threadgroups: c.tgs, Threads: c.threads, Order: o})
				if err != nil {
					t.Fatalf("order %s: %v", o, err)
				}
				for idx, want := range c.want {
					if d := diff(res.Outputs[idx], want, c.elem); d != "" {
						t.Errorf("order %s, buffer %d: %s", o, idx, d)
					}
				}
				for _, f := range res.Findings {
					if f.Kind.IsWarning() {
						t.Logf("order %s: warning %s: %+v", o, f.Kind, f)
						continue
					}
					t.Errorf("order %s: %s finding %+v", o, f.Kind, f)
				}
			}
		})
	}
}

// TestRaceChecking: the checking mode reports each kernel's race, with
// both threads and both lines, under every order — in-order included,
// whose bytes look right — and nothing, or only the warning it deserves,
// for the look-alikes.
func TestRaceChecking(t *testing.T) {
	b := newBackend(t)
	x, _ := raceInputs()
	for _, tt := range []struct {
		entry string
		want  backend.FindingKind // "" for no finding at all
		note  string
	}{
		{"racy", backend.FindRace, ""},
		{"race_mem_none", backend.FindMemNone, "does not order threadgroup memory"},
		{"race_collective", backend.FindRace, ""},
		{"race_fixed", "", ""},
		{"simd_slices", "", ""},
		{"lockstep", backend.FindLockstep, ""},
	} {
		src := source(t, "race.metal", tt.entry)
		src.Check = true
		p := compile(t, b, src)
		for _, o := range []backend.Order{{Kind: "in-order"}, {Kind: "reversed"}, {Kind: "simd-ahead"}, {Kind: "simd-reversed"}} {
			res, err := p.Run(context.Background(), backend.Dispatch{Threadgroups: dim(2), Threads: dim(128), Order: o,
				Buffers: []backend.Buffer{in(0, u32bytes(x)), out(1, make([]byte, 4*len(x)))}})
			if err != nil {
				t.Fatalf("%s %s: %v", tt.entry, o, err)
			}
			if tt.want == "" {
				if len(res.Findings) > 0 {
					t.Errorf("%s under %s: findings %+v, want none", tt.entry, o, res.Findings)
				}
				continue
			}
			found := false
			for _, f := range res.Findings {
				if f.Kind != tt.want {
					// A race between simd groups comes with lockstep
					// conflicts of the lanes inside each; nothing else.
					if f.Kind != backend.FindLockstep || (tt.want != backend.FindRace && tt.want != backend.FindMemNone) {
						t.Errorf("%s under %s: unexpected %s finding %+v", tt.entry, o, f.Kind, f)
					}
					continue
				}
				found = true
				if f.Other == nil || f.Access.Line == 0 || f.Other.Line == 0 || f.Array == "" {
					t.Errorf("%s %s: report lacks a line or the array: %+v other %+v", tt.entry, o, f, f.Other)
				}
				if (tt.want == backend.FindRace || tt.want == backend.FindMemNone) && f.Access.SIMDGroup == f.Other.SIMDGroup {
					t.Errorf("%s %s: a race within one simd group: %+v other %+v", tt.entry, o, f, f.Other)
				}
				if tt.want == backend.FindLockstep && f.Access.SIMDGroup != f.Other.SIMDGroup {
					t.Errorf("%s %s: lockstep across simd groups: %+v other %+v", tt.entry, o, f, f.Other)
				}
				if !strings.Contains(f.Note, tt.note) {
					t.Errorf("%s %s: note %q lacks %q", tt.entry, o, f.Note, tt.note)
				}
			}
			if !found {
				t.Errorf("%s under %s: no %s reported (findings %+v)", tt.entry, o, tt.want, res.Findings)
			}
		}
	}
}
