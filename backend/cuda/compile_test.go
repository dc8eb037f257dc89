package cuda

import (
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend"
	"metalab/backend/runner"
)

// The tests in this file need nvcc, not a GPU: they compile for
// testArch() and run the runner where there is no GPU.

// TestCompileTUs compiles every hand-written TU, each a form the CUDA
// target emits, as device code for the GPU machine's architecture. parity
// and idioms include the whole prelude: they are what keeps it compiling
// for the GPU (a prelude function the execution-space layer does not reach
// fails here with "calling a __host__ function").
func TestCompileTUs(t *testing.T) {
	b := toolBackend(t, Options{})
	ctx := context.Background()
	tus := []string{"parity.cu", "idioms.cu", "groups.cu", "faults.cu", "race.cu"}
	objects := make([]string, len(tus))
	t.Run("compile", func(t *testing.T) {
		for i, name := range tus {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				so, err := b.compileObject(ctx, tuSource(t, name, ""), testArch(), false)
				if err != nil {
					var f *backend.Failure
					if errors.As(err, &f) {
						t.Fatalf("%s: %s\n%s", name, f.Msg, f.Log)
					}
					t.Fatal(err)
				}
				syms := dynamicSymbols(t, so)
				for _, want := range []string{"mtl_cuda_kernels", "mtl_cuda_abi"} {
					if !syms[want] {
						t.Errorf("%s exports no %s", filepath.Base(so), want)
					}
				}
				objects[i] = so
			})
		}
	})
	if t.Failed() {
		return
	}
	// Compiled again, each is the cached object: nvcc does not run.
	before := b.compilerRuns.Load()
	for i, name := range tus {
		again, err := b.compileObject(ctx, tuSource(t, name, ""), testArch(), false)
		if err != nil || again != objects[i] {
			t.Errorf("%s: second compile = %q, %v; want the cached %q", name, again, err, objects[i])
		}
	}
	if n := b.compilerRuns.Load() - before; n != 0 {
		t.Errorf("the second compiles ran nvcc %d times, want 0 (cached)", n)
	}
}

func dynamicSymbols(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			out[s.Name] = true
		}
	}
	return out
}

func TestCompileError(t *testing.T) {
	b := toolBackend(t, Options{})
	_, err := b.compileObject(context.Background(), tuSource(t, "broken.cu", "f"), testArch(), false)
	var f *backend.Failure
	if !errors.As(err, &f) || f.Kind != backend.CompileError {
		t.Fatalf("compile broken.cu = %v, want a CompileError failure", err)
	}
	if want := `kernels/broken.metal(7): error: identifier "undeclared_name" is undefined`; f.Msg != want {
		t.Errorf("Msg = %q, want %q", f.Msg, want)
	}
}

