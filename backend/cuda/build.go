package cuda

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"metalab/backend"
	"metalab/backend/internal/buildcache"
	"metalab/backend/runner"
)

// runtimeFS holds the runner's source and the headers a kernel TU is
// compiled against (mtl_rt.h for the prelude, mtl_cuda.h and
// mtl_cuda_abi.h for the TU). protocol.h and serve.h are package runner's.
//
//go:embed runtime/*.h runtime/*.cpp
var runtimeFS embed.FS

// runnerFlags are the flags the runner (host code only) is built with.
var runnerFlags = []string{"-std=c++17", "-O2", "-Xcompiler", "-pthread", "-cudart", "shared"}

// KernelFlags are the nvcc flags every kernel TU is compiled with, besides
// -arch, include directories and defines. They pin down what Metal defines
// and CUDA leaves to the compiler: no contraction of a*b+c into an FMA
// (--fmad=false), IEEE division and square root and no flushing of
// subnormals (the defaults, spelled out). --expt-relaxed-constexpr lets
// device code call the prelude's constexpr functions, and a call from the
// prelude's __host__ __device__ code to a host-only function is an error
// rather than a warning. The object links the CUDA runtime as a shared
// library, the one the runner drives.
var KernelFlags = []string{
	"-std=c++17", "-O3", "--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true",
	"--expt-relaxed-constexpr", "-Werror", "cross-execution-space-call",
	"-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
}

// noNVCC is the reason given when nvcc is not found.
const noNVCC = "no nvcc: install the CUDA toolkit (nvcc on PATH, or set NVCC or CUDA_HOME)"

// findNVCC returns the nvcc command: opt, else $NVCC, else nvcc on $PATH,
// in $CUDA_HOME/bin or in /usr/local/cuda/bin.
func findNVCC(opt string) ([]string, error) {
	if opt == "" {
		opt = os.Getenv("NVCC")
	}
	if cmd := strings.Fields(opt); len(cmd) > 0 {
		p, err := exec.LookPath(cmd[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %s not found: %w", noNVCC, cmd[0], err)
		}
		return append([]string{p}, cmd[1:]...), nil
	}
	if p, err := exec.LookPath("nvcc"); err == nil {
		return []string{p}, nil
	}
	for _, dir := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "bin", "nvcc")
		if info, err := os.Stat(p); err == nil && info.Mode()&0o111 != 0 {
			return []string{p}, nil
		}
	}
	return nil, errors.New(noNVCC)
}

// nvccVersion returns nvcc's release line, "Cuda compilation tools,
// release 11.8, V11.8.89".
func nvccVersion(ctx context.Context, nvcc []string) (string, error) {
	out, err := exec.CommandContext(ctx, nvcc[0], append(nvcc[1:], "--version")...).Output()
	if err != nil {
		return "", fmt.Errorf("%s: %s --version: %w", noNVCC, strings.Join(nvcc, " "), err)
	}
	var last string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			last = line
			if strings.Contains(line, "release") {
				return line, nil
			}
		}
	}
	return last, nil
}

var libFlag = regexp.MustCompile(`-L"?([^"\s]+)"?`)

