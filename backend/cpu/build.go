package cpu

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
	"runtime"
	"strconv"
	"strings"
	"time"

	"metalab/backend"
	"metalab/backend/internal/buildcache"
	"metalab/backend/runner"
)

// runtimeFS holds the runner's sources and the mtl_rt.h ABI header. The
// headers the runner shares with the cuda runner, protocol.h and serve.h,
// are package runner's (runner.WriteHeaders): builds write them next to
// these.
//
//go:embed runtime/*.h runtime/*.cpp runtime/*.S
var runtimeFS embed.FS

// runnerFlags are the flags the runner is built with.
// Full RELRO (-z relro -z now): the GOT is read-only after loading, and the
// runner seals it with the code (runtime/sandbox.cpp).
var runnerFlags = []string{"-std=c++17", "-O2", "-pthread", "-rdynamic", "-Wl,-z,relro,-z,now"}

// runnerSources are the runner's translation units, in runtime/.
var runnerSources = []string{
	"runner.cpp", "sched.cpp", "memory.cpp", "check.cpp", "sandbox.cpp", "report.cpp",
	"fiber.cpp", "fiber_x86_64.S", "fiber_arm64.S",
}

// compilerID returns the first line of `cxx --version`.
func compilerID(ctx context.Context, cxx []string) (string, error) {
	cmd := exec.CommandContext(ctx, cxx[0], append(cxx[1:], "--version")...)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", strings.Join(cxx, " "), err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line), nil
}

// buildRunner compiles the runner into the cache (once per source and
// compiler) and returns the executable's path.
func (b *Backend) buildRunner(ctx context.Context) (string, error) {
	id := b.id
	h := sha256.New()
	if err := buildcache.HashFS(h, runtimeFS); err != nil {
		return "", fmt.Errorf("hash runner sources: %w", err)
	}
	runner.HashHeaders(h)
	flags := append(append([]string{}, runnerFlags...), b.runnerDefines...)
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", id, strings.Join(flags, " "), runtime.GOOS, runtime.GOARCH)
	dir := filepath.Join(b.root, "runner-"+hex.EncodeToString(h.Sum(nil))[:24])
	exe := filepath.Join(dir, "runner")
	if _, err := os.Stat(dir); err == nil && !buildcache.Verify(exe) {
		// A damaged runner is rebuilt, never run.
		os.RemoveAll(dir)
	}
	err := buildcache.InstallDir(dir, func(tmp string) error {
		if err := buildcache.WriteFS(runtimeFS, tmp); err != nil {
			return err
		}
		src := filepath.Join(tmp, "runtime")
		if err := runner.WriteHeaders(src); err != nil {
			return err
		}
		args := append([]string{}, b.cxx[1:]...)
		args = append(args, flags...)
		args = append(args, "-o", filepath.Join(tmp, "runner"))
		for _, name := range runnerSources {
			args = append(args, filepath.Join(src, name))
		}
		// libm is loaded at start-up, before the sandbox, whether or not
		// the runner's own code needs it: every kernel object does.
		args = append(args, "-Wl,--no-as-needed", "-lm", "-ldl")
		cmd := exec.CommandContext(ctx, b.cxx[0], args...)
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build runner: %w\n%s", err, out.String())
		}
		sum, err := buildcache.FileSHA256(filepath.Join(tmp, "runner"))
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, "runner.sha256"), []byte(sum+"\n"), 0o644)
	})
	if err != nil {
		return "", err
	}
	return exe, nil
}

