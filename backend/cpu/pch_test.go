package cpu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend"
)

// add1 is a small kernel whose translation includes the prelude.
const add1 = `#include <metal_stdlib>
using namespace metal;
kernel void add1(device uint* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] += %d; }
`

func add1Source(n int) backend.Source {
	return backend.Source{Name: "add1.metal", Text: []byte(fmt.Sprintf(add1, n)), Entry: "add1"}
}

// runAdd1 runs p on {1,2,3,4} and checks it added n.
func runAdd1(t *testing.T, p backend.Program, n uint32) {
	t.Helper()
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{1, 2, 3, 4}), Output: true}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 4, Y: 1, Z: 1},
	})
	if got := u32s(res.Outputs[0]); got[0] != 1+n || got[3] != 4+n {
		t.Fatalf("out = %v, want {1,2,3,4} + %d", got, n)
	}
}

// freshCache returns an empty cache directory holding only the shared
// test cache's runners, so that a test of the precompiled prelude does not
// build a runner.
func freshCache(t *testing.T) string {
	t.Helper()
	newBackend(t, Options{}) // the shared cache has the runner
	dir := t.TempDir()
	runners, _ := filepath.Glob(filepath.Join(testCache(), "runner-*"))
	for _, r := range runners {
		dst := filepath.Join(dir, filepath.Base(r))
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"runner", "runner.sha256"} {
			b, err := os.ReadFile(filepath.Join(r, name))
			if err != nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(dst, name), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func pchDirs(t *testing.T, root string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "pch-*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestBuildPCH: the first compile of a mode builds its precompiled prelude
// into the cache, once; a second Backend on the cache uses it without
// building it; a damaged one (truncated) is rebuilt, never given to the
// compiler; the object's cache key does not depend on it.
func TestBuildPCH(t *testing.T) {
	dir := freshCache(t)
	ctx := context.Background()
	b := newBackend(t, Options{CacheDir: dir})
	p, err := b.Compile(ctx, add1Source(1))
	if err != nil {
		t.Fatal(err)
	}
	runAdd1(t, p, 1)
	if n := b.pchBuilt.Load(); n != 1 {
		t.Fatalf("%d precompiled-prelude builds, want 1", n)
	}
	pchs := pchDirs(t, dir)
	if len(pchs) != 1 {
		t.Fatalf("pch dirs %v, want one", pchs)
	}
	gch := filepath.Join(pchs[0], pchHeader+".gch")
	if !verifyObject(gch) {
		t.Fatal("the precompiled prelude has no recorded sum")
	}
	if _, err := b.Compile(ctx, add1Source(2)); err != nil {
		t.Fatal(err)
	}
	if n := b.pchBuilt.Load(); n != 1 {
		t.Errorf("%d builds after a second kernel, want 1", n)
	}

	b2 := newBackend(t, Options{CacheDir: dir})
	p2, err := b2.Compile(ctx, add1Source(3))
	if err != nil {
		t.Fatal(err)
	}
	runAdd1(t, p2, 3)
	if n := b2.pchBuilt.Load(); n != 0 {
		t.Errorf("a second Backend built the precompiled prelude %d times, want 0", n)
	}

	if err := os.Truncate(gch, 1000); err != nil {
		t.Fatal(err)
	}
	b3 := newBackend(t, Options{CacheDir: dir})
	p3, err := b3.Compile(ctx, add1Source(4))
	if err != nil {
		t.Fatalf("compile after the .gch was damaged: %v", err)
	}
	runAdd1(t, p3, 4)
	if n := b3.pchBuilt.Load(); n != 1 {
		t.Errorf("a damaged precompiled prelude: %d builds, want 1 (rebuilt)", n)
	}
	if !verifyObject(gch) {
		t.Error("the rebuilt precompiled prelude does not match its sum")
	}

	// Without the precompiled prelude a kernel compiled with it is a
	// cache hit: the key leaves it out.
	b4 := newBackend(t, Options{CacheDir: dir})
	b4.noPCH = true
	runs := b4.compilerRuns.Load()
	if _, err := b4.Compile(ctx, add1Source(4)); err != nil {
		t.Fatal(err)
	}
	if n := b4.compilerRuns.Load() - runs; n != 0 {
		t.Errorf("the compiler ran %d times for an object built with the precompiled prelude", n)
	}
}

// TestBuildPCHRefused: a compiler that refuses to precompile the prelude
// leaves the refusal in the cache: kernels compile without it, and no
// later Backend tries again.
func TestBuildPCHRefused(t *testing.T) {
	dir := freshCache(t)
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	wrap := filepath.Join(t.TempDir(), "cxx")
	script := "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = c++-header ] && { echo 'error: no precompiled headers here' >&2; exit 1; }; done\nexec " + cxx + " \"$@\"\n"
	if err := os.WriteFile(wrap, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := newBackend(t, Options{CacheDir: dir, CXX: wrap, NoSandbox: true})
	p, err := b.Compile(ctx, add1Source(5))
	if err != nil {
		t.Fatal(err)
	}
	runAdd1(t, p, 5)
	if n := b.pchBuilt.Load(); n != 1 {
		t.Fatalf("%d tries to precompile, want 1", n)
	}
	pchs := pchDirs(t, dir)
	if len(pchs) != 1 {
		t.Fatalf("pch dirs %v", pchs)
	}
	log, err := os.ReadFile(filepath.Join(pchs[0], pchRefused))
	if err != nil || !strings.Contains(string(log), "no precompiled headers here") {
		t.Fatalf("refusal record: %q, %v", log, err)
	}
	b2 := newBackend(t, Options{CacheDir: dir, CXX: wrap, NoSandbox: true})
	if _, err := b2.Compile(ctx, add1Source(6)); err != nil {
		t.Fatal(err)
	}
	if n := b2.pchBuilt.Load(); n != 0 {
		t.Errorf("a second Backend tried to precompile %d times after the refusal, want 0", n)
	}

	// A compiler that builds the precompiled prelude but then cannot use
	// it: the kernel is compiled again without it, and so are the next.
	dir = freshCache(t)
	fails := filepath.Join(t.TempDir(), "fails")
	script = "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -include ] && { echo x >> " + fails +
		"; echo 'fatal error: metal_pch.h.gch: had text segment at different address' >&2; exit 1; }; done\nexec " + cxx + " \"$@\"\n"
	if err := os.WriteFile(wrap, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b3 := newBackend(t, Options{CacheDir: dir, CXX: wrap, NoSandbox: true})
	for n := 8; n < 10; n++ {
		p, err := b3.Compile(ctx, add1Source(n))
		if err != nil {
			t.Fatalf("compile with a precompiled prelude the compiler cannot use: %v", err)
		}
		runAdd1(t, p, uint32(n))
	}
	if log, _ := os.ReadFile(fails); strings.Count(string(log), "x") != 1 {
		t.Errorf("%d compiles were given the broken precompiled prelude, want 1", strings.Count(string(log), "x"))
	}

	// A precompile past the compile time limit (a loaded machine) is no
	// refusal: nothing is recorded, and the kernel compiles without it.
	dir = freshCache(t)
	script = "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = c++-header ] && exec sleep 60; done\nexec " + cxx + " \"$@\"\n"
	if err := os.WriteFile(wrap, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b4 := newBackend(t, Options{CacheDir: dir, CXX: wrap, NoSandbox: true, CompileTimeout: 8 * time.Second})
	p, err = b4.Compile(ctx, add1Source(11))
	if err != nil {
		t.Fatalf("compile after the precompile timed out: %v", err)
	}
	runAdd1(t, p, 11)
	if pchs := pchDirs(t, dir); len(pchs) != 0 {
		t.Errorf("a timed-out precompile left %v in the cache", pchs)
	}
	if _, err := b4.Compile(ctx, add1Source(12)); err != nil {
		t.Fatal(err)
	}
	if n := b4.pchBuilt.Load(); n != 1 {
		t.Errorf("%d precompiles after one timed out, want 1 (not again in this Backend)", n)
	}
}

// TestCompileBoth: CompileBoth gives a plain and a checking program of one
// source, as two Compiles would; an error of the source is both modes'.
func TestCompileBoth(t *testing.T) {
	b := newBackend(t, Options{})
	ctx := context.Background()
	plain, checking, perr, cerr := backend.CompileBoth(ctx, b, add1Source(7))
	if perr != nil || cerr != nil {
		t.Fatalf("CompileBoth: %v, %v", perr, cerr)
	}
	if plain.(*program).checking || !checking.(*program).checking {
		t.Fatalf("modes: plain %v, checking %v", plain.(*program).checking, checking.(*program).checking)
	}
	runAdd1(t, plain, 7)
	runAdd1(t, checking, 7)
	// The same objects as Compile's: cache hits.
	runs := b.compilerRuns.Load()
	for _, check := range []bool{false, true} {
		s := add1Source(7)
		s.Check = check
		if _, err := b.Compile(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.compilerRuns.Load() - runs; n != 0 {
		t.Errorf("Compile after CompileBoth ran the compiler %d times, want 0", n)
	}
	bad := backend.Source{Name: "bad.metal", Text: []byte("kernel void k(device uint* a [[buffer(0)]]) { undeclared = 1; }\n"), Entry: "k"}
	_, _, perr, cerr = b.CompileBoth(ctx, bad)
	for _, err := range []error{perr, cerr} {
		wantFailure(t, err, backend.CompileError, "")
	}
}

// TestBuildPCHConcurrent: Backends (as separate metalab processes would)
// compiling at once on an empty cache each build the precompiled prelude
// in a private directory; one is installed, and every kernel compiles and
// runs.
func TestBuildPCHConcurrent(t *testing.T) {
	dir := freshCache(t)
	ctx := context.Background()
	const n = 2
	bs := make([]*Backend, n)
	for i := range bs {
		bs[i] = newBackend(t, Options{CacheDir: dir})
	}
	progs := make([]backend.Program, n)
	errs := make([]error, n)
	done := make(chan int)
	for i := range bs {
		go func() {
			progs[i], errs[i] = bs[i].Compile(ctx, add1Source(20+i))
			done <- i
		}()
	}
	for range bs {
		<-done
	}
	for i := range bs {
		if errs[i] != nil {
			t.Fatalf("backend %d: %v", i, errs[i])
		}
		runAdd1(t, progs[i], uint32(20+i))
	}
	pchs := pchDirs(t, dir)
	if len(pchs) != 1 || !verifyObject(filepath.Join(pchs[0], pchHeader+".gch")) {
		t.Fatalf("pch dirs %v, want one, verified", pchs)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-pch-*")); len(left) != 0 {
		t.Errorf("temporaries left: %v", left)
	}
}
