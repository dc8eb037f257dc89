package cpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend"
	"metalab/internal/testenv"
	"metalab/translate"
)

// testCache is shared by all tests (and test runs): everything in it is
// keyed by content hash, so the runner is built once.
func testCache() string { return filepath.Join(os.TempDir(), "metalab-cpu-test-cache") }

func newBackend(t testing.TB, opts Options) *Backend {
	t.Helper()
	testenv.RequireCXX(t)
	if opts.CacheDir == "" {
		opts.CacheDir = testCache()
	}
	b := New(opts)
	if ok, why := b.Available(context.Background()); !ok {
		t.Fatalf("Available: %s", why)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func compileTU(t testing.TB, b *Backend, file, kernel string) backend.Program {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "tu", file))
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.CompileCPP(context.Background(), CPPSource{Name: file, CPP: src, Kernel: kernel})
	if err != nil {
		t.Fatalf("compile %s/%s: %v", file, kernel, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
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

// run runs d on p and fails t unless every device buffer of d was read
// back, with its length, and nothing else: tests then index the outputs
// without checking, and a loop over an output cannot pass by running zero
// times.
func run(t testing.TB, p backend.Program, d backend.Dispatch) *backend.Result {
	t.Helper()
	res, err := p.Run(context.Background(), d)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := checkOutputs(d, res); err != nil {
		t.Fatal(err)
	}
	return res
}

// checkOutputs reports whether res holds every device buffer of d, with
// the length it was bound with, and no other.
func checkOutputs(d backend.Dispatch, res *backend.Result) error {
	devices := 0
	for _, b := range d.Buffers {
		if b.Threadgroup {
			continue
		}
		devices++
		out, ok := res.Outputs[b.Index]
		if !ok {
			return fmt.Errorf("buffer %d was not read back", b.Index)
		}
		if len(out) != len(b.Data) {
			return fmt.Errorf("buffer %d read back with %d bytes, bound with %d", b.Index, len(out), len(b.Data))
		}
	}
	if len(res.Outputs) != devices {
		return fmt.Errorf("%d buffers read back for %d device buffers bound", len(res.Outputs), devices)
	}
	return nil
}

func wantFailure(t *testing.T, err error, kind backend.FailureKind, msgPart string) *backend.Failure {
	t.Helper()
	var f *backend.Failure
	if !errors.As(err, &f) {
		t.Fatalf("got error %v, want a %s failure", err, kind)
	}
	if f.Kind != kind {
		t.Fatalf("got %s failure %q (log %q), want %s", f.Kind, f.Msg, f.Log, kind)
	}
	if !strings.Contains(f.Msg, msgPart) {
		t.Fatalf("failure message %q does not contain %q", f.Msg, msgPart)
	}
	return f
}

func TestBarrierReduction(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "groups.cpp", "reduce")
	if got := p.ThreadgroupMemory(); got != 4096 {
		t.Errorf("ThreadgroupMemory = %d, want 4096", got)
	}
	const groups, threads = 5, 256
	in := make([]uint32, groups*threads)
	want := make([]uint32, groups)
	for i := range in {
		in[i] = uint32(i*7919 + 13)
		want[i/threads] += in[i]
	}
	for _, order := range []backend.Order{{Kind: "in-order"}, {Kind: "reversed"}, {Kind: "shuffle", Seed: 42}} {
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 4*groups), Output: true}},
			Threadgroups: backend.Dim3{X: groups, Y: 1, Z: 1},
			Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
			Repeat:       3,
			Order:        order,
		})
		got := u32s(res.Outputs[1])
		for g := range want {
			if got[g] != want[g] {
				t.Errorf("%v: group %d sum = %d, want %d", order, g, got[g], want[g])
			}
		}
		if len(res.Times) != 3 {
			t.Errorf("%v: %d times, want 3", order, len(res.Times))
		}
		if string(res.Outputs[0]) != string(le32(in)) {
			t.Errorf("%v: input buffer changed", order)
		}
	}
}