// installHeaders writes the prelude and mtl_rt.h under the cache and
// returns the include directories for kernel compiles.
func (b *Backend) installHeaders() ([]string, error) {
	h := sha256.New()
	if err := buildcache.HashFS(h, runtimeFS); err != nil {
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
		if err := buildcache.WriteFS(runtimeFS, tmp); err != nil {
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
	return []string{filepath.Join(dir, "prelude"), filepath.Join(dir, "runtime")}, nil
}

// kernelFlags are the flags every kernel TU is compiled with (besides
// include directories and defines). Beyond C++'s defaults they pin down
// what Metal defines and C++ leaves to the optimiser, so a baseline and a
// variant cannot differ through undefined behaviour: no contraction of
// a*b+c into fma, wrapping signed overflow, no type-based alias analysis
// (kernels reinterpret buffers), and a signed plain char as in Metal.
func (b *Backend) kernelFlags() []string {
	f := []string{"-std=c++17", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math",
		"-fwrapv", "-fno-strict-aliasing", "-fsigned-char"}
	f = append(f, objectLinkFlags...)
	if b.excessPrecision {
		f = append(f, "-fexcess-precision=standard")
	}
	if runtime.GOOS == "darwin" {
		f = append(f, "-undefined", "dynamic_lookup")
	}
	return f
}

// probeFlag reports whether the compiler accepts flag for C++.
func probeFlag(ctx context.Context, cxx []string, dir, flag string) bool {
	src := filepath.Join(dir, "probe.cpp")
	if err := os.WriteFile(src, []byte("int probe;\n"), 0o644); err != nil {
		return false
	}
	args := append(append([]string{}, cxx[1:]...), "-std=c++17", "-Werror", flag, "-c", "-o", filepath.Join(dir, "probe.o"), src)
	return exec.CommandContext(ctx, cxx[0], args...).Run() == nil
}

// checkFlags are added for the checking mode: the compiler instruments
// every load and store (ThreadSanitizer's pass) and every array subscript
// with a known bound, calling hooks the runner implements (see
// runtime/check.cpp); debug information (line tables and inlined calls, no
// variables) maps the hooks' return addresses to .metal lines, through the
// metal_stdlib functions inlined into a kernel. The objects are linked
// without the sanitizers' runtimes.
var checkFlags = []string{"-fsanitize=thread", "-fsanitize=bounds", "-g", "-fno-var-tracking", "-DMTL_CHECKING=1"}

// checkGCCFlags and checkClangFlags turn off the function entry and exit
// hooks, which the checking mode does not use, and the optimisations that
// merge identical code from different source lines: two stores of one
// address in two branches sunk into one (ggml's argmax: the store of line
// 3071 ran, the merged store carried line 3076), identical tails or
// hoisted loads, instrumented calls cross-jumped, identical functions
// folded. A finding names the line of its hook's call, so each access must
// keep a call of its own. The plain build, the one timed, keeps them all.
var (
	checkGCCFlags = []string{"--param=tsan-instrument-func-entry-exit=0",
		"-fno-tree-sink", "-fno-tree-tail-merge", "-fno-tree-cselim", "-fno-code-hoisting", "-fno-hoist-adjacent-loads",
		"-fno-crossjumping", "-fno-ipa-icf"}
	checkClangFlags = []string{"-mllvm", "-tsan-instrument-func-entry-exit=0",
		"-mllvm", "-simplifycfg-sink-common=false", "-mllvm", "-simplifycfg-hoist-common=false", "-mllvm", "-enable-tail-merge=false"}
)

// objectLinkFlags link every kernel object with full RELRO: its GOT is
// read-only once loaded, and the runner seals it with the code, so a kernel
// cannot send its calls of the checking hooks elsewhere.
var objectLinkFlags = []string{"-Wl,-z,relro,-z,now"}

// checkLinkFlags send the kernel's calls of memcpy, memmove and memset to
// the runner's checked versions.
var checkLinkFlags = []string{"-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset"}

// A compileInput is one C++ TU to build into a shared object.
type compileInput struct {
	cpp     []byte
	name    string // diagnostic name, e.g. the .metal file
	dir     string // extra include dir ("" for none)
	defines map[string]string
	check   bool // build for the checking mode
}

// compileSO builds in into a cached shared object and returns its path. The
// cache key covers the TU, the headers, the compiler, the flags, the defines
// and the headers in the source directory, so compiling the same TU twice
// runs the compiler once. A cached object is used only if its content still
// has the sha256 recorded when it was built; a damaged or truncated one is
// rebuilt.
func (b *Backend) compileSO(ctx context.Context, in compileInput) (string, error) {
	if err := b.setup(ctx); err != nil {
		return "", err
	}
	id, incs := b.id, b.incs
	args := append([]string{}, b.kernelFlags()...)
	if in.check {
		if pad := paddingTable(in.cpp); pad != nil {
			in.cpp = append(in.cpp[:len(in.cpp):len(in.cpp)], pad...)
		}
		args = append(args, checkFlags...)
		if strings.Contains(strings.ToLower(id), "clang") {
			args = append(args, checkClangFlags...)
		} else {
			args = append(args, checkGCCFlags...)
		}
	}
	for _, inc := range incs {
		args = append(args, "-I"+inc)
	}
	// Only a TU that starts by including the prelude (what the translator
	// emits) gets it precompiled: -include would add it to any other.
	var pchArgs []string
	if bytes.HasPrefix(in.cpp, []byte("#include <metal_stdlib>")) {
		if pch := b.pch(ctx, args, in.check); pch != "" {
			pchArgs = []string{"-include", pch}
		}
	}
	if in.dir != "" {
		args = append(args, "-I"+in.dir)
	}
	args = append(args, buildcache.DefineArgs(in.defines)...)
	// A hand-written TU (CompileCPP) may include headers from in.dir; a
	// translated TU is self-contained (preprocessed) and has none. The
	// precompiled prelude is not in the key: the TU includes the prelude
	// itself, and the object is the same with it or without.
	key := buildcache.ObjectKey(id, b.opts.PreludeVersion, args, in.cpp, in.dir)
	soDir := filepath.Join(b.root, "so")
	so := filepath.Join(soDir, key+".so")
	if buildcache.Verify(so) {
		return so, nil
	}
	envErr := func(err error) error { return &backend.EnvError{Op: "compile " + in.name, Err: err} }
	if err := os.MkdirAll(soDir, 0o755); err != nil {
		return "", envErr(err)
	}
	// The TU is written under a unique name and renamed into place, so a
	// second process compiling the same key never reads a half-written file.
	cppPath := filepath.Join(soDir, key+".cpp")
	if err := buildcache.WriteAtomic(cppPath, in.cpp); err != nil { // kept with the object
		return "", envErr(err)
	}
	// The compiler writes only in a private directory (its output and
	// temporaries); the object is renamed into place from there.
	tmpDir, err := os.MkdirTemp(soDir, ".tmp-"+key+"-")
	if err != nil {
		return "", envErr(err)
	}
	defer os.RemoveAll(tmpDir)
	out := filepath.Join(tmpDir, "kernel.so")
	// The compiler reads its own copy of the TU: the sandbox's rule names
	// the file it was given, and another process compiling the same key
	// may rename a new so/KEY.cpp into place meanwhile.
	cppPath = filepath.Join(tmpDir, key+".cpp")
	if err := os.WriteFile(cppPath, in.cpp, 0o644); err != nil {
		return "", envErr(err)
	}
	err = b.runCompile(ctx, in, args, pchArgs, tmpDir, cppPath, out)
	if err != nil && len(pchArgs) > 0 && ctx.Err() == nil && pchBroke(err) {
		// The compiler refused the precompiled prelude (a damaged or
		// foreign .gch it could not read): compiled again without it, and
		// no kernel of this mode gets it any more.
		if err = b.runCompile(ctx, in, args, nil, tmpDir, cppPath, out); err == nil {
			b.dropPCH(in.check)
		}
	}
	if err != nil {
		return "", err
	}
	if err := buildcache.Record(out, so); err != nil {
		return "", envErr(err)
	}
	return so, nil
}

// pchBroke reports whether a compile's failure names the precompiled
// prelude.
func pchBroke(err error) bool {
	var f *backend.Failure
	if !errors.As(err, &f) || f.Kind != backend.CompileError {
		return false
	}
	return strings.Contains(f.Log, pchHeader) || strings.Contains(f.Log, "PCH") || strings.Contains(f.Log, "precompiled header")
}

// runCompile runs the compiler (and for the checking mode the linker) on
// cppPath with args and pchArgs, writing out, in tmpDir.
func (b *Backend) runCompile(ctx context.Context, in compileInput, args, pchArgs []string, tmpDir, cppPath, out string) error {
	envErr := func(err error) error { return &backend.EnvError{Op: "compile " + in.name, Err: err} }
	args = append(append([]string{}, args...), pchArgs...)
	steps := [][]string{append(append(append([]string{}, b.cxx[1:]...), args...), "-o", out, cppPath)}
	if in.check {
		// Compile and link apart: linking with -fsanitize would pull in the
		// sanitizers' runtimes, whose part the runner plays.
		obj := filepath.Join(tmpDir, "kernel.o")
		compile := append(append(append([]string{}, b.cxx[1:]...), args...), "-c", "-o", obj, cppPath)
		link := append(append([]string{}, b.cxx[1:]...), "-shared", "-o", out, obj)
		link = append(link, objectLinkFlags...)
		link = append(link, checkLinkFlags...)
		if runtime.GOOS == "darwin" {
			link = append(link, "-undefined", "dynamic_lookup")
		}
		steps = [][]string{compile, link}
	}
	timeout := b.compileTimeoutValue()
	for _, step := range steps {
		b.compilerRuns.Add(1)
		cmd := b.compilerCmd(step, tmpDir, timeout)
		var log bytes.Buffer
		cmd.Stdout = &log
		cmd.Stderr = &log
		timedOut, err := buildcache.RunLimited(ctx, cmd, timeout)
		if timedOut {
			return &backend.Failure{Kind: backend.CompileTimeout,
				Msg: fmt.Sprintf("%s: compiling took longer than %v, the compile time limit (--compile-timeout)", in.name, timeout), Log: log.String()}
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("compile %s: %w", in.name, ctx.Err())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				return envErr(err)
			}
			if m := memoryExhausted(log.String()); m != "" && b.sandboxPrefix(timeout) != nil {
				// The sandbox's memory limit is most of the machine's: a
				// compile that reaches it is the source's doing.
				return &backend.Failure{Kind: backend.CompileError,
					Msg: fmt.Sprintf("%s: the compiler ran out of its memory limit (%s)", in.name, m), Log: log.String()}
			}
			if m := buildcache.EnvironmentFault(log.String()); m != "" {
				return envErr(fmt.Errorf("%s\n%s", m, log.String()))
			}
			if m := reportLine(log.String(), "compile limit: "); m != "" {
				// The compile sandbox stopped a compiler that ran too
				// many processes: the source's (or its compiler's) doing.
				return &backend.Failure{Kind: backend.CompileError, Msg: fmt.Sprintf("%s: %s", in.name, m), Log: log.String()}
			}
			if strings.Contains(log.String(), "compile sandbox: ") {
				return envErr(fmt.Errorf("the compile sandbox failed\n%s", log.String()))
			}
			return &backend.Failure{Kind: backend.CompileError, Msg: firstError(log.String(), in.name), Log: log.String()}
		}
	}
	return nil
}

// pchHeader is the header kernels get with -include: it includes the
// prelude, and its precompiled form sits next to it (metal_pch.h.gch, where
// GCC looks for it). A TU that starts by including the prelude itself
// includes it a second time as a no-op (the prelude's include guards).
const pchHeader = "metal_pch.h"

// pchRefused names the file a precompiled-header directory holds instead
// of the header when the compiler refused to build one for those flags:
// no metalab process tries again (the log is in the file).
const pchRefused = "refused"

// pch returns a header that includes the prelude and has a precompiled
// form built with flags (the kernel flags, checking mode included), for
// -include: kernels then skip parsing the prelude. It is built once per
// prelude, compiler identity and flags, on first use, into a directory of
// the cache named by their hash (installed by an atomic rename, so
// concurrent metalab processes share it; its sha256 is recorded and
// verified before first use). It is "" when the compiler is not GCC (whose
// .gch lookup this relies on), when the compiler refused to build it (which
// is recorded in the cache), or after a compile the precompiled header
// broke (see compileSO): kernels then compile without it, only slower. GCC
// ignores a precompiled header that does not match a compile's flags, so a
// stale one can cost time, never correctness.
func (b *Backend) pch(ctx context.Context, flags []string, check bool) string {
	if b.noPCH || strings.Contains(strings.ToLower(b.id), "clang") {
		return ""
	}
	mode := 0
	if check {
		mode = 1
	}
	b.pchMu[mode].Lock()
	defer b.pchMu[mode].Unlock()
	st := &b.pchState[mode]
	if st.done {
		return st.path
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", b.id, b.opts.PreludeVersion, strings.Join(flags, "\x01"))
	dir := filepath.Join(b.root, "pch-"+hex.EncodeToString(h.Sum(nil))[:24])
	hdr := filepath.Join(dir, pchHeader)
	for attempt := 0; attempt < 2; attempt++ {
		err := buildcache.InstallDir(dir, func(tmp string) error { return b.buildPCH(ctx, tmp, flags) })
		if errors.Is(err, errPCHTimeout) {
			// A loaded machine, not a refusal: none for this Backend,
			// nothing recorded.
			st.done = true
			return ""
		}
		if err != nil {
			// The machine's fault, or a cancelled context: no precompiled
			// header this time, another try on the next compile.
			return ""
		}
		if _, err := os.Stat(filepath.Join(dir, pchRefused)); err == nil {
			st.done = true
			return ""
		}
		if buildcache.Verify(hdr + ".gch") {
			st.done, st.path = true, hdr
			return hdr
		}
		// Damaged (a truncated .gch, a missing sum): built again, once.
		os.RemoveAll(dir)
	}
	st.done = true
	return ""
}

// buildPCH builds the precompiled prelude in tmp, under the compile time
// limit (past it, errPCHTimeout). A compiler that refuses it (it exits
// with an error that is not the machine's fault) leaves the pchRefused
// file instead, with its log.
func (b *Backend) buildPCH(ctx context.Context, tmp string, flags []string) error {
	hdr := filepath.Join(tmp, pchHeader)
	if err := os.WriteFile(hdr, []byte("#include <metal_stdlib>\n"), 0o644); err != nil {
		return err
	}
	gch := hdr + ".gch"
	args := append(append(append([]string{}, b.cxx[1:]...), flags...), "-x", "c++-header", hdr, "-o", gch+".tmp")
	cmd := exec.Command(b.cxx[0], args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var log bytes.Buffer
	cmd.Stdout = &log
	cmd.Stderr = &log
	b.pchBuilt.Add(1)
	timedOut, err := buildcache.RunLimited(ctx, cmd, b.compileTimeoutValue())
	if timedOut {
		return errPCHTimeout
	}
	if err != nil {
		var ee *exec.ExitError
		if ctx.Err() != nil || !errors.As(err, &ee) {
			return fmt.Errorf("precompile the prelude: %w", err)
		}
		if m := buildcache.EnvironmentFault(log.String()); m != "" {
			return fmt.Errorf("precompile the prelude: %s", m)
		}
		os.Remove(gch + ".tmp")
		return os.WriteFile(filepath.Join(tmp, pchRefused), []byte(fmt.Sprintf("%v\n%s", err, log.String())), 0o644)
	}
	return buildcache.Record(gch+".tmp", gch)
}

// errPCHTimeout says precompiling the prelude took longer than the
// compile time limit.
var errPCHTimeout = errors.New("precompiling the prelude took longer than the compile time limit")

// dropPCH stops giving kernels of the mode the precompiled header: a
// compile failed with it and then succeeded without it.
func (b *Backend) dropPCH(check bool) {
	mode := 0
	if check {
		mode = 1
	}
	b.pchMu[mode].Lock()
	b.pchState[mode] = pchState{done: true}
	b.pchMu[mode].Unlock()
}

// pchState is a mode's precompiled header: done once it was decided, path
// "" for none.
type pchState struct {
	done bool
	path string
}

// memoryExhausted returns the compiler's line saying it ran out of memory,
// or "".
func memoryExhausted(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "virtual memory exhausted") || strings.Contains(line, "out of memory allocating") ||
			strings.Contains(line, "Cannot allocate memory") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// reportLine returns the first line of log that starts with prefix, or "".
func reportLine(log, prefix string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// compileFSizeLimit bounds a file the sandboxed compiler writes.
const compileFSizeLimit = 4 << 30

// compileProcLimit bounds the processes a sandboxed compile runs at once
// (the driver, cc1plus, as, collect2, ld: a handful).
const compileProcLimit = 64

// sandboxPrefix is the command that runs a compiler in the compile sandbox
// (runtime/sandbox.cpp: the runner acting as a launcher), writing only in
// the write directories; nil without the sandbox.
func (b *Backend) sandboxPrefix(timeout time.Duration, write ...string) []string {
	if b.opts.NoSandbox || b.runnerPath == "" || runtime.GOOS != "linux" {
		return nil
	}
	if len(b.runnerWrap) > 0 {
		// An emulated runner (tests) cannot launch the host's compiler.
		return nil
	}
	mem := b.opts.MemoryLimit
	if mem == 0 {
		mem = defaultMemoryLimit()
	}
	// The CPU limit is a backstop behind the wall-clock one, which a
	// single-threaded compiler reaches first.
	cpu := int64(timeout/time.Second) + 10
	pre := []string{b.runnerPath, "-compile-sandbox", "-cpu", strconv.FormatInt(cpu, 10),
		"-fsize", strconv.FormatInt(compileFSizeLimit, 10), "-procs", strconv.Itoa(compileProcLimit)}
	if mem > 0 {
		pre = append(pre, "-memory", strconv.FormatInt(mem, 10))
	}
	for _, w := range write {
		pre = append(pre, "-write", w)
	}
	return append(pre, "--")
}

// compilerCmd is the command that runs the C++ compiler with args in the
// compile sandbox, with its temporaries in tmpDir.
func (b *Backend) compilerCmd(args []string, tmpDir string, timeout time.Duration) *exec.Cmd {
	argv := append(append(append(b.yieldPrefix(), b.sandboxPrefix(timeout, tmpDir)...), b.cxx[0]), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmpDir)
	return cmd
}

// compileTimeoutValue is the compile time limit in force.
func (b *Backend) compileTimeoutValue() time.Duration {
	return b.compileTimeout.Value(b.opts.CompileTimeout)
}

// SetCompileTimeout sets the compile time limit: a compile (or the
// preprocessor's run) that takes longer is a compile-timeout failure. 0
// restores Options.CompileTimeout, else the default of 120 s.
func (b *Backend) SetCompileTimeout(d time.Duration) { b.compileTimeout.Set(d) }

// firstError returns the compiler's first error line, or a generic message.
func firstError(log, name string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "error") {
			return strings.TrimSpace(line)
		}
	}
	return name + ": C++ compiler failed"
}

// CacheDir returns the directory holding the runner, the installed headers
// and the compiled kernels, or "" before the backend was set up. Deleting it
// clears the cache; the next use rebuilds what it needs.
func (b *Backend) CacheDir() string {
	if b.setupErr != nil {
		return ""
	}
	return b.root
}

// CacheSize returns the bytes used by the files under the cache directory.
func (b *Backend) CacheSize() (int64, error) {
	root := b.CacheDir()
	if root == "" {
		return 0, errors.New("cache size: backend not set up")
	}
	return buildcache.Size(root)
}

// verifyObject and cleanStale are the cache's checks, as the tests call
// them.
func verifyObject(so string) bool { return buildcache.Verify(so) }

func cleanStale(root string, now time.Time) {
	buildcache.CleanStale(now, root, filepath.Join(root, "so"))
}