// TestCacheIntegrity damages a cached object: the next compile must notice
// (its sha256 no longer matches) and rebuild it rather than load it.
func TestCacheIntegrity(t *testing.T) {
	b := toolBackend(t, Options{CacheDir: t.TempDir()})
	ctx := context.Background()
	src := tuSource(t, "groups.cu", "")
	so, err := b.compileObject(ctx, src, testArch(), false)
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(so, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	before := b.compilerRuns.Load()
	again, err := b.compileObject(ctx, src, testArch(), false)
	if err != nil || again != so {
		t.Fatalf("recompile = %q, %v", again, err)
	}
	if n := b.compilerRuns.Load() - before; n != 1 {
		t.Errorf("nvcc ran %d times for a damaged object, want 1", n)
	}
	if got, _ := os.ReadFile(so); len(got) != len(good) {
		t.Errorf("rebuilt object has %d bytes, want %d", len(got), len(good))
	}
}

// tgmemKernels are the kernels of testdata/tgmem/tgmem.metal: static
// threadgroup memory in one array, in several that need no padding, in
// several that do, and in a helper.
func tgmemKernels(t testing.TB) []bundledKernel {
	t.Helper()
	return fileKernels(t, filepath.Join("testdata", "tgmem", "tgmem.metal"))
}

// TestStaticSharedMemory translates tgmem.metal's kernels and holds the
// static shared memory nvcc allocates (what cudaFuncGetAttributes reports
// on the GPU, which TestGPUThreadgroupMemory checks) and ThreadgroupMemory
// (Metal's rule over the TU's table) to msl's estimate: ThreadgroupMemory
// is the estimate; nvcc's figure is it where Metal's layout needs no
// padding or rounding, and lies between the declarations' sizes and it
// elsewhere (nvcc packs the declarations its own way and does not round
// the total up to 16 bytes).
func TestStaticSharedMemory(t *testing.T) {
	b := toolBackend(t, Options{})
	ks := tgmemKernels(t)
	if len(ks) != 4 {
		t.Fatalf("tgmem.metal has %d kernels, want 4", len(ks))
	}
	for _, k := range ks {
		t.Run(k.src.Entry, func(t *testing.T) {
			fg := figures(t, b, k)
			t.Logf("msl %d bytes (declarations %d), ThreadgroupMemory %d, nvcc %d (+%d reserved)", fg.msl, fg.sum, fg.metal, fg.nvcc, fg.reserved)
			fg.check(t, k.name)
		})
	}
}

// runnerBackend returns a toolBackend with its runner built and started,
// for the tests that talk to the runner where there is no GPU.
func runnerBackend(t *testing.T) *Backend {
	t.Helper()
	b := toolBackend(t, Options{})
	if gpuPresent() {
		t.Skip("this machine has an NVIDIA GPU: the GPU tests cover the runner")
	}
	ctx := context.Background()
	path, err := b.buildRunner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b.runnerPath = path
	return b
}

// TestRunnerWithoutGPU starts the cuda runner where there is no GPU: it
// must say so in its HELLO, and refuse what needs a GPU after checking what
// does not (the object loads and is a cuda kernel object). A runner loads
// one kernel object in its life: each object gets a runner of its own, and
// a second object is refused.
func TestRunnerWithoutGPU(t *testing.T) {
	b := runnerBackend(t)
	ctx := context.Background()
	b.mu.Lock()
	defer b.mu.Unlock()
	start := func() *runner.Proc {
		p, err := b.startRunner(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	p := start()
	gpu, err := parseHello(p.HelloReply)
	if err != nil {
		t.Fatal(err)
	}
	if gpu.Ready || gpu.Error == "" || !strings.Contains(p.Hello, "no GPU") {
		t.Fatalf("HELLO = %q (%+v), want no GPU and why", p.Hello, gpu)
	}
	t.Logf("runner: %s", p.Hello)
	so, err := b.compileObject(ctx, tuSource(t, "groups.cu", ""), testArch(), false)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.so")
	if out, err := exec.Command(b.nvcc[0], "-shared", "-Xcompiler", "-fPIC", "-o", other, writeFile(t, "other.cu", "extern \"C\" int other = 1;\n")).CombinedOutput(); err != nil {
		t.Fatalf("build other.so: %v\n%s", err, out)
	}
	tests := []struct {
		so, kernel, want string
	}{
		{so, "reduce", "no GPU"},
		{so, "nope", "kernel nope not found in " + so + " (has: reduce, positions, simd, tgbuf, simd_barrier, lanes, barriers)"},
		{other, "reduce", "not a cuda kernel object"},
		{filepath.Join(t.TempDir(), "missing.so"), "reduce", "dlopen:"},
	}
	for _, tt := range tests {
		r := p
		if tt.so != so {
			r = start()
		}
		_, err := r.Load(ctx, tt.so, tt.kernel, 0, loadTimeout)
		var re *runner.Error
		if !errors.As(err, &re) || !strings.Contains(re.Msg, tt.want) {
			t.Errorf("LOAD %s %s = %v, want an ERR reply containing %q", filepath.Base(tt.so), tt.kernel, err, tt.want)
		}
	}
	if _, err := p.Load(ctx, other, "reduce", 0, loadTimeout); err == nil || !strings.Contains(err.Error(), "already loaded") {
		t.Errorf("a second kernel object in one runner: %v, want it refused (already loaded)", err)
	}
	// The runner is alive after all that.
	if _, err := p.Call(ctx, runner.MsgReset, nil, loadTimeout); err != nil {
		t.Errorf("RESET after refused loads: %v", err)
	}
	var e runner.Encoder
	e.U32(40)
	e.U8(runner.BufDevice)
	e.U64(4)
	e.U8(1)
	e.U32(7)
	if _, err := p.Call(ctx, runner.MsgBuffer, e.B, loadTimeout); err == nil || !strings.Contains(err.Error(), "binds [[buffer(0..30)]]") {
		t.Errorf("BUFFER at index 40 = %v, want a refusal naming the indices", err)
	}
}

// TestAvailableWithoutGPU: with nvcc but no GPU, Available says that at
// once, without running nvcc or building anything.
func TestAvailableWithoutGPU(t *testing.T) {
	b := toolBackend(t, Options{CacheDir: t.TempDir()})
	if gpuPresent() {
		t.Skip("this machine has an NVIDIA GPU")
	}
	start := time.Now()
	ok, why := b.Available(context.Background())
	if ok || !strings.Contains(why, "no NVIDIA GPU") || !strings.Contains(why, "nvcc is installed") {
		t.Errorf("Available = %v, %q; want false: nvcc is installed, but no GPU", ok, why)
	}
	if b.runnerPath != "" || b.devErr != nil {
		t.Errorf("Available set the device up (runner %q, %v) on a machine without a GPU", b.runnerPath, b.devErr)
	}
	t.Logf("%q in %v", why, time.Since(start))
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
