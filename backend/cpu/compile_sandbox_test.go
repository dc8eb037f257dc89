//go:build linux

package cpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend"
)

// TestCompileSandboxReads compiles TUs that include host files, directly
// and through a symlink in their own include directory: the compiler
// cannot read them, while the directory's own headers still work.
func TestCompileSandboxReads(t *testing.T) {
	b := newBackend(t, Options{})
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Skip("no /etc/passwd to try reading")
	}
	dir := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.h"), []byte("#define OK_VALUE 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "tu", "faults.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	// The directory's own header: allowed.
	good := append([]byte("#include \"ok.h\"\nstatic_assert(OK_VALUE == 7, \"\");\n"), src...)
	p, err := b.CompileCPP(context.Background(), CPPSource{Name: "good.cpp", CPP: good, Kernel: "copy", Dir: dir})
	if err != nil {
		t.Fatalf("a TU including its own directory's header: %v", err)
	}
	p.Close()
	for _, inc := range []string{"/etc/passwd", "a/passwd", "a/../a/passwd"} {
		t.Run(inc, func(t *testing.T) {
			tu := append([]byte(fmt.Sprintf("#include %q\n", inc)), src...)
			_, err := b.CompileCPP(context.Background(), CPPSource{Name: "host.cpp", CPP: tu, Kernel: "copy", Dir: dir})
			f := wantFailure(t, err, backend.CompileError, "")
			if !strings.Contains(f.Log, "Permission denied") && !strings.Contains(f.Log, "No such file") {
				t.Errorf("the compiler was not refused the read:\n%s", f.Log)
			}
			if strings.Contains(f.Log, "root:") {
				t.Errorf("a line of /etc/passwd reached the compile log:\n%s", f.Log)
			}
		})
	}
}

// constexprChain is a TU whose constant initialisers take the compiler
// minutes to evaluate.
func constexprChain(n int) []byte {
	var b bytes.Buffer
	b.WriteString("constexpr unsigned long long step(unsigned long long s) {\n" +
		"  for (int i = 0; i < 250000; i++) s = s * 6364136223846793005ull + 1442695040888963407ull;\n  return s;\n}\n" +
		"constexpr unsigned long long c0 = step(1);\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "constexpr unsigned long long c%d = step(c%d);\n", i, i-1)
	}
	fmt.Fprintf(&b, "extern \"C\" unsigned long long probe() { return c%d; }\n", n-1)
	return b.Bytes()
}

