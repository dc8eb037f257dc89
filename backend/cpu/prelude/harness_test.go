package prelude

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"metalab/internal/testenv"
)

// cxxFlags are the cpu backend's compile flags, so the prelude is tested as
// kernels use it. (-fexcess-precision=standard is left out: g++ before 13
// rejects it for C++, and on x86-64 and arm64 there is no excess precision.)
var cxxFlags = []string{"-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math"}

var (
	stubOnce sync.Once
	stubObj  string
	stubErr  error
	stubDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if stubDir != "" {
		os.RemoveAll(stubDir)
	}
	os.Exit(code)
}

// needGXX returns the C++ compiler command ($CXX, else g++), which the
// prelude tests compile their programs against the headers with. Without
// one it skips t, or fails it under CI (testenv.RequireCXX).
func needGXX(t *testing.T) []string {
	t.Helper()
	return testenv.RequireCXX(t)
}

// runtimeDir is where mtl_rt.h lives.
func runtimeDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs("../runtime")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// stub compiles testdata/stub_rt.cpp once per test run.
func stub(t *testing.T) string {
	t.Helper()
	gxx := needGXX(t)
	stubOnce.Do(func() {
		stubDir, stubErr = os.MkdirTemp("", "prelude-stub")
		if stubErr != nil {
			return
		}
		stubObj = filepath.Join(stubDir, "stub_rt.o")
		args := append(append([]string{}, cxxFlags...), "-c", "-I", runtimeDir(t), "-o", stubObj, filepath.Join("testdata", "stub_rt.cpp"))
		out, err := testenv.Command(gxx, args...).CombinedOutput()
		if err != nil {
			stubErr = fmt.Errorf("compile stub_rt.cpp: %v\n%s", err, out)
		}
	})
	if stubErr != nil {
		t.Fatal(stubErr)
	}
	return stubObj
}

// buildRun compiles src (a C++ program including <metal_stdlib>) against
// the prelude and the stub runtime, runs it with stdin and returns stdout.
// Any compiler warning that points into the prelude fails the test.
func buildRun(t *testing.T, src string, stdin string, args ...string) string {
	t.Helper()
	return buildRunFlags(t, nil, src, stdin, args...)
}

// hostHasF16C reports whether this machine runs F16C instructions, so the
// prelude's hardware conversion path (compiled with -mf16c) can be tested.
func hostHasF16C() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "flags") {
			for _, f := range strings.Fields(line) {
				if f == "f16c" {
					return true
				}
			}
		}
	}
	return false
}

// flagSets returns the extra compiler flags to test the conversion paths
// with: none (the portable code) and -mf16c where the host supports it.
func flagSets(t *testing.T) [][]string {
	sets := [][]string{nil}
	if hostHasF16C() {
		sets = append(sets, []string{"-mf16c"})
	} else {
		t.Log("host has no F16C: testing only the portable half conversions")
	}
	return sets
}

// buildRunFlags is buildRun with extra compiler flags.
func buildRunFlags(t *testing.T, extra []string, src string, stdin string, args ...string) string {
	t.Helper()
	gxx := needGXX(t)
	obj := stub(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "main.cpp")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "main")
	flags := append(append(append([]string{}, cxxFlags...), extra...), "-Wall", "-Wextra", "-pthread",
		"-I", here, "-I", runtimeDir(t), "-I", filepath.Join(here, "testdata"), "-o", exe, file, obj)
	out, err := testenv.Command(gxx, flags...).CombinedOutput()
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "warning") && strings.Contains(line, "/prelude/metal") {
			t.Errorf("prelude warning: %s", line)
		}
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// readTestdata returns the contents of testdata/name.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lines splits program output into lines, dropping the final empty one.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