func TestRaceDependsOnOrder(t *testing.T) {
	b := newBackend(t, Options{})
	const threads = 64
	outputs := func(kernel string, order backend.Order) []uint32 {
		p := compileTU(t, b, "groups.cpp", kernel)
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*threads), Output: true}},
			Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
			Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
			Order:        order,
		})
		return u32s(res.Outputs[0])
	}
	in, rev := outputs("racy", backend.Order{Kind: "in-order"}), outputs("racy", backend.Order{Kind: "reversed"})
	if fmt.Sprint(in) == fmt.Sprint(rev) {
		t.Errorf("racy kernel gave the same output in-order and reversed: %v", in)
	}
	s1, s1again := outputs("racy", backend.Order{Kind: "shuffle", Seed: 1}), outputs("racy", backend.Order{Kind: "shuffle", Seed: 1})
	if fmt.Sprint(s1) != fmt.Sprint(s1again) {
		t.Errorf("shuffle with one seed is not deterministic: %v vs %v", s1, s1again)
	}
	fin, frev := outputs("racy_fixed", backend.Order{Kind: "in-order"}), outputs("racy_fixed", backend.Order{Kind: "reversed"})
	fsh := outputs("racy_fixed", backend.Order{Kind: "shuffle", Seed: 9})
	for i := 0; i < threads; i++ {
		want := uint32((i+1)%threads + 1)
		if fin[i] != want || frev[i] != want || fsh[i] != want {
			t.Fatalf("fixed kernel thread %d: in-order %d reversed %d shuffle %d, want %d", i, fin[i], frev[i], fsh[i], want)
		}
	}
}

func TestDeadlock(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "groups.cpp", "split_barrier")
	_, err := p.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{200})}, {Index: 1, Data: make([]byte, 4*256*4)}},
		Threadgroups: backend.Dim3{X: 4, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 256, Y: 1, Z: 1},
	})
	wantFailure(t, err, backend.Deadlock, "threads 0-199 at the threadgroup_barrier at split.metal:10; threads 200-255 at the threadgroup_barrier at split.metal:20")
	// All threads reach the same barrier: no deadlock, and the runner survived.
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{256})}, {Index: 1, Data: make([]byte, 4*256*4)}},
		Threadgroups: backend.Dim3{X: 4, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 256, Y: 1, Z: 1},
	})
	for i, v := range u32s(res.Outputs[1]) {
		if v != 1 {
			t.Fatalf("thread %d wrote %d, want 1", i, v)
		}
	}
}

// TestDivergentBarrier: threads that returned count as arrived at a
// barrier, as on Apple GPUs; the run passes with a warning naming how many.
func TestDivergentBarrier(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "groups.cpp", "early_return")
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{200})}, {Index: 1, Data: make([]byte, 4*256*4)}},
		Threadgroups: backend.Dim3{X: 4, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 256, Y: 1, Z: 1},
	})
	out := u32s(res.Outputs[1])
	for i, v := range out {
		if want := uint32(0); i%256 >= 200 && v != want || i%256 < 200 && v != 1 {
			t.Fatalf("thread %d wrote %d", i, v)
		}
	}
	if len(res.Findings) != 1 || res.Findings[0].Kind != backend.FindDivergent || !strings.Contains(res.Findings[0].Note, "56 of 256 threads had returned") {
		t.Fatalf("findings %+v, want one divergent-barrier warning with 56 of 256 returned", res.Findings)
	}
	if res.Findings[0].Count != 4 {
		t.Errorf("divergent barrier seen %d times, want 4 (once per threadgroup)", res.Findings[0].Count)
	}
}

// copyWorks checks that a healthy kernel runs after a failure.
func copyWorks(t *testing.T, b *Backend) {
	t.Helper()
	p := compileTU(t, b, "faults.cpp", "copy")
	in := []uint32{1, 2, 3, 4, 5, 6, 7, 8}
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 32)}},
		Threadgroups: backend.Dim3{X: 2, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 4, Y: 1, Z: 1},
	})
	for i, v := range u32s(res.Outputs[1]) {
		if v != in[i]*2 {
			t.Fatalf("after failure: out[%d] = %d, want %d", i, v, in[i]*2)
		}
	}
}