// TestCompileTimeout compiles a chain of constexpr loops under a one
// second limit: a compile-timeout failure soon after the limit, and no
// compiler process left running.
func TestCompileTimeout(t *testing.T) {
	b := newBackend(t, Options{})
	b.SetCompileTimeout(time.Second)
	defer b.SetCompileTimeout(0)
	start := time.Now()
	// A define unique to this run marks the compiler's command line.
	mark := fmt.Sprintf("METALAB_TIMEOUT_PROBE_%d", start.UnixNano())
	_, err := b.CompileCPP(context.Background(), CPPSource{Name: "chain.cpp", CPP: constexprChain(400), Kernel: "k",
		Defines: map[string]string{mark: "1"}})
	took := time.Since(start)
	wantFailure(t, err, backend.CompileTimeout, "compile time limit")
	if took > 6*time.Second {
		t.Errorf("the compile stopped %v after it started, with a limit of 1s", took)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := processesWith(t, mark)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("compiler processes left running: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesWith lists the processes whose command line contains s.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte(s)) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

// TestCompileSandboxLauncher runs ordinary tools in the compile sandbox:
// they read what the command line names and the toolchain, nothing else,
// and write only in the -write directory.
func TestCompileSandboxLauncher(t *testing.T) {
	b := newBackend(t, Options{})
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Skip("no /etc/passwd to try reading")
	}
	dir, work := t.TempDir(), t.TempDir()
	named := filepath.Join(dir, "named.txt")
	if err := os.WriteFile(named, []byte("named\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "unnamed.txt"), []byte("secret-content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(b.runnerPath, append([]string{"-compile-sandbox", "-write", work, "--"}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("cat", named); err != nil || out != "named\n" {
		t.Errorf("cat of a file named on the command line: %q, %v", out, err)
	}
	// Paths the command line does not name (sh reads them, not cat's
	// arguments).
	for _, path := range []string{"/etc/passwd", filepath.Join(dir, "unnamed.txt"), "/proc/self/environ"} {
		if out, err := run("sh", "-c", "cat "+path); err == nil || strings.Contains(out, "root:") || strings.Contains(out, "secret-content") {
			t.Errorf("cat %s in the sandbox: %q, %v; want refused", path, out, err)
		}
	}
	outside := filepath.Join(dir, "written")
	if _, err := run("sh", "-c", "echo x > "+outside); err == nil {
		t.Errorf("a write outside the -write directory succeeded")
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("%s was written from the sandbox", outside)
	}
	inside := filepath.Join(work, "written")
	if out, err := run("sh", "-c", "echo x > "+inside); err != nil {
		t.Errorf("a write in the -write directory: %v\n%s", err, out)
	}
	var ee *exec.ExitError
	if out, err := run("/nonexistent-tool"); !errors.As(err, &ee) || ee.ExitCode() != 126 {
		t.Errorf("an unknown command: %v\n%s", err, out)
	}
}

// forkBomb is a shell command that starts 200 sleeping processes at once
// and waits for them (about 30 s where nothing stops it).
const forkBomb = `i=0; while [ $i -lt 200 ]; do sleep 29.75 & i=$((i+1)); done; wait`

// noSleepersLeft fails when a process of forkBomb outlived its compile.
func noSleepersLeft(t *testing.T) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left = processesWith(t, "29.75"); len(left) == 0 {
			return
		}
	}
	t.Errorf("%d processes outlived the stopped compile, e.g. %s", len(left), left[0])
	for _, l := range left {
		var pid int
		if _, err := fmt.Sscanf(l, "%d:", &pid); err == nil {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	}
}

// TestCompileSandboxProcessLimit: a command in the compile sandbox that
// runs more processes at once than -procs allows is stopped at once,
// everything it started with it, with a "compile limit:" line; one that
// stays within the limit runs, its exit status passed on.
func TestCompileSandboxProcessLimit(t *testing.T) {
	b := newBackend(t, Options{})
	run := func(args ...string) (string, int, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, b.runnerPath, append([]string{"-compile-sandbox", "-procs", "16", "--"}, args...)...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code, time.Since(start)
	}
	out, code, took := run("sh", "-c", forkBomb)
	if code != 125 || !strings.Contains(out, "compile limit: the compiler ran more than 16 processes") || took > 10*time.Second {
		t.Errorf("200 processes under -procs 16: exit %d after %v, %q; want stopped at once (exit 125) with a compile limit line", code, took, out)
	}
	noSleepersLeft(t)
	if out, code, _ := run("sh", "-c", "sleep 0.1 & sleep 0.1 & wait; exit 3"); code != 3 {
		t.Errorf("a command within the limit: exit %d, want its own 3\n%s", code, out)
	}
	// What a command leaves running when it ends goes with it.
	if out, code, took := run("sh", "-c", "sleep 29.75 & exit 0"); code != 0 || took > 10*time.Second {
		t.Errorf("a command that leaves a process behind: exit %d after %v\n%s", code, took, out)
	}
	noSleepersLeft(t)
}

// TestCompileProcessLimit: a compiler that forks 200 processes while it
// compiles a kernel (a wrapper of the real one) is stopped by the compile
// sandbox, and the compile is a CompileError naming the limit, not a hang.
func TestCompileProcessLimit(t *testing.T) {
	testenvCXX := newBackend(t, Options{}).cxx[0]
	script := filepath.Join(t.TempDir(), "forking-cxx")
	text := "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in *.cpp)\n    if grep -q METALAB_TEST_FORKS \"$a\" 2>/dev/null; then " +
		forkBomb + "; exit 0; fi;;\n  esac\ndone\nexec " + testenvCXX + " \"$@\"\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	b := newBackend(t, Options{CXX: script})
	src, err := os.ReadFile(filepath.Join("testdata", "tu", "faults.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	tu := append([]byte(fmt.Sprintf("// METALAB_TEST_FORKS %d\n", time.Now().UnixNano())), src...)
	start := time.Now()
	_, err = b.CompileCPP(context.Background(), CPPSource{Name: "forks.cpp", CPP: tu, Kernel: "copy"})
	f := wantFailure(t, err, backend.CompileError, "compile limit")
	if !strings.HasPrefix(f.Msg, "forks.cpp: ") || time.Since(start) > 15*time.Second {
		t.Errorf("after %v: %q, want the source's name and the limit, at once", time.Since(start), f.Msg)
	}
	noSleepersLeft(t)
}
