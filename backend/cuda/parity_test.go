package cuda

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu"
	"metalab/internal/testenv"
)

// A parityCase is one kernel of parity.inc with its dispatch.
type parityCase struct {
	kernel  string
	groups  backend.Dim3
	threads backend.Dim3
	in      []byte
	out     []byte // initial contents of [[buffer(1)]]; nil: the kernel writes [[buffer(0)]]
	tg      int    // bytes at [[threadgroup(0)]], 0 for none
}

func (c parityCase) dispatch() backend.Dispatch {
	d := backend.Dispatch{Threadgroups: c.groups, Threads: c.threads}
	d.Buffers = append(d.Buffers, backend.Buffer{Index: 0, Data: append([]byte(nil), c.in...), Output: true})
	if c.out != nil {
		d.Buffers = append(d.Buffers, backend.Buffer{Index: 1, Data: append([]byte(nil), c.out...), Output: true})
	}
	if c.tg > 0 {
		d.Buffers = append(d.Buffers, backend.Buffer{Index: 0, Threadgroup: true, Size: c.tg})
	}
	return d
}

func f32s(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func le32(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func u32s(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

// mag returns a float with a random sign and a magnitude spread
// log-uniformly over [lo, hi].
func mag(r *rand.Rand, lo, hi float64, signed bool) float32 {
	v := math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo)))
	if signed && r.IntN(2) == 0 {
		v = -v
	}
	return float32(v)
}

// parityCases returns the kernels of parity.inc with inputs in the ranges
// the kernels are written for (see the file's comment).
func parityCases() []parityCase {
	r := rand.New(rand.NewPCG(1, 2))
	var cases []parityCase

	// scalars: a over ±[1e-3, 1000] and a few exact cases (zeros, a
	// subnormal, ties for rint and round), b over ±[1e-2, 50].
	const sn = 512
	sv := make([]float32, 2*sn)
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, 0.5, 2.5, -2.5, 1023.5, 1000, -0.001}
	for i := 0; i < sn; i++ {
		a := mag(r, 1e-3, 1000, true)
		if i < len(special) {
			a = special[i]
		}
		sv[2*i], sv[2*i+1] = a, mag(r, 1e-2, 50, true)
	}
	cases = append(cases, parityCase{kernel: "scalars", groups: backend.Dim3{X: 4, Y: 1, Z: 1}, threads: backend.Dim3{X: 128, Y: 1, Z: 1},
		in: f32s(sv), out: make([]byte, 4*24*sn)})

	const vn = 256
	vv := make([]float32, 8*vn)
	for i := range vv {
		vv[i] = mag(r, 0.01, 100, true)
	}
	cases = append(cases, parityCase{kernel: "vectors", groups: backend.Dim3{X: 2, Y: 1, Z: 1}, threads: backend.Dim3{X: 128, Y: 1, Z: 1},
		in: f32s(vv), out: make([]byte, 4*16*vn)})

	const in = 256
	iv := make([]uint32, 2*in)
	for i := range iv {
		iv[i] = r.Uint32()
	}
	copy(iv, []uint32{0, 0, 0xffffffff, 1, 0x80000000, 0xffffffff, 7, 0x80000000, 1, 31})
	cases = append(cases, parityCase{kernel: "integers", groups: backend.Dim3{X: 2, Y: 1, Z: 1}, threads: backend.Dim3{X: 128, Y: 1, Z: 1},
		in: le32(iv), out: make([]byte, 4*16*in)})

	// simd: 48 threads per threadgroup, so every second simd group is a
	// partial one of 16 lanes.
	const mn = 3 * 48
	mv := make([]float32, 2*mn)
	for i := 0; i < mn; i++ {
		mv[2*i], mv[2*i+1] = mag(r, 0.1, 10, true), mag(r, 0.5, 2, false)
	}
	cases = append(cases, parityCase{kernel: "simd", groups: backend.Dim3{X: 3, Y: 1, Z: 1}, threads: backend.Dim3{X: 48, Y: 1, Z: 1},
		in: f32s(mv), out: make([]byte, 4*32*mn)})

	rv := make([]float32, 4*64)
	for i := range rv {
		rv[i] = mag(r, 0.1, 10, true)
	}
	cases = append(cases, parityCase{kernel: "reduce", groups: backend.Dim3{X: 4, Y: 1, Z: 1}, threads: backend.Dim3{X: 64, Y: 1, Z: 1},
		in: f32s(rv), out: make([]byte, 4*2*4), tg: 4 * 64})

	av := make([]uint32, 4*128)
	for i := range av {
		av[i] = r.Uint32()
	}
	aout := make([]uint32, 5+4)
	aout[2], aout[3] = 0x80000000, 0xffffffff // identities of max (as int) and min
	cases = append(cases, parityCase{kernel: "atomics", groups: backend.Dim3{X: 4, Y: 1, Z: 1}, threads: backend.Dim3{X: 128, Y: 1, Z: 1},
		in: le32(av), out: le32(aout)})

	xv := make([]float32, 3*64)
	for i := range xv {
		xv[i] = mag(r, 0.1, 2, true)
	}
	cases = append(cases, parityCase{kernel: "matrix", groups: backend.Dim3{X: 1, Y: 1, Z: 1}, threads: backend.Dim3{X: 32, Y: 1, Z: 1},
		in: f32s(xv), out: make([]byte, 4*128)})

	pg, pt := backend.Dim3{X: 3, Y: 2, Z: 2}, backend.Dim3{X: 5, Y: 3, Z: 2}
	cases = append(cases, parityCase{kernel: "positions", groups: pg, threads: pt, in: make([]byte, 4*20*pg.Count()*pt.Count())})
	return cases
}