func TestFailures(t *testing.T) {
	b := newBackend(t, Options{})
	copyWorks(t, b)
	grid := backend.Dim3{X: 2, Y: 1, Z: 1}
	threads := backend.Dim3{X: 32, Y: 1, Z: 1}
	tests := []struct {
		kernel  string
		size    int
		timeout time.Duration
		kind    backend.FailureKind
		msg     string
	}{
		{"null_write", 256, 0, backend.BadAccess, "SIGSEGV"}, // a forged pointer: outside every region
		{"abort", 256, 0, backend.Crash, "SIGABRT"},
		{"spin", 256, 300 * time.Millisecond, backend.Timeout, "did not finish"},
		{"past_end", 256, 0, backend.BadAccess, "buffer 0, byte offset +0 past the end"},
		{"before_start", 256, 0, backend.BadAccess, "buffer 0, byte offset -4 before the start"},
		{"guard_write", 256, 0, backend.BadAccess, "past the end"},
		{"far_write", 256, 0, backend.BadAccess, "buffer 0, byte offset +67108608 past the end"},
		{"recurse", 256, 0, backend.Crash, "stack overflow"},
		{"divide", 256, 0, backend.Crash, "SIGFPE"},
	}
	for _, tt := range tests {
		t.Run(tt.kernel, func(t *testing.T) {
			p := compileTU(t, b, "faults.cpp", tt.kernel)
			_, err := p.Run(context.Background(), backend.Dispatch{
				Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, tt.size)}},
				Threadgroups: grid,
				Threads:      threads,
				Timeout:      tt.timeout,
			})
			f := wantFailure(t, err, tt.kind, tt.msg)
			if tt.kind == backend.Crash && !strings.Contains(f.Log, f.Msg) {
				t.Errorf("log %q lacks the message %q", f.Log, f.Msg)
			}
			copyWorks(t, b)
			// The failed program reloads itself into the new runner.
			if tt.kind != backend.Timeout {
				_, err = p.Run(context.Background(), backend.Dispatch{
					Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, tt.size)}},
					Threadgroups: grid,
					Threads:      threads,
				})
				wantFailure(t, err, tt.kind, tt.msg)
			}
		})
	}
}

func TestSlotLayoutAndPoison(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "groups.cpp", "layout")
	// char[3] at 0, double[2] aligned to 8 at 8: 24 bytes, rounded to 32.
	if got := p.ThreadgroupMemory(); got != 32 {
		t.Errorf("ThreadgroupMemory = %d, want 32", got)
	}
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 8)}},
		Threadgroups: backend.Dim3{X: 3, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 1, Y: 1, Z: 1},
		Repeat:       2,
	})
	got := u32s(res.Outputs[0])
	if got[0] != 1 || got[1] != 1 {
		t.Errorf("separate regions %d (want 1), poisoned %d (want 1)", got[0], got[1])
	}
}

func TestPositions2D(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "groups.cpp", "positions")
	grid, tg := backend.Dim3{X: 3, Y: 2, Z: 1}, backend.Dim3{X: 4, Y: 5, Z: 1}
	w, h := grid.X*tg.X, grid.Y*tg.Y
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 16*w*h)}},
		Threadgroups: grid,
		Threads:      tg,
	})
	got := u32s(res.Outputs[0])
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := 4 * (y*w + x)
			want := []uint32{uint32(x), uint32(y), uint32(x / tg.X), uint32(y / tg.Y)}
			if fmt.Sprint(got[i:i+4]) != fmt.Sprint(want) {
				t.Fatalf("thread (%d,%d): got %v, want %v", x, y, got[i:i+4], want)
			}
		}
	}
}

func TestSimdExchange(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "groups.cpp", "simd")
	const threads = 80 // two full simd groups and one of 16 lanes
	for _, mode := range []uint32{0, 1, 2} {
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{mode})}, {Index: 1, Data: make([]byte, 8*threads)}},
			Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
			Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
			Order:        backend.Order{Kind: "shuffle", Seed: 3},
		})
		got := u32s(res.Outputs[1])
		for tid := 0; tid < threads; tid++ {
			lanes := 32
			if tid >= 64 {
				lanes = threads - 64
			}
			var sum, mask uint32
			for l := 0; l < lanes; l++ {
				if mode >= 1 && l%2 == 1 {
					continue
				}
				sum += uint32(l*3 + 1)
				mask |= 1 << l
			}
			if mode >= 1 && tid%2 == 1 {
				sum, mask = 0, 0
			}
			if got[2*tid] != sum || got[2*tid+1] != mask {
				t.Fatalf("mode %d thread %d: sum %d mask %#x, want %d %#x", mode, tid, got[2*tid], got[2*tid+1], sum, mask)
			}
		}
	}
}