// nvccLibDirs returns the directories nvcc links the CUDA runtime from
// (its -L flags, stub libraries left out), so the runner can find
// libcudart at run time (an rpath) in its sparse environment.
func nvccLibDirs(ctx context.Context, nvcc []string) []string {
	out, err := exec.CommandContext(ctx, nvcc[0], append(nvcc[1:], "-dryrun", "-o", "x", "x.cu")...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "LIBRARIES=") {
			continue
		}
		for _, m := range libFlag.FindAllStringSubmatch(line, -1) {
			if d := filepath.Clean(m[1]); filepath.Base(d) != "stubs" {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// sanitizer returns the compute-sanitizer command for racecheck.
func (b *Backend) sanitizer() ([]string, error) {
	opt := b.opts.Sanitizer
	if opt == "" {
		opt = os.Getenv("COMPUTE_SANITIZER")
	}
	if cmd := strings.Fields(opt); len(cmd) > 0 {
		p, err := exec.LookPath(cmd[0])
		if err != nil {
			return nil, fmt.Errorf("racecheck: %s not found: %w", cmd[0], err)
		}
		return append([]string{p}, cmd[1:]...), nil
	}
	if p, err := exec.LookPath("compute-sanitizer"); err == nil {
		return []string{p}, nil
	}
	if len(b.nvcc) > 0 {
		bin := filepath.Dir(b.nvcc[0])
		for _, p := range []string{filepath.Join(bin, "compute-sanitizer"), filepath.Join(filepath.Dir(bin), "compute-sanitizer", "compute-sanitizer")} {
			if info, err := os.Stat(p); err == nil && info.Mode()&0o111 != 0 {
				return []string{p}, nil
			}
		}
	}
	return nil, errors.New("racecheck: compute-sanitizer is not installed (it comes with the CUDA toolkit; put it on PATH or set COMPUTE_SANITIZER)")
}

// hashRuntime hashes the runtime sources and the headers shared with the
// cpu runner (protocol.h, serve.h) into h.
func hashRuntime(h interface{ Write([]byte) (int, error) }) error {
	if err := buildcache.HashFS(h, runtimeFS); err != nil {
		return err
	}
	runner.HashHeaders(h)
	return nil
}

// writeRuntime writes the runtime sources and the shared headers under
// dir/runtime.
func writeRuntime(dir string) error {
	if err := buildcache.WriteFS(runtimeFS, dir); err != nil {
		return err
	}
	return runner.WriteHeaders(filepath.Join(dir, "runtime"))
}

// buildRunner compiles the runner into the cache (once per source and
// nvcc) and returns the executable's path.
func (b *Backend) buildRunner(ctx context.Context) (string, error) {
	h := sha256.New()
	if err := hashRuntime(h); err != nil {
		return "", fmt.Errorf("hash runner sources: %w", err)
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s", b.nvccID, strings.Join(runnerFlags, " "), strings.Join(b.libDirs, ":"), runtime.GOOS, runtime.GOARCH)
	dir := filepath.Join(b.root, "runner-"+hex.EncodeToString(h.Sum(nil))[:24])
	exe := filepath.Join(dir, "runner")
	if _, err := os.Stat(dir); err == nil && !buildcache.Verify(exe) {
		os.RemoveAll(dir) // a damaged runner is rebuilt, never run
	}
	err := buildcache.InstallDir(dir, func(tmp string) error {
		if err := writeRuntime(tmp); err != nil {
			return err
		}
		args := append([]string{}, b.nvcc[1:]...)
		args = append(args, runnerFlags...)
		for _, d := range b.libDirs {
			args = append(args, "-Xlinker", "-rpath="+d)
		}
		args = append(args, "-o", filepath.Join(tmp, "runner.tmp"), filepath.Join(tmp, "runtime", "runner.cpp"), "-Xlinker", "-ldl")
		cmd := exec.CommandContext(ctx, b.nvcc[0], args...)
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build runner: %w\n%s", err, out.String())
		}
		return buildcache.Record(filepath.Join(tmp, "runner.tmp"), filepath.Join(tmp, "runner"))
	})
	if err != nil {
		return "", err
	}
	return exe, nil
}

// installHeaders writes the cuda runtime headers and the prelude under the
// cache and returns the include directories for kernel compiles: the
// runtime first, so the prelude's #include "mtl_rt.h" finds the cuda one.
func (b *Backend) installHeaders() ([]string, error) {
	h := sha256.New()
	if err := hashRuntime(h); err != nil {
		return nil, err
	}
	fmt.Fprintf(h, "\x00prelude %s\x00", b.opts.PreludeVersion)
	if b.opts.Prelude != nil {
		if err := buildcache.HashFS(h, b.opts.Prelude); err != nil {
			return nil, fmt.Errorf("hash prelude: %w", err)
		}
	}
	dir := filepath.Join(b.root, "include-"+hex.EncodeToString(h.Sum(nil))[:24])
	err := buildcache.InstallDir(dir, func(tmp string) error {
		if err := writeRuntime(tmp); err != nil {
			return err
		}
		pre := filepath.Join(tmp, "prelude")
		if err := os.MkdirAll(pre, 0o755); err != nil {
			return err
		}
		if b.opts.Prelude != nil {
			return buildcache.WriteFS(b.opts.Prelude, pre)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("install headers: %w", err)
	}
	return []string{filepath.Join(dir, "runtime"), filepath.Join(dir, "prelude")}, nil
}

// A CUSource is a CUDA TU implementing the runtime/mtl_cuda.h contract.
type CUSource struct {
	Name    string            // for diagnostics
	CU      []byte            // the TU
	Kernel  string            // entry in its mtl_cuda_kernels table
	Dir     string            // extra include directory, "" for none
	Defines map[string]string // -D NAME=VALUE
}

// compileObject builds in for arch into a cached shared object and returns
// its path. The cache key covers the TU, the headers, nvcc, the flags, the
// defines and the headers in the source directory; a cached object is
// used only if its content still has the sha256 recorded when it was
// built. With lineinfo the object carries line tables (racecheck names
// source lines with them).
func (b *Backend) compileObject(ctx context.Context, in CUSource, arch string, lineinfo bool) (string, error) {
	if err := b.toolchain(ctx); err != nil {
		return "", &backend.Failure{Kind: backend.Unavailable, Msg: err.Error()}
	}
	args := append([]string{}, KernelFlags...)
	args = append(args, "-arch="+arch)
	if lineinfo {
		args = append(args, "-lineinfo")
	}
	if b.flagEdit != nil {
		args = b.flagEdit(args)
	}
	for _, inc := range b.incs {
		args = append(args, "-I"+inc)
	}
	if in.Dir != "" {
		args = append(args, "-I"+in.Dir)
	}
	args = append(args, buildcache.DefineArgs(in.Defines)...)
	// Without line tables the key covers the TU's tokens, not its line
	// information (see keyText): variants whose translations differ only
	// in comments, blank lines or indentation share one object, and one
	// nvcc run.
	text := in.CU
	if !lineinfo && !b.exactKey {
		text = keyText(in.CU)
	}
	key := buildcache.ObjectKey(b.nvccID, b.opts.PreludeVersion, args, text, in.Dir)
	soDir := filepath.Join(b.root, "so")
	so := filepath.Join(soDir, key+".so")
	// One nvcc run per key at a time in this process: a second compile of
	// the key waits for the first and takes its object (or, when it
	// failed, compiles itself: failures are not cached).
	var done chan struct{}
	for {
		if buildcache.Verify(so) {
			return so, nil
		}
		var first bool
		if done, first = b.building(key); first {
			break
		}
		select {
		case <-done:
		case <-ctx.Done():
			return "", fmt.Errorf("compile %s: %w", in.Name, ctx.Err())
		}
	}
	if buildcache.Verify(so) { // built between the check and the registration
		b.built(key, done)
		return so, nil
	}
	defer b.built(key, done)
	envErr := func(err error) error { return &backend.EnvError{Op: "compile " + in.Name, Err: err} }
	if err := os.MkdirAll(soDir, 0o755); err != nil {
		return "", envErr(err)
	}
	if _, err := os.Stat(so); err == nil {
		// A damaged object a runner may have loaded: start from fresh
		// runners, which will load the rebuilt file.
		b.mu.Lock()
		b.pool.Close()
		b.mu.Unlock()
	}
	cuPath := filepath.Join(soDir, key+".cu")
	if err := buildcache.WriteAtomic(cuPath, in.CU); err != nil {
		return "", envErr(err)
	}
	tmp, err := os.CreateTemp(soDir, ".tmp-"+key+"-*.so")
	if err != nil {
		return "", envErr(err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	b.compilerRuns.Add(1)
	cmd := exec.Command(b.nvcc[0], append(append(append([]string{}, b.nvcc[1:]...), args...), "-o", tmp.Name(), cuPath)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	timeout := b.compileTimeoutValue()
	timedOut, err := buildcache.RunLimited(ctx, cmd, timeout)
	if timedOut {
		return "", &backend.Failure{Kind: backend.CompileTimeout,
			Msg: fmt.Sprintf("%s: compiling took longer than %v, the compile time limit (--compile-timeout)", in.Name, timeout), Log: out.String()}
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("compile %s: %w", in.Name, ctx.Err())
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return "", envErr(err)
		}
		log := out.String()
		if m := buildcache.EnvironmentFault(log); m != "" {
			return "", envErr(fmt.Errorf("%s\n%s", m, log))
		}
		if ee.ExitCode() < 0 || strings.Contains(log, "Segmentation fault") {
			// A compiler that crashed (ptxas and cicc have) says nothing
			// about the kernel.
			return "", envErr(fmt.Errorf("nvcc crashed (%v)\n%s", err, log))
		}
		return "", &backend.Failure{Kind: backend.CompileError, Msg: firstError(log, in.Name), Log: log}
	}
	if err := buildcache.Record(tmp.Name(), so); err != nil {
		return "", envErr(err)
	}
	return so, nil
}

// building registers a compile of key: first says no other is running,
// and the caller must call built(key, done) when it ends; otherwise done
// is closed when the running one ends.
func (b *Backend) building(key string) (done chan struct{}, first bool) {
	b.buildMu.Lock()
	defer b.buildMu.Unlock()
	if ch, ok := b.inflight[key]; ok {
		return ch, false
	}
	if b.inflight == nil {
		b.inflight = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	b.inflight[key] = ch
	return ch, true
}

// built ends the compile of key that building registered.
func (b *Backend) built(key string, done chan struct{}) {
	b.buildMu.Lock()
	defer b.buildMu.Unlock()
	if b.inflight[key] == done {
		delete(b.inflight, key)
		close(done)
	}
}

// firstError returns nvcc's first error line, or a generic message.
func firstError(log, name string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "error") {
			return strings.TrimSpace(line)
		}
	}
	return name + ": nvcc failed"
}

// compileTimeoutValue is the time limit of one nvcc run for a kernel.
func (b *Backend) compileTimeoutValue() time.Duration {
	return b.compileTimeout.Value(b.opts.CompileTimeout)
}

// SetCompileTimeout sets the time limit of one nvcc run for a kernel: a
// compile that takes longer is a compile-timeout failure (nvcc and the
// compilers it started are killed). 0 restores Options.CompileTimeout,
// else the default of 120 s.
func (b *Backend) SetCompileTimeout(d time.Duration) { b.compileTimeout.Set(d) }
