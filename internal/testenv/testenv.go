// Package testenv decides what a test does when a tool it needs is
// missing: on a developer's machine it skips with the reason, under CI it
// fails, so that a CI image without a C++ compiler cannot go green with
// the cpu backend untested.
//
// CI is recognised by the environment variable CI, which GitHub Actions,
// GitLab CI and most other services set to true, and which .ci/run sets
// when it is unset: any value strconv.ParseBool reads as true counts.
//
// Tools CI is not expected to have (the CUDA toolkit, a GPU) go through
// Optional instead: they skip under CI as well, and fail only where
// $METALAB_REQUIRE names them (scripts/gpu-tests sets it on the GPU
// machine).
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// InCI reports whether the tests run under CI: $CI is a true value.
func InCI() bool { return inCI(os.Getenv) }

func inCI(getenv func(string) string) bool {
	v, err := strconv.ParseBool(strings.TrimSpace(getenv("CI")))
	return err == nil && v
}

// Missing stops t because something it needs is not on this machine:
// under CI it fails t, elsewhere it skips t. reason says what is missing
// and how to get it.
func Missing(t testing.TB, reason string) {
	t.Helper()
	missing(t, InCI(), reason)
}

func missing(t testing.TB, ci bool, reason string) {
	t.Helper()
	if ci {
		t.Fatalf("%s (CI is set: a missing tool fails the test instead of skipping it)", reason)
		return
	}
	t.Skipf("%s (skipped here; under CI=true this fails)", reason)
}

// CXX returns the C++ compiler command the cpu backend uses: $CXX split
// into words, else g++, with its first word resolved on $PATH. The error
// says which compiler is missing and how to get one.
func CXX() ([]string, error) { return findCXX(os.Getenv, exec.LookPath) }

func findCXX(getenv func(string) string, lookPath func(string) (string, error)) ([]string, error) {
	cmd := strings.Fields(getenv("CXX"))
	if len(cmd) == 0 {
		cmd = []string{"g++"}
	}
	p, err := lookPath(cmd[0])
	if err != nil {
		return nil, fmt.Errorf("no C++ compiler: %s not found (install g++, e.g. apt-get install -y g++, or set CXX): %w", cmd[0], err)
	}
	return append([]string{p}, cmd[1:]...), nil
}

// RequireCXX returns the C++ compiler command (see CXX), or stops t with
// Missing when there is none.
func RequireCXX(t testing.TB) []string {
	t.Helper()
	cmd, err := CXX()
	if err != nil {
		Missing(t, err.Error())
		return nil // only reached when t is not a real *testing.T
	}
	return cmd
}

// HaveCXX is RequireCXX for conditions that cannot stop a test themselves,
// such as testscript's [cxx]: it reports whether there is a C++ compiler,
// and under CI a missing one is an error instead of false.
func HaveCXX() (bool, error) { return haveCXX(InCI(), CXX) }

func haveCXX(ci bool, find func() ([]string, error)) (bool, error) {
	_, err := find()
	switch {
	case err == nil:
		return true, nil
	case ci:
		return false, fmt.Errorf("%v (CI is set: a missing tool fails the test instead of skipping it)", err)
	}
	return false, nil
}

// Command returns the command that runs the compiler cmd (as RequireCXX
// returns it) with args.
func Command(cmd []string, args ...string) *exec.Cmd {
	return exec.Command(cmd[0], append(append([]string{}, cmd[1:]...), args...)...)
}

// Optional stops t because something it needs is missing that CI machines
// are not expected to have (the CUDA toolkit, a GPU): it skips t, under CI
// as well. A machine that must have it says so in $METALAB_REQUIRE, a
// comma-separated list of names ("nvcc,gpu"): if what is listed there, a
// missing one fails t instead, so a run on a GPU machine cannot pass by
// skipping.
func Optional(t testing.TB, what, reason string) {
	t.Helper()
	optional(t, required(os.Getenv, what), reason)
}

func optional(t testing.TB, required bool, reason string) {
	t.Helper()
	if required {
		t.Fatalf("%s (METALAB_REQUIRE names it: a missing one fails the test)", reason)
		return
	}
	t.Skipf("%s (skipped; set METALAB_REQUIRE to make it a failure)", reason)
}

// Required reports whether $METALAB_REQUIRE names what.
func Required(what string) bool { return required(os.Getenv, what) }

func required(getenv func(string) string, what string) bool {
	for _, w := range strings.Split(getenv("METALAB_REQUIRE"), ",") {
		if strings.TrimSpace(w) == what {
			return true
		}
	}
	return false
}

// NVCC returns the path of nvcc: $NVCC's first word, else nvcc on $PATH,
// in $CUDA_HOME/bin or in /usr/local/cuda/bin.
func NVCC() (string, error) { return findNVCC(os.Getenv, exec.LookPath, os.Stat) }

func findNVCC(getenv func(string) string, lookPath func(string) (string, error), stat func(string) (os.FileInfo, error)) (string, error) {
	if cmd := strings.Fields(getenv("NVCC")); len(cmd) > 0 {
		p, err := lookPath(cmd[0])
		if err != nil {
			return "", fmt.Errorf("no nvcc: $NVCC is %s, not found: %w", cmd[0], err)
		}
		return p, nil
	}
	if p, err := lookPath("nvcc"); err == nil {
		return p, nil
	}
	for _, dir := range []string{getenv("CUDA_HOME"), "/usr/local/cuda"} {
		if dir == "" {
			continue
		}
		p := dir + "/bin/nvcc"
		if info, err := stat(p); err == nil && !info.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("no nvcc: the CUDA toolkit is not installed (nvcc not on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin): %w", exec.ErrNotFound)
}

// RequireNVCC returns nvcc's path, or stops t with Optional("nvcc", ...)
// when there is none: CI has no CUDA toolkit, so this skips there too.
func RequireNVCC(t testing.TB) string {
	t.Helper()
	p, err := NVCC()
	if err != nil {
		Optional(t, "nvcc", err.Error())
		return ""
	}
	return p
}