func TestThreadgroupBuffer(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "groups.cpp", "tgbuf")
	if got := p.MaxThreadsPerThreadgroup(); got != 512 {
		t.Errorf("MaxThreadsPerThreadgroup = %d, want 512", got)
	}
	const threads = 100
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*3)}, {Index: 0, Threadgroup: true, Size: 4 * threads}},
		Threadgroups: backend.Dim3{X: 3, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
	})
	var want uint32
	for i := uint32(0); i < threads; i++ {
		want += i * i
	}
	for g, v := range u32s(res.Outputs[0]) {
		if v != want {
			t.Errorf("group %d: %d, want %d", g, v, want)
		}
	}
	if _, err := p.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 513, Y: 1, Z: 1},
	}); err == nil {
		t.Error("513 threads per threadgroup accepted by a kernel limited to 512")
	}
}

func TestCompileCache(t *testing.T) {
	b := newBackend(t, Options{})
	src, err := os.ReadFile(filepath.Join("testdata", "tu", "faults.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	// A unique comment makes the first compile a cache miss.
	src = append(src, fmt.Sprintf("// %d\n", time.Now().UnixNano())...)
	ctx := context.Background()
	before := b.compilerRuns.Load()
	p1, err := b.CompileCPP(ctx, CPPSource{Name: "faults.cpp", CPP: src, Kernel: "copy"})
	if err != nil {
		t.Fatal(err)
	}
	p1.Close()
	if n := b.compilerRuns.Load() - before; n != 1 {
		t.Fatalf("first compile ran the compiler %d times, want 1", n)
	}
	// Cached compiles must not run the compiler; how long they take is
	// measured by TestCompileTime and the benchmarks, not asserted here.
	for i := 0; i < 3; i++ {
		p2, err := b.CompileCPP(ctx, CPPSource{Name: "faults.cpp", CPP: src, Kernel: "copy"})
		if err != nil {
			t.Fatal(err)
		}
		p2.Close()
	}
	if n := b.compilerRuns.Load() - before; n != 1 {
		t.Errorf("cached compiles ran the compiler (%d runs in all)", n)
	}
	// A different define is a different program.
	p3, err := b.CompileCPP(ctx, CPPSource{Name: "faults.cpp", CPP: src, Kernel: "copy", Defines: map[string]string{"X": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	p3.Close()
	if n := b.compilerRuns.Load() - before; n != 2 {
		t.Errorf("compile with a new define: %d compiler runs in all, want 2", n)
	}
}

func TestCompileError(t *testing.T) {
	b := newBackend(t, Options{})
	src, err := os.ReadFile(filepath.Join("testdata", "tu", "broken.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.CompileCPP(context.Background(), CPPSource{Name: "broken.cpp", CPP: src, Kernel: "f"})
	f := wantFailure(t, err, backend.CompileError, "undeclared_name")
	if !strings.Contains(f.Log, "kernels/broken.metal:7") {
		t.Errorf("compiler log does not point at the .metal file: %s", f.Log)
	}
}

// TestCompileHeaders compiles a kernel whose value comes from a header in
// an include directory: the program sees the header as it is at each
// compile (the cache key covers what the header contributed), and a
// compile error in a header names the header's line.
func TestCompileHeaders(t *testing.T) {
	b := newBackend(t, Options{})
	dir := t.TempDir()
	inc := filepath.Join(dir, "inc")
	if err := os.MkdirAll(inc, 0o755); err != nil {
		t.Fatal(err)
	}
	text := []byte("#include <metal_stdlib>\n#include \"val.h\"\nusing namespace metal;\n" +
		"kernel void k(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = VAL + twice(i); }\n")
	src := backend.Source{Name: "k.metal", Text: text, Dir: dir, IncludeDirs: []string{inc}, Entry: "k"}
	for _, val := range []uint32{3, 5} {
		h := fmt.Sprintf("#pragma once\n#define VAL %d\ninline uint twice(uint x) { return 2 * x; }\n", val)
		if err := os.WriteFile(filepath.Join(inc, "val.h"), []byte(h), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := b.Compile(context.Background(), src)
		if err != nil {
			t.Fatalf("VAL %d: %v", val, err)
		}
		res := run(t, p, backend.Dispatch{Buffers: []backend.Buffer{{Index: 0, Data: make([]byte, 16), Output: true}},
			Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 4, Y: 1, Z: 1}})
		p.Close()
		if got := u32s(res.Outputs[0]); got[0] != val || got[3] != val+6 {
			t.Errorf("with the header defining VAL %d the kernel wrote %v", val, got)
		}
	}
	bad := "#pragma once\n#define VAL 1\n\ninline uint twice(uint x) { return x + undeclared_in_header; }\n"
	if err := os.WriteFile(filepath.Join(inc, "val.h"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := b.Compile(context.Background(), src)
	f := wantFailure(t, err, backend.CompileError, "undeclared_in_header")
	if !strings.Contains(f.Msg, filepath.Join(inc, "val.h")+":4:") {
		t.Errorf("the compile error does not name the header's line 4: %s", f.Msg)
	}
}

// TestFindingsInHeaders checks that the checking mode names the header's
// line for an access in a header's function.
func TestFindingsInHeaders(t *testing.T) {
	b := newBackend(t, Options{})
	dir := t.TempDir()
	inc := filepath.Join(dir, "inc")
	if err := os.MkdirAll(inc, 0o755); err != nil {
		t.Fatal(err)
	}
	h := "#pragma once\n// every thread writes the same word\ninline void put(threadgroup uint* s, uint i) {\n  s[0] = i;\n}\n"
	if err := os.WriteFile(filepath.Join(inc, "put.h"), []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	text := []byte("#include <metal_stdlib>\n#include \"put.h\"\nusing namespace metal;\n" +
		"kernel void k(device uint* o [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {\n" +
		"  threadgroup uint s[1];\n  put(s, i);\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  o[i] = s[0];\n}\n")
	p, err := b.Compile(context.Background(), backend.Source{Name: "k.metal", Text: text, Dir: dir, IncludeDirs: []string{inc}, Entry: "k", Check: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	res := run(t, p, backend.Dispatch{Buffers: []backend.Buffer{{Index: 0, Data: make([]byte, 4*64), Output: true}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 64, Y: 1, Z: 1}})
	want := filepath.Join(inc, "put.h")
	for _, f := range res.Findings {
		if f.Kind == backend.FindRace {
			if f.Access.File != want || f.Access.Line != 4 {
				t.Errorf("the race is reported at %s:%d, want %s:4", f.Access.File, f.Access.Line, want)
			}
			return
		}
	}
	t.Errorf("no race reported: %+v", res.Findings)
}

func TestUnknownKernel(t *testing.T) {
	b := newBackend(t, Options{})
	src, err := os.ReadFile(filepath.Join("testdata", "tu", "faults.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.CompileCPP(context.Background(), CPPSource{Name: "faults.cpp", CPP: src, Kernel: "nope"})
	if err == nil || !strings.Contains(err.Error(), "kernel nope not found") || !strings.Contains(err.Error(), "copy") {
		t.Errorf("got %v, want a not-found error listing the kernels", err)
	}
}

func TestNoCompiler(t *testing.T) {
	b := New(Options{CXX: "metalab-no-such-compiler", CacheDir: t.TempDir()})
	ok, why := b.Available(context.Background())
	if ok || !strings.Contains(why, "no C++ compiler") || !strings.Contains(why, "set CXX") {
		t.Errorf("Available = %v, %q", ok, why)
	}
	_, err := b.Compile(context.Background(), backend.Source{Name: "k.metal"})
	wantFailure(t, err, backend.Unavailable, "no C++ compiler")
}

func TestTranslateError(t *testing.T) {
	b := newBackend(t, Options{Translate: func(_ context.Context, src backend.Source, _ *translate.Preprocessor) ([]byte, string, error) {
		return nil, "", fmt.Errorf("%s:3:9: unsupported construct", src.Name)
	}})
	_, err := b.Compile(context.Background(), backend.Source{Name: "k.metal"})
	wantFailure(t, err, backend.CompileError, "k.metal:3:9: unsupported construct")
}

func TestRegistered(t *testing.T) {
	b, ok := backend.Lookup("cpu")
	if !ok {
		t.Fatal("cpu backend not registered")
	}
	if _, isCPU := b.(*Backend); !isCPU || b.Name() != "cpu" {
		t.Errorf("Lookup(cpu) = %T named %q", b, b.Name())
	}
}

// TestPortableFibers runs the scheduler tests on the ucontext fallback
// that targets other than x86-64 and arm64 use.
func TestPortableFibers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a second runner; skipped in -short mode")
	}
	testenv.RequireCXX(t)
	b := New(Options{CacheDir: testCache()})
	b.runnerDefines = []string{"-DMTL_FIBER_PORTABLE"}
	if ok, why := b.Available(context.Background()); !ok {
		t.Fatalf("Available with the portable fibers: %s", why)
	}
	defer b.Close()
	p := compileTU(t, b, "groups.cpp", "reduce")
	const threads = 128
	in := make([]uint32, threads)
	var want uint32
	for i := range in {
		in[i] = uint32(i * i)
		want += in[i]
	}
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 4)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
		Order:        backend.Order{Kind: "shuffle", Seed: 5},
	})
	if got := u32s(res.Outputs[1])[0]; got != want {
		t.Errorf("sum = %d, want %d", got, want)
	}
	d := compileTU(t, b, "groups.cpp", "split_barrier")
	_, err := d.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{10})}, {Index: 1, Data: make([]byte, 4*32)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 32, Y: 1, Z: 1},
	})
	wantFailure(t, err, backend.Deadlock, "threads 0-9 at the threadgroup_barrier at split.metal:10")
}

func TestCancel(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "faults.cpp", "spin")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.Run(ctx, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 1, Y: 1, Z: 1},
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's error", err)
	}
	var f *backend.Failure
	if errors.As(err, &f) {
		t.Errorf("cancellation reported as a kernel failure: %v", f)
	}
	copyWorks(t, b)
}

// TestConcurrentRuns runs programs from several goroutines at once on one
// Backend; requests to the shared runner are serialised.
func TestConcurrentRuns(t *testing.T) {
	b := newBackend(t, Options{})
	reduce := compileTU(t, b, "groups.cpp", "reduce")
	done := make(chan error, 8)
	for w := 0; w < 8; w++ {
		go func(w int) {
			in := make([]uint32, 64)
			var want uint32
			for i := range in {
				in[i] = uint32(w*1000 + i)
				want += in[i]
			}
			for k := 0; k < 5; k++ {
				res, err := reduce.Run(context.Background(), backend.Dispatch{
					Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 4)}},
					Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
					Threads:      backend.Dim3{X: 64, Y: 1, Z: 1},
				})
				if err != nil {
					done <- err
					return
				}
				if len(res.Outputs[1]) != 4 {
					done <- fmt.Errorf("goroutine %d: the sum came back as %d bytes", w, len(res.Outputs[1]))
					return
				}
				if got := u32s(res.Outputs[1])[0]; got != want {
					done <- fmt.Errorf("goroutine %d: sum %d, want %d", w, got, want)
					return
				}
			}
			done <- nil
		}(w)
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestSimdgroupBarrier(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "groups.cpp", "simd_barrier")
	const threads = 96
	for _, order := range []backend.Order{{Kind: "in-order"}, {Kind: "reversed"}, {Kind: "shuffle", Seed: 77}} {
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*2*threads)}},
			Threadgroups: backend.Dim3{X: 2, Y: 1, Z: 1},
			Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
			Order:        order,
		})
		for i, v := range u32s(res.Outputs[0]) {
			if want := uint32((i%threads)^1) + 1; v != want {
				t.Fatalf("%v: thread %d read %d, want %d", order, i, v, want)
			}
		}
	}
}

