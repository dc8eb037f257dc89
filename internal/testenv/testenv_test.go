package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestInCI(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"", false}, {"true", true}, {"TRUE", true}, {"1", true}, {" true\n", true},
		{"false", false}, {"0", false}, {"no", false}, {"maybe", false},
	}
	for _, tt := range tests {
		if got := inCI(env(map[string]string{"CI": tt.give})); got != tt.want {
			t.Errorf("CI=%q: inCI = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestFindCXX(t *testing.T) {
	onPath := map[string]string{"g++": "/usr/bin/g++", "clang++": "/opt/bin/clang++", "ccache": "/usr/bin/ccache"}
	look := func(name string) (string, error) {
		if p, ok := onPath[name]; ok {
			return p, nil
		}
		return "", exec.ErrNotFound
	}
	tests := []struct {
		name, cxx string
		want      string // the command joined by spaces, or "" for an error
		wantErr   string
	}{
		{name: "default", cxx: "", want: "/usr/bin/g++"},
		{name: "blank", cxx: "  ", want: "/usr/bin/g++"},
		{name: "CXX", cxx: "clang++", want: "/opt/bin/clang++"},
		{name: "CXX with a wrapper", cxx: "ccache g++ -m64", want: "/usr/bin/ccache g++ -m64"},
		{name: "missing CXX", cxx: "/nonexistent/c++", wantErr: "no C++ compiler: /nonexistent/c++ not found"},
		{name: "missing g++", cxx: "g++-99", wantErr: "set CXX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findCXX(env(map[string]string{"CXX": tt.cxx}), look)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, exec.ErrNotFound) {
					t.Fatalf("findCXX = %q, %v; want an error containing %q wrapping exec.ErrNotFound", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != tt.want {
				t.Fatalf("findCXX = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// recorder is a testing.TB that records Skipf and Fatalf instead of
// stopping the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Skipf(f string, a ...any)  { r.skipped = fmt.Sprintf(f, a...) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...) }

func TestMissing(t *testing.T) {
	for _, ci := range []bool{false, true} {
		r := &recorder{}
		missing(r, ci, "no C++ compiler: g++ not found")
		got, other := r.skipped, r.failed
		if ci {
			got, other = r.failed, r.skipped
		}
		if !strings.Contains(got, "no C++ compiler: g++ not found") || other != "" {
			t.Errorf("ci %v: skipped %q, failed %q; want only %s with the reason", ci, r.skipped, r.failed, map[bool]string{false: "a skip", true: "a failure"}[ci])
		}
	}
}

func TestHaveCXX(t *testing.T) {
	found := func() ([]string, error) { return []string{"/usr/bin/g++"}, nil }
	none := func() ([]string, error) { return nil, errors.New("no C++ compiler: g++ not found") }
	tests := []struct {
		name    string
		ci      bool
		find    func() ([]string, error)
		want    bool
		wantErr bool
	}{
		{"found", false, found, true, false},
		{"found under CI", true, found, true, false},
		{"missing", false, none, false, false},
		{"missing under CI", true, none, false, true},
	}
	for _, tt := range tests {
		got, err := haveCXX(tt.ci, tt.find)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("%s: haveCXX = %v, %v; want %v, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestRequireCXXChild is run by TestRequireCXX in a child process, with
// METALAB_TESTENV_CHILD=1; in an ordinary run it returns at once.
func TestRequireCXXChild(t *testing.T) {
	if os.Getenv("METALAB_TESTENV_CHILD") != "1" {
		return
	}
	cmd := RequireCXX(t)
	t.Logf("compiler %q", cmd)
}

// TestRequireCXX runs RequireCXX in a child test process whose CXX names
// no compiler: it must skip without CI and fail with CI=true.
func TestRequireCXX(t *testing.T) {
	tests := []struct {
		ci       string // "" leaves CI unset
		wantFail bool
		want     string
	}{
		{ci: "", wantFail: false, want: "--- SKIP: TestRequireCXXChild"},
		{ci: "false", wantFail: false, want: "--- SKIP: TestRequireCXXChild"},
		{ci: "true", wantFail: true, want: "--- FAIL: TestRequireCXXChild"},
	}
	for _, tt := range tests {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestRequireCXXChild$", "-test.v")
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "CXX=") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, "METALAB_TESTENV_CHILD=1", "CXX=/nonexistent/metalab-test-c++")
			if tt.ci != "" {
				cmd.Env = append(cmd.Env, "CI="+tt.ci)
			}
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("run the child test: %v", err)
			}
			if failed := err != nil; failed != tt.wantFail {
				t.Errorf("child failed: %v, want %v\n%s", failed, tt.wantFail, out)
			}
			for _, s := range []string{tt.want, "no C++ compiler: /nonexistent/metalab-test-c++ not found"} {
				if !strings.Contains(string(out), s) {
					t.Errorf("child output lacks %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestRequired(t *testing.T) {
	tests := []struct {
		give, what string
		want       bool
	}{
		{"", "gpu", false},
		{"gpu", "gpu", true},
		{"nvcc, gpu", "gpu", true},
		{"nvcc,gpus", "gpu", false},
		{"nvcc", "gpu", false},
	}
	for _, tt := range tests {
		if got := required(env(map[string]string{"METALAB_REQUIRE": tt.give}), tt.what); got != tt.want {
			t.Errorf("METALAB_REQUIRE=%q: required(%q) = %v, want %v", tt.give, tt.what, got, tt.want)
		}
	}
}

func TestFindNVCC(t *testing.T) {
	onPath := map[string]string{"nvcc": "/usr/bin/nvcc", "/opt/cuda/bin/nvcc": "/opt/cuda/bin/nvcc"}
	look := func(name string) (string, error) {
		if p, ok := onPath[name]; ok {
			return p, nil
		}
		return "", exec.ErrNotFound
	}
	files := map[string]bool{"/usr/local/cuda/bin/nvcc": true, "/home/x/cuda/bin/nvcc": true}
	noPath := func(string) (string, error) { return "", exec.ErrNotFound }
	fileStat := func(name string) (os.FileInfo, error) {
		if files[name] {
			return fakeFile{}, nil
		}
		return nil, os.ErrNotExist
	}
	tests := []struct {
		name    string
		env     map[string]string
		look    func(string) (string, error)
		want    string
		wantErr string
	}{
		{name: "on PATH", look: look, want: "/usr/bin/nvcc"},
		{name: "NVCC", env: map[string]string{"NVCC": "/opt/cuda/bin/nvcc -ccbin g++"}, look: look, want: "/opt/cuda/bin/nvcc"},
		{name: "missing NVCC", env: map[string]string{"NVCC": "/nope/nvcc"}, look: look, wantErr: "$NVCC is /nope/nvcc"},
		{name: "CUDA_HOME", env: map[string]string{"CUDA_HOME": "/home/x/cuda"}, look: noPath, want: "/home/x/cuda/bin/nvcc"},
		{name: "usr local", look: noPath, want: "/usr/local/cuda/bin/nvcc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findNVCC(env(tt.env), tt.look, fileStat)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("findNVCC = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("findNVCC = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	none := func(string) (os.FileInfo, error) { return nil, os.ErrNotExist }
	if _, err := findNVCC(env(nil), noPath, none); err == nil || !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("no nvcc anywhere: err = %v, want one wrapping exec.ErrNotFound", err)
	}
}

// fakeFile is a FileInfo of a regular file.
type fakeFile struct{ os.FileInfo }

func (fakeFile) IsDir() bool { return false }

func TestOptional(t *testing.T) {
	for _, req := range []bool{false, true} {
		r := &recorder{}
		optional(r, req, "no nvcc")
		if req && (r.failed == "" || r.skipped != "") {
			t.Errorf("required: failed %q, skipped %q; want a failure", r.failed, r.skipped)
		}
		if !req && (r.skipped == "" || r.failed != "") {
			t.Errorf("optional: failed %q, skipped %q; want a skip", r.failed, r.skipped)
		}
		if !strings.Contains(r.failed+r.skipped, "no nvcc") {
			t.Errorf("the reason is lost: %q", r.failed+r.skipped)
		}
	}
}
