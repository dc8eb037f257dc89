package cuda

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/prelude"
	"metalab/backend/runner"
	"metalab/internal/testenv"
	"metalab/translate"
)

// testCache is the cache the tests share, so the runner and the objects
// are built once per machine, not per test run.
func testCache() string { return filepath.Join(os.TempDir(), "metalab-cuda-test-cache") }

// toolBackend returns a Backend with nvcc, for tests that compile but run
// nothing; it skips without nvcc (under CI too: CI has no CUDA toolkit).
func toolBackend(t testing.TB, opts Options) *Backend {
	t.Helper()
	nvcc := testenv.RequireNVCC(t)
	if opts.NVCC == "" {
		opts.NVCC = nvcc
	}
	if opts.CacheDir == "" {
		opts.CacheDir = testCache()
	}
	b := New(opts)
	if err := b.toolchain(context.Background()); err != nil {
		t.Fatalf("toolchain: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// testArch is the architecture compile-only tests build for: the GPU
// machine's (an H200) unless $METALAB_CUDA_ARCH says otherwise.
func testArch() string {
	if a := os.Getenv("METALAB_CUDA_ARCH"); a != "" {
		return a
	}
	return "sm_90"
}

func readTU(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tu", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tuSource(t testing.TB, name, kernel string) CUSource {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "tu"))
	if err != nil {
		t.Fatal(err)
	}
	return CUSource{Name: name, CU: readTU(t, name), Kernel: kernel, Dir: dir}
}

func TestRegistered(t *testing.T) {
	b, ok := backend.Lookup("cuda")
	if !ok {
		t.Fatal("cuda is not registered")
	}
	if b.Name() != "cuda" {
		t.Errorf("Name() = %q", b.Name())
	}
}

func TestEnvOptions(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want Options
	}{
		{nil, Options{}},
		{map[string]string{"METALAB_CUDA_DEVICE": "2", "METALAB_CUDA_RACECHECK": "true"}, Options{Device: 2, Racecheck: true}},
		{map[string]string{"METALAB_CUDA_DEVICE": "-1", "METALAB_CUDA_RACECHECK": "maybe"}, Options{}},
		{map[string]string{"METALAB_CUDA_RUNNERS": "18"}, Options{Runners: 18}},
		{map[string]string{"METALAB_CUDA_RUNNERS": "0"}, Options{}},
		{map[string]string{"METALAB_CUDA_RUNNERS": "many"}, Options{}},
	}
	for _, tt := range tests {
		got := EnvOptions(func(k string) string { return tt.env[k] })
		if got.Device != tt.want.Device || got.Racecheck != tt.want.Racecheck || got.Runners != tt.want.Runners {
			t.Errorf("EnvOptions(%v) = device %d racecheck %v runners %d, want %d %v %d", tt.env, got.Device, got.Racecheck, got.Runners,
				tt.want.Device, tt.want.Racecheck, tt.want.Runners)
		}
	}
	if b := New(Options{Runners: 9}); b.pool.Max != 9 {
		t.Errorf("Options.Runners 9: the pool keeps %d", b.pool.Max)
	}
	if b := New(Options{}); b.pool.Max != maxLiveRunners {
		t.Errorf("no Options.Runners: the pool keeps %d, want %d", b.pool.Max, maxLiveRunners)
	}
}

func TestNoNVCC(t *testing.T) {
	b := New(Options{NVCC: "/nonexistent/nvcc", CacheDir: t.TempDir()})
	ok, why := b.Available(context.Background())
	if ok || !strings.Contains(why, "no nvcc") || !strings.Contains(why, "/nonexistent/nvcc") {
		t.Errorf("Available = %v, %q; want false naming the missing nvcc", ok, why)
	}
	b.opts.Translate = func(context.Context, backend.Source, *translate.Preprocessor) ([]byte, string, error) {
		return nil, "", errors.New("unreached")
	}
	_, err := b.Compile(context.Background(), backend.Source{Name: "k.metal", Entry: "k"})
	var f *backend.Failure
	if !errors.As(err, &f) || f.Kind != backend.Unavailable || !strings.Contains(f.Msg, "no nvcc") {
		t.Errorf("Compile = %v, want an Unavailable failure naming nvcc", err)
	}
}

// TestNoCXX: with nvcc but no C++ compiler for the translation's
// preprocessor, Available says so, naming the compiler.
func TestNoCXX(t *testing.T) {
	nvcc := testenv.RequireNVCC(t)
	b := New(Options{NVCC: nvcc, CXX: "/nonexistent/g++", CacheDir: t.TempDir()})
	ok, why := b.Available(context.Background())
	if ok || !strings.Contains(why, "preprocessor") || !strings.Contains(why, "/nonexistent/g++") {
		t.Errorf("Available = %v, %q; want false naming the missing C++ compiler", ok, why)
	}
}

func TestCompileWithoutTranslator(t *testing.T) {
	old := TranslateCUDA
	TranslateCUDA = nil
	defer func() { TranslateCUDA = old }()
	b := New(Options{CacheDir: t.TempDir()})
	_, err := b.Compile(context.Background(), backend.Source{Name: "k.metal", Text: []byte("kernel void k() {}"), Entry: "k"})
	var f *backend.Failure
	if !errors.As(err, &f) || f.Kind != backend.Unavailable || f.Msg != "the CUDA translation target is not built yet" {
		t.Fatalf("Compile = %v, want Unavailable: the CUDA translation target is not built yet", err)
	}
}

func TestCheckModeUnavailable(t *testing.T) {
	b := New(Options{CacheDir: t.TempDir(), Translate: func(context.Context, backend.Source, *translate.Preprocessor) ([]byte, string, error) {
		return nil, "", nil
	}})
	_, err := b.Compile(context.Background(), backend.Source{Name: "k.metal", Entry: "k", Check: true})
	var f *backend.Failure
	if !errors.As(err, &f) || f.Kind != backend.Unavailable || !strings.Contains(f.Msg, "no checking mode") {
		t.Fatalf("Compile(Check) = %v, want Unavailable: no checking mode", err)
	}
}

func TestParseHello(t *testing.T) {
	var e runner.Encoder
	e.Str("cuda runner; device 0 of 1: NVIDIA H200")
	e.U8(1)
	e.Str("")
	e.Str("NVIDIA H200")
	e.U32(9)
	e.U32(0)
	e.U32(13000)
	e.U32(13000)
	e.U32(132)
	e.U64(150 << 30)
	e.U32(1024)
	e.U64(48 << 10)
	e.U64(227 << 10)
	e.U32(1)
	e.U32(0)
	h, err := parseHello(e.B)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Ready || h.Arch() != "sm_90" || h.SMs != 132 || h.SharedOptin != 227<<10 || h.Devices != 1 {
		t.Errorf("parseHello = %+v", h)
	}
	if got, want := h.Describe(), "NVIDIA H200 (sm_90, 132 SMs, 150.0 GiB; driver 13.0, runtime 13.0)"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	// The cpu runner's HELLO is one string: not the cuda runner.
	var c runner.Encoder
	c.Str("fibers x86_64; 2 workers")
	if _, err := parseHello(c.B); err == nil {
		t.Error("a cpu runner's HELLO parsed as the cuda runner's")
	}
}

// TestPreludeIncludes checks that the cuda mtl_rt.h includes every
// standard header the prelude does, before its execution-space layer: a
// standard header first included after `#define inline ...` would be
// rewritten by it.
func TestPreludeIncludes(t *testing.T) {
	rt, err := os.ReadFile(filepath.Join("runtime", "mtl_rt.h"))
	if err != nil {
		t.Fatal(err)
	}
	layer := strings.Index(string(rt), "#define inline")
	if layer < 0 {
		t.Fatal("runtime/mtl_rt.h has no execution-space layer")
	}
	angle := regexp.MustCompile(`(?m)^\s*#\s*include\s*<([^>]+)>`)
	have := map[string]bool{}
	for _, m := range angle.FindAllStringSubmatch(string(rt[:layer]), -1) {
		have[m[1]] = true
	}
	var missing []string
	err = fsWalk(prelude.FS, func(name string, text []byte) {
		for _, m := range angle.FindAllStringSubmatch(string(text), -1) {
			inc := m[1]
			if strings.HasPrefix(inc, "metal_") || strings.HasPrefix(inc, "simd/") || have[inc] {
				continue
			}
			missing = append(missing, name+": <"+inc+">")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the prelude includes standard headers runtime/mtl_rt.h does not include before its layer:\n%s", strings.Join(missing, "\n"))
	}
}

// fsWalk calls f with every file of fsys.
func fsWalk(fsys fs.FS, f func(name string, text []byte)) error {
	return fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		f(path, b)
		return nil
	})
}

// TestTranslateFailures: what the translation refuses or rejects comes
// back as the cpu backend's failures, before nvcc or a GPU is needed.
func TestTranslateFailures(t *testing.T) {
	testenv.RequireCXX(t)
	b := New(Options{CacheDir: t.TempDir()})
	tests := []struct {
		name, text, entry string
		kind              backend.FailureKind
		msg               string
	}{
		{"refused", "kernel void k(device float* o [[buffer(0)]]) { asm(\"trap;\"); }\n", "k", backend.Refused, "k.metal:1:"},
		{"unknown entry", "kernel void k(device float* o [[buffer(0)]]) { o[0] = 1; }\n", "nope", backend.CompileError, `unknown entry "nope"`},
		{"preprocessor", "#error stop here\nkernel void k() {}\n", "k", backend.CompileError, "stop here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.translate(context.Background(), backend.Source{Name: "k.metal", Text: []byte(tt.text), Entry: tt.entry})
			var f *backend.Failure
			if !errors.As(err, &f) || f.Kind != tt.kind || !strings.Contains(f.Msg, tt.msg) {
				t.Errorf("translate = %v, want a %s failure containing %q", err, tt.kind, tt.msg)
			}
		})
	}
	cu, err := b.translate(context.Background(), backend.Source{Name: "k.metal", Text: []byte("kernel void k(device float* o [[buffer(0)]]) { o[0] = 1; }\n"), Entry: "k"})
	if err != nil || cu.Kernel != "k" || !strings.Contains(string(cu.CU), "MTL_CUDA_KERNEL(0,") || cu.Dir != "" {
		t.Errorf("translate = %+v, %v; want a self-contained TU exporting k", cu, err)
	}
}