// TestOrders pins the sequence each thread order runs a threadgroup in: a
// kernel logs each thread as it runs, before and after a simd collective,
// for a threadgroup of three simd groups (the last one partial).
func TestOrders(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileTU(t, b, "groups.cpp", "order_log")
	const threads = 80
	logOf := func(o backend.Order) []uint32 {
		t.Helper()
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*(1+2*threads))}},
			Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
			Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
			Order:        o,
		})
		out := u32s(res.Outputs[0])
		if out[0] != 2*threads {
			t.Fatalf("%s: %d entries, want %d", o, out[0], 2*threads)
		}
		return out[1:]
	}
	seq := func(parts ...[]int) []uint32 {
		var s []uint32
		for _, p := range parts {
			for i := p[0]; i != p[1]; {
				s = append(s, uint32(i))
				if p[0] < p[1] {
					i++
				} else {
					i--
				}
			}
		}
		return s
	}
	for _, tt := range []struct {
		order backend.Order
		want  []uint32
	}{
		// Thread orders: every runnable thread once per step, so all log
		// before the collective, then all after.
		{backend.Order{Kind: "in-order"}, seq([]int{0, 80}, []int{0, 80})},
		{backend.Order{Kind: "reversed"}, seq([]int{79, -1}, []int{79, -1})},
		// Simd-group orders: one simd group runs through its collective
		// (which does not wait for the others) before the next starts.
		{backend.Order{Kind: "simd-ahead"}, seq([]int{0, 32}, []int{0, 32}, []int{32, 64}, []int{32, 64}, []int{64, 80}, []int{64, 80})},
		{backend.Order{Kind: "simd-reversed"}, seq([]int{64, 80}, []int{64, 80}, []int{32, 64}, []int{32, 64}, []int{0, 32}, []int{0, 32})},
	} {
		if got := logOf(tt.order); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s ran\n%v\nwant\n%v", tt.order, got, tt.want)
		}
	}
	// Seeded orders are permutations, the same for the same seed, other for
	// another seed.
	for _, kind := range []string{"shuffle", "simd-shuffle"} {
		a, a2, c := logOf(backend.Order{Kind: kind, Seed: 1}), logOf(backend.Order{Kind: kind, Seed: 1}), logOf(backend.Order{Kind: kind, Seed: 2})
		if fmt.Sprint(a) != fmt.Sprint(a2) {
			t.Errorf("%s(1) ran differently twice", kind)
		}
		if fmt.Sprint(a) == fmt.Sprint(c) {
			t.Errorf("%s(1) and %s(2) ran alike", kind, kind)
		}
		seen := map[uint32]int{}
		for _, x := range a {
			seen[x]++
		}
		for i := uint32(0); i < threads; i++ {
			if seen[i] != 2 {
				t.Fatalf("%s(1): thread %d logged %d times, want 2", kind, i, seen[i])
			}
		}
	}
	// A simd-group shuffle keeps each simd group's two entries together.
	sg := logOf(backend.Order{Kind: "simd-shuffle", Seed: 3})
	for i := 0; i < len(sg); {
		g := sg[i] / 32
		n := 32
		if g == 2 {
			n = 16
		}
		for j := i; j < i+2*n; j++ {
			if sg[j]/32 != g {
				t.Fatalf("simd-shuffle(3): simd group %d interleaved with %d at %d: %v", g, sg[j]/32, j, sg)
			}
		}
		i += 2 * n
	}
}

// TestProgramsRunAtOnce: a run holds its own program's lock, not the
// backend's, so that a pool of checks runs its variants' kernels at once,
// each in its runner: with one program in the middle of a request (its lock
// held), another program runs to completion. Close still waits for them.
func TestProgramsRunAtOnce(t *testing.T) {
	b := newBackend(t, Options{})
	a := compileTU(t, b, "groups.cpp", "reduce").(*program)
	c := compileTU(t, b, "groups.cpp", "reduce").(*program)
	in := make([]uint32, 64)
	d := backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 4), Output: true}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 64, Y: 1, Z: 1},
	}
	a.lock.Lock() // a's request in flight
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(context.Background(), d)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run beside another program's request: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Error("a run waited for another program's request: runs are serialised across programs")
	}
	a.lock.Unlock()
	run(t, a, d)
}
