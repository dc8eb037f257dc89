//go:build linux

package cpu

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
)

// TestSandbox runs kernels that try what a Metal kernel cannot do, one per
// refused capability; the sandbox must stop each, and the runner must keep
// working for the next kernel.
func TestSandbox(t *testing.T) {
	b := newBackend(t, Options{})
	hello, err := b.Runner(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("runner: %s", hello)
	switch {
	case strings.Contains(hello, "seccomp=("), strings.Contains(hello, "seccomp=unsupported"):
		// The runner tried and the kernel refused: say why.
		t.Skipf("this machine's kernel does not let the runner install its system-call filter: %s", hello)
	case !strings.Contains(hello, "seccomp=on"):
		t.Fatalf("the runner did not install its system-call filter: %s", hello)
	}
	landlock := strings.Contains(hello, "landlock=abi")
	dispatch := backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 16)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 32, Y: 1, Z: 1},
	}
	for _, tt := range []struct{ kernel, call string }{
		{"shell", "forbidden system call: "}, {"write_file", "openat (for writing)"},
		{"net", "socket"}, {"asm_syscall", "getuid"},
	} {
		kernel := tt.kernel
		t.Run(kernel, func(t *testing.T) {
			os.Remove("/tmp/metalab-sandbox-shell")
			os.Remove("/tmp/metalab-sandbox-write")
			p := compileTU(t, b, "sandbox.cpp", kernel)
			_, err := p.Run(context.Background(), dispatch)
			f := wantFailure(t, err, backend.Sandbox, tt.call)
			t.Logf("%s: %s", kernel, f.Msg)
			for _, f := range []string{"/tmp/metalab-sandbox-shell", "/tmp/metalab-sandbox-write"} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("%s exists: the kernel reached the file system", f)
				}
			}
			copyWorks(t, b)
		})
	}
	t.Run("read_file", func(t *testing.T) {
		if !landlock {
			t.Skipf("Landlock is not available on this kernel (%s): reads outside the cache are not confined", hello)
		}
		p := compileTU(t, b, "sandbox.cpp", "read_file")
		res := run(t, p, dispatch)
		if got := u32s(res.Outputs[0]); got[0] != 0 || got[1] != 13 {
			t.Errorf("reading /etc/passwd: opened %d, errno %d; want refused with EACCES (13)", got[0], got[1])
		}
	})
	t.Run("environment", func(t *testing.T) {
		p := compileTU(t, b, "sandbox.cpp", "environment")
		if got := u32s(run(t, p, dispatch).Outputs[0])[0]; got != 0 {
			t.Errorf("the runner's environment is not empty")
		}
	})
	t.Run("junk", func(t *testing.T) {
		// The kernel writes a forged reply to the protocol's descriptor:
		// the runner is restarted and the run repeated; the second forgery
		// is the kernel's failure, and later kernels run normally.
		p := compileTU(t, b, "sandbox.cpp", "junk")
		_, err := p.Run(context.Background(), dispatch)
		wantFailure(t, err, backend.Sandbox, "broke the runner's protocol twice")
		copyWorks(t, b)
	})
	t.Run("constructor", func(t *testing.T) {
		os.Remove("/tmp/metalab-sandbox-ctor")
		src, err := os.ReadFile(filepath.Join("testdata", "tu", "ctor.cpp"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.CompileCPP(context.Background(), CPPSource{Name: "ctor.cpp", CPP: src, Kernel: "noop"})
		wantFailure(t, err, backend.Sandbox, "forbidden system call")
		if _, err := os.Stat("/tmp/metalab-sandbox-ctor"); err == nil {
			t.Errorf("the constructor ran a shell")
		}
		copyWorks(t, b)
	})
}