// transcendentalsCase is the transcendentals kernel of parity.inc.
func transcendentalsCase() parityCase {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 1024
	v := make([]float32, 2*n)
	for i := range v {
		v[i] = mag(r, 1e-3, 20, true)
	}
	return parityCase{kernel: "transcendentals", groups: backend.Dim3{X: 8, Y: 1, Z: 1}, threads: backend.Dim3{X: 128, Y: 1, Z: 1},
		in: f32s(v), out: make([]byte, 4*24*n)}
}

// cpuBackend returns the cpu backend the parity tests compare with.
func cpuBackend(t testing.TB) *cpu.Backend {
	t.Helper()
	testenv.RequireCXX(t)
	b := cpu.New(cpu.Options{CacheDir: filepath.Join(os.TempDir(), "metalab-cpu-test-cache")})
	t.Cleanup(func() { b.Close() })
	return b
}

// cpuParity compiles parity_cpu.cpp's kernel on the cpu backend.
func cpuParity(t testing.TB, b *cpu.Backend, kernel string) backend.Program {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "tu"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.CompileCPP(context.Background(), cpu.CPPSource{Name: "parity_cpu.cpp", CPP: readTU(t, "parity_cpu.cpp"), Kernel: kernel, Dir: dir})
	if err != nil {
		t.Fatalf("cpu: compile %s: %v", kernel, err)
	}
	return p
}

func runCase(t testing.TB, p backend.Program, c parityCase, order backend.Order) *backend.Result {
	t.Helper()
	d := c.dispatch()
	d.Order = order
	res, err := p.Run(context.Background(), d)
	if err != nil {
		t.Fatalf("%s: %v", c.kernel, err)
	}
	return res
}

// TestParityKernelsOnCPU runs the parity kernels on the cpu backend in two
// thread orders: their outputs must not depend on the order (each thread
// writes only its own words), or a comparison with the GPU, which runs
// threads in its own order, would mean nothing. It needs only g++.
func TestParityKernelsOnCPU(t *testing.T) {
	b := cpuBackend(t)
	for _, c := range append(parityCases(), transcendentalsCase()) {
		t.Run(c.kernel, func(t *testing.T) {
			p := cpuParity(t, b, c.kernel)
			first := runCase(t, p, c, backend.Order{Kind: "in-order"})
			second := runCase(t, p, c, backend.Order{Kind: "shuffle", Seed: 7})
			for idx, out := range first.Outputs {
				if !bytes.Equal(out, second.Outputs[idx]) {
					t.Errorf("buffer %d differs between thread orders: %s", idx, firstDiff(out, second.Outputs[idx]))
				}
			}
		})
	}
}

