//go:build linux

package cpu

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend"
	"metalab/backend/runner"
)

// hostileDispatch runs one threadgroup of two simd groups over a 64-byte
// buffer 0.
var hostileDispatch = backend.Dispatch{
	Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 64)}},
	Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
	Threads:      backend.Dim3{X: 64, Y: 1, Z: 1},
}

// compileHostile compiles a kernel of testdata/tu/hostile.cpp for the
// checking mode: no translator or vetting stands between it and the
// runner, so only the sandbox and the checking mode do.
func compileHostile(t *testing.T, b *Backend, kernel string) backend.Program {
	return compileHostileBuild(t, b, kernel, true)
}

// compileHostileBuild compiles it for the checking mode (check) or as the
// plain build, where the sandbox stands alone.
func compileHostileBuild(t *testing.T, b *Backend, kernel string, check bool) backend.Program {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "tu", "hostile.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.CompileCPP(context.Background(), CPPSource{Name: "hostile.cpp", CPP: src, Kernel: kernel, Check: check})
	if err != nil {
		t.Fatalf("compile hostile.cpp/%s: %v", kernel, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// raceStillCaught runs the honest racing kernel: the checking mode must
// report its race, whatever ran before it in the same Backend.
func raceStillCaught(t *testing.T, b *Backend) {
	t.Helper()
	p := compileHostile(t, b, "race")
	res, err := p.Run(context.Background(), hostileDispatch)
	if err != nil {
		t.Fatalf("the honest racing kernel: %v", err)
	}
	for _, f := range res.Findings {
		if f.Kind == backend.FindRace {
			return
		}
	}
	t.Fatalf("the honest racing kernel's race went unreported after a hostile kernel (findings %v)", res.Findings)
}

// runnerProcesses lists the live processes running the runner executable.
func runnerProcesses(t *testing.T, exe string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if target, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && target == exe {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestHostileKernels runs kernels that attack the runner, its checking
// hooks, other kernels and the host, each stopped or caught with the right
// status; after each, an honest racing kernel in the same Backend is still
// judged racy; and no host effect is left: no file outside, no process,
// no directory in TMPDIR.
func TestHostileKernels(t *testing.T) {
	hostileKernels(t, newBackend(t, Options{}), true)
}

// TestHostileKernelsWithoutSeal runs the same kernels on the runner's
// fallback where the kernel lacks mseal (its -no-seal): nothing is sealed
// and only the PROT_EXEC rule guards the code. Each is still stopped or
// caught: what sealing refused (a mapping over the code, the code
// unmapped) leaves code that cannot run, and the kernel that tried dies
// of it, in its own runner.
func TestHostileKernelsWithoutSeal(t *testing.T) {
	b := newBackend(t, Options{})
	// The runner started with -no-seal after its other arguments (the
	// compiles then run outside the compile sandbox: a wrapped runner
	// does not launch them).
	b.runnerWrap = []string{"/bin/sh", "-c", `exec "$0" "$@" -no-seal`}
	hostileKernels(t, b, false)
}

// hostileKernels runs the hostile kernels on b; sealed says the runner
// seals the loaded objects.
func hostileKernels(t *testing.T, b *Backend, sealed bool) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where runners make their working directories
	hello, err := b.Runner(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(hello, "seccomp=(") || strings.Contains(hello, "seccomp=unsupported") {
		t.Skipf("this machine's kernel does not let the runner install its system-call filter: %s", hello)
	}
	if p := compileHostileBuild(t, b, "race", false).(*program); true {
		b.runMu.Lock()
		reply, err := p.proc.Call(context.Background(), runner.MsgHello, nil, loadTimeout)
		b.runMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		loaded := string(reply[4:])
		if !strings.Contains(loaded, "run-filter=on") {
			t.Fatalf("the loaded runner installed no run filter (its first filter is on): %s", loaded)
		}
		if got := strings.Contains(loaded, " sealed="); got != sealed {
			t.Fatalf("the loaded runner's hello %q: sealed %v, want %v", loaded, got, sealed)
		}
		p.Close()
	}
	secret := filepath.Join(b.root, "so", "metalab-hostile-secret.cpp")
	if err := os.MkdirAll(filepath.Dir(secret), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("another kernel's source\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(secret)
	os.Remove("/tmp/metalab-hostile-file")

	const eperm, eacces = 1, 13
	type outcome struct {
		kind backend.FailureKind // "" for a run that completes
		msg  string              // in the failure's message
		out  []uint32            // the completed run's first words of buffer 0
	}
	for _, tt := range []struct {
		kernel string
		want   outcome
	}{
		{"patch_hooks_rwx", outcome{kind: backend.Sandbox, msg: "mprotect (adding PROT_EXEC)"}},
		{"patch_hooks_rw", outcome{kind: backend.BadAccess, msg: "SIGSEGV"}},
		{"remap_hooks", outcome{out: []uint32{1, eperm}}},
		{"unmap_code", outcome{out: []uint32{1, eperm}}},
		{"patch_got", outcome{kind: backend.BadAccess, msg: "SIGSEGV"}},
		{"blind_checker", outcome{out: []uint32{1}}},
		{"mmap_exec", outcome{kind: backend.Sandbox, msg: "mmap (with PROT_EXEC)"}},
		{"stack_exec", outcome{kind: backend.Sandbox, msg: "mprotect (adding PROT_EXEC)"}},
		{"ret_addr", outcome{kind: backend.BadAccess, msg: "SIGSEGV"}},
		{"forged_write", outcome{kind: backend.BadAccess, msg: "address 0x10000"}},
		{"code_write", outcome{kind: backend.BadAccess, msg: "SIGSEGV"}},
		{"sigaction_segv", outcome{kind: backend.Sandbox, msg: "rt_sigaction"}},
		{"thread", outcome{kind: backend.Sandbox, msg: "forbidden system call"}},
		{"fork", outcome{kind: backend.Sandbox, msg: "clone"}},
		{"kill", outcome{kind: backend.Sandbox, msg: "kill"}},
		{"socket", outcome{kind: backend.Sandbox, msg: "socket"}},
		{"huge_alloc", outcome{out: []uint32{0, 0}}},
		{"proc_mem", outcome{out: []uint32{0, eacces}}},
		{"other_objects", outcome{out: []uint32{0, eacces, 0, eacces}}},
		{"write_log", outcome{kind: backend.BadAccess, msg: "address 0x20000"}},
		{"host_file", outcome{kind: backend.Sandbox, msg: "openat"}},
	} {
		// In the plain build only the sandbox stands: the outcomes above. In
		// the checking build the checking mode stops every store outside the
		// buffers, threadgroup memory and the thread's own stack before it
		// happens, whatever it would have hit.
		builds := []bool{false, true}
		for _, check := range builds {
			tt := tt
			if check {
				switch tt.kernel {
				case "patch_hooks_rw", "patch_got", "blind_checker", "forged_write", "code_write", "other_objects", "write_log":
					tt.want = outcome{kind: backend.BadAccess, msg: "a write outside every buffer, threadgroup array and the thread's own stack"}
				}
			}
			if !sealed {
				// Without the seal the protection change, the mapping over
				// the code and its unmapping succeed. The code they touch
				// can then never run (no page may become executable): in
				// the checking build the kernel's next hook call faults,
				// a bad access; the plain build calls no hook and
				// finishes, having damaged only its own runner, and the
				// variant is still judged by its checking build.
				switch {
				case check && (tt.kernel == "patch_hooks_rw" || tt.kernel == "remap_hooks" || tt.kernel == "unmap_code"):
					tt.want = outcome{kind: backend.BadAccess, msg: "SIGSEGV"}
				case !check && (tt.kernel == "patch_hooks_rw" || tt.kernel == "patch_got"):
					tt.want = outcome{}
				case !check && (tt.kernel == "remap_hooks" || tt.kernel == "unmap_code"):
					tt.want = outcome{out: []uint32{0, 0}}
				}
			}
			name := tt.kernel + "/plain"
			if check {
				name = tt.kernel + "/checking"
			}
			t.Run(name, func(t *testing.T) {
				p := compileHostileBuild(t, b, tt.kernel, check)
				res, err := p.Run(context.Background(), hostileDispatch)
				if tt.want.kind != "" {
					f := wantFailure(t, err, tt.want.kind, tt.want.msg)
					t.Logf("%s: %s: %s", tt.kernel, f.Kind, f.Msg)
					if strings.Contains(f.Log, "HOSTILE-TEXT") {
						t.Errorf("the kernel's own text reached the runner's log:\n%s", f.Log)
					}
				} else {
					if err != nil {
						t.Fatalf("run: %v", err)
					}
					got := u32s(res.Outputs[0])
					for i, w := range tt.want.out {
						if got[i] != w {
							t.Errorf("out[%d] = %d, want %d (out %v)", i, got[i], w, got[:len(tt.want.out)])
						}
					}
				}
				raceStillCaught(t, b)
			})
		}
	}

	// Host effects.
	if _, err := os.Stat("/tmp/metalab-hostile-file"); err == nil {
		os.Remove("/tmp/metalab-hostile-file")
		t.Errorf("a kernel wrote a file on the host")
	}
	b.Close()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := runnerProcesses(t, b.runnerPath)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("runner processes left after Close: %v", left)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in TMPDIR: %v", names)
	}
}

// TestRunnerConfined checks what a loaded runner says of its confinement:
// its own object only, the objects sealed, the second filter on.
func TestRunnerConfined(t *testing.T) {
	b := newBackend(t, Options{})
	p := compileHostile(t, b, "race").(*program)
	b.runMu.Lock()
	hello, err := p.proc.Call(context.Background(), runner.MsgHello, nil, loadTimeout)
	b.runMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	text := string(hello[4:])
	t.Logf("runner: %s", text)
	if strings.Contains(text, "seccomp=(") {
		t.Skipf("no system-call filter on this machine: %s", text)
	}
	for _, want := range []string{"object landlock=abi", "(read-only:" + p.so, " sealed=", "run-filter=on"} {
		if !strings.Contains(text, want) {
			t.Errorf("the loaded runner's hello lacks %q: %s", want, text)
		}
	}
	if strings.Contains(text, "failed") || strings.Contains(text, "seal=unavailable") {
		t.Errorf("the objects were not all sealed: %s", text)
	}
}
