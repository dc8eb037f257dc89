package conformance

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"metalab/backend"
	"metalab/internal/testenv"
)

// nativeFlags are the cpu backend's kernel compile flags (without -fPIC
// -shared), so the native loop is compiled the way kernels are. Like the
// backend, it drops -fexcess-precision=standard where the compiler does not
// implement it for C++ (g++ before 13).
var nativeFlags = []string{"-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math"}

const excessPrecision = "-fexcess-precision=standard"

// buildNative compiles testdata/native_poly.cpp into dir.
func buildNative(tb testing.TB, dir string) string {
	tb.Helper()
	cxx := testenv.RequireCXX(tb)
	exe := filepath.Join(dir, "native_poly")
	args := append(append([]string{}, nativeFlags...), "-o", exe, filepath.Join("testdata", "native_poly.cpp"))
	if _, err := testenv.Command(cxx, append([]string{excessPrecision}, args...)...).CombinedOutput(); err == nil {
		return exe
	}
	if out, err := testenv.Command(cxx, args...).CombinedOutput(); err != nil {
		tb.Fatalf("build native_poly: %v\n%s", err, out)
	}
	return exe
}

// runNative returns the native median time of one pass and its output hash.
func runNative(tb testing.TB, exe string, x []byte, n, reps int) (time.Duration, string) {
	tb.Helper()
	cmd := exec.Command(exe, strconv.Itoa(n), strconv.Itoa(reps))
	cmd.Stdin = bytes.NewReader(x)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("native_poly: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		tb.Fatalf("native_poly printed %q", out)
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		tb.Fatalf("native_poly printed %q", out)
	}
	return time.Duration(ns), f[1]
}

func fnvHex(b []byte) string {
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkEmulatedVsNative runs poly over 64Ki elements on the cpu backend
// (one runner worker) and as a native loop, checks both give the same bytes,
// and reports the ratio of their median times.
func BenchmarkEmulatedVsNative(b *testing.B) {
	const tg, groups = 256, 256
	n := tg * groups
	r := rng(21)
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = r.float()
	}
	x := f32bytes(xs)
	be := newBackendAt(b, cacheDir(), 1)
	p := compile(b, be, source(b, "bench.metal", "poly"))
	exe := buildNative(b, b.TempDir())
	d := backend.Dispatch{Buffers: []backend.Buffer{in(0, x), out(1, make([]byte, 4*n))}, Threadgroups: dim(groups), Threads: dim(tg)}
	b.ResetTimer()
	var times []time.Duration
	var got []byte
	for i := 0; i < b.N; i++ {
		res, err := p.Run(context.Background(), d)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, res.Times...)
		got = res.Outputs[1]
	}
	b.StopTimer()
	native, hash := runNative(b, exe, x, n, 21)
	if h := fnvHex(got); h != hash {
		b.Errorf("emulated output hash %s, native %s", h, hash)
	}
	emu := median(times)
	b.ReportMetric(float64(emu.Nanoseconds()), "emulated-ns/dispatch")
	b.ReportMetric(float64(native.Nanoseconds()), "native-ns/pass")
	b.ReportMetric(float64(emu)/float64(native), "emulated/native")
}

// barrierDispatch is 64 threadgroups of 256 threads of barriers8.
func barrierDispatch() (backend.Dispatch, []byte) {
	const groups, n = 64, 256
	want := make([]float32, groups*n)
	for g := 0; g < groups; g++ {
		v := make([]float32, n)
		for t := range v {
			v[t] = float32(g*n + t)
		}
		for k := 0; k < 8; k++ {
			s := append([]float32(nil), v...)
			for t := range v {
				v[t] += s[(t+1)%n]
			}
		}
		copy(want[g*n:], v)
	}
	return backend.Dispatch{Buffers: []backend.Buffer{out(0, make([]byte, 4*groups*n))}, Threadgroups: dim(groups), Threads: dim(n)}, f32bytes(want)
}

// TestBarrierKernel runs 64 threadgroups x 256 threads with 8 barriers per
// thread, checks the output and logs the run time (compile excluded).
func TestBarrierKernel(t *testing.T) {
	b := newBackend(t)
	p := compile(t, b, source(t, "bench.metal", "barriers8"))
	d, want := barrierDispatch()
	d.Repeat = 5
	start := time.Now()
	res, err := p.Run(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	if df := diff(res.Outputs[0], want, 4); df != "" {
		t.Fatalf("barriers8: %s", df)
	}
	if len(res.Times) == 0 {
		t.Fatalf("the cpu backend reported no dispatch times")
	}
	t.Logf("barriers8 64x256 threads, 8 barriers each: median %v per dispatch over %d (wall %v for all, incl. transfer)", median(res.Times), len(res.Times), wall)
}

// BenchmarkBarriers times one dispatch of the barrier kernel.
func BenchmarkBarriers(b *testing.B) {
	be := newBackend(b)
	p := compile(b, be, source(b, "bench.metal", "barriers8"))
	d, _ := barrierDispatch()
	b.ResetTimer()
	var times []time.Duration
	for i := 0; i < b.N; i++ {
		res, err := p.Run(context.Background(), d)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, res.Times...)
	}
	if len(times) > 0 {
		b.ReportMetric(float64(median(times).Nanoseconds()), "ns/dispatch")
	}
}

// TestCompileTime measures a cold compile (fresh cache) and cached compiles
// of a typical kernel through Backend.Compile; a cached compile must not be
// slower than the cold one.
func TestCompileTime(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a runner in a fresh cache")
	}
	dir := t.TempDir()
	start := time.Now()
	b := newBackendAt(t, dir, 0)
	setup := time.Since(start)
	src := source(t, "reduce.metal", "tg_reduce")
	timeCompile := func(b backend.Backend, src backend.Source) time.Duration {
		start := time.Now()
		p, err := b.Compile(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		p.Close()
		return el
	}
	cold := timeCompile(b, src)
	warm := timeCompile(b, src)
	b2 := newBackendAt(t, dir, 0)
	other := timeCompile(b2, src)
	t.Logf("runner build + setup %v; reduce.metal compile: cold %v, cached %v, cached in a new Backend %v", setup, cold, warm, other)
	if warm > cold || other > cold {
		t.Errorf("cached compile slower than cold: cold %v, cached %v, new backend %v", cold, warm, other)
	}

	// The kernel metalab is developed against: a flash-attention kernel
	// with simdgroup matrices, a function constant and threadgroup tiles.
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "kernels", "qsa_prompt.metal"))
	if err != nil {
		t.Logf("qsa_prompt.metal not timed: %v", err)
		return
	}
	qsa := backend.Source{Name: "qsa_prompt.metal", Text: text, Entry: "qsa_flash"}
	cold = timeCompile(b, qsa)
	warm = timeCompile(b, qsa)
	t.Logf("qsa_prompt.metal qsa_flash compile: cold %v, cached %v", cold, warm)
	if warm > cold {
		t.Errorf("cached qsa_flash compile slower than cold: cold %v, cached %v", cold, warm)
	}
}