// firstDiff describes the first differing 32-bit word of a and b.
func firstDiff(a, b []byte) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d bytes against %d", len(a), len(b))
	}
	wa, wb := u32s(a), u32s(b)
	n := 0
	first := -1
	for i := range wa {
		if wa[i] != wb[i] {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if first < 0 {
		return "equal"
	}
	return fmt.Sprintf("%d words differ, the first word %d: %#08x against %#08x", n, first, wa[first], wb[first])
}

// TestParity runs every kernel of parity.inc on the cpu backend and on the
// GPU and wants every output byte for byte equal.
func TestParity(t *testing.T) {
	g := gpuBackend(t, Options{})
	c := cpuBackend(t)
	for _, pc := range parityCases() {
		t.Run(pc.kernel, func(t *testing.T) {
			want := runCase(t, cpuParity(t, c, pc.kernel), pc, backend.Order{})
			got := runCase(t, compileCU(t, g, "parity.cu", pc.kernel), pc, backend.Order{})
			for idx, w := range want.Outputs {
				if !bytes.Equal(got.Outputs[idx], w) {
					t.Errorf("buffer %d: the GPU's bytes differ from the cpu backend's: %s%s", idx, firstDiff(w, got.Outputs[idx]), wordContext(pc, w, got.Outputs[idx]))
				}
			}
		})
	}
}

// wordContext names the thread and output slot of the first differing word
// for the kernels whose threads write fixed-size records.
func wordContext(c parityCase, want, got []byte) string {
	per := map[string]int{"scalars": 24, "vectors": 16, "integers": 16, "simd": 32, "positions": 20, "transcendentals": 24}[c.kernel]
	if per == 0 {
		return ""
	}
	w, g := u32s(want), u32s(got)
	for i := range w {
		if i < len(g) && w[i] != g[i] {
			return fmt.Sprintf(" (thread %d, slot %d)", i/per, i%per)
		}
	}
	return ""
}

// ulps is the distance in units in the last place between two floats of
// the same sign, or -1 when they differ in sign or class.
func ulps(a, b float32) int64 {
	if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) {
		if math.IsNaN(float64(a)) && math.IsNaN(float64(b)) {
			return 0
		}
		return -1
	}
	if math.Signbit(float64(a)) != math.Signbit(float64(b)) {
		if a == 0 && b == 0 {
			return 0
		}
		return -1
	}
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if d < 0 {
		d = -d
	}
	return d
}

// TestGPUTranscendentals measures how far the GPU's math functions
// (libdevice) are from the cpu backend's (the host's libm) on the same
// inputs, function by function, and logs it: this is the one place the
// backends are not expected to agree bit for bit. It fails only when a
// result is in another class (NaN, infinity, sign) or further than 16
// ulp, which would be a translation or wiring error, not rounding.
func TestGPUTranscendentals(t *testing.T) {
	g := gpuBackend(t, Options{})
	c := cpuBackend(t)
	tc := transcendentalsCase()
	want := u32s(runCase(t, cpuParity(t, c, tc.kernel), tc, backend.Order{}).Outputs[1])
	got := u32s(runCase(t, compileCU(t, g, "parity.cu", tc.kernel), tc, backend.Order{}).Outputs[1])
	names := []string{"exp", "exp2", "exp10", "log", "log2", "log10", "pow", "sin", "cos", "tan", "asin", "acos", "atan",
		"atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "sinpi", "cospi", "powr"}
	type stat struct {
		equal, n int
		max      int64
	}
	stats := make([]stat, len(names))
	for i := range want {
		k := i % len(names)
		a, b := math.Float32frombits(want[i]), math.Float32frombits(got[i])
		d := ulps(a, b)
		stats[k].n++
		if d == 0 {
			stats[k].equal++
		}
		if d < 0 || d > 16 {
			t.Errorf("%s (thread %d): cpu %g (%#08x), GPU %g (%#08x)", names[k], i/len(names), a, want[i], b, got[i])
			continue
		}
		stats[k].max = max(stats[k].max, d)
	}
	var lines []string
	for k, s := range stats {
		lines = append(lines, fmt.Sprintf("%-6s %4d of %d equal, at most %d ulp apart", names[k], s.equal, s.n, s.max))
	}
	sort.Strings(lines)
	t.Logf("GPU (libdevice) against the cpu backend (libm):\n%s", strings.Join(lines, "\n"))
}
