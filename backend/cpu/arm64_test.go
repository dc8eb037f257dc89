package cpu

import (
	"context"
	"os/exec"
	"runtime"
	"testing"

	"metalab/backend"
)

// TestArm64UnderQemu builds the runner and kernels with an aarch64 cross
// compiler and runs them under qemu-user, so the arm64 context switch and
// fault handling are checked on x86-64 machines that have the tools
// (Debian: apt-get install g++-aarch64-linux-gnu qemu-user).
func TestArm64UnderQemu(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a cross-compiled runner; skipped in -short mode")
	}
	if runtime.GOARCH == "arm64" {
		t.Skip("native arm64: the other tests already run the arm64 switch")
	}
	const cxx = "aarch64-linux-gnu-g++"
	for _, tool := range []string{cxx, "qemu-aarch64"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed; needed to run the arm64 runner here", tool)
		}
	}
	b := New(Options{CacheDir: testCache(), CXX: cxx, Workers: 2})
	b.runnerWrap = []string{"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"}
	if ok, why := b.Available(context.Background()); !ok {
		t.Fatalf("Available: %s", why)
	}
	defer b.Close()
	p := compileTU(t, b, "groups.cpp", "reduce")
	const groups, threads = 3, 256
	in := make([]uint32, groups*threads)
	want := make([]uint32, groups)
	for i := range in {
		in[i] = uint32(i*31 + 7)
		want[i/threads] += in[i]
	}
	for _, order := range []backend.Order{{Kind: "in-order"}, {Kind: "shuffle", Seed: 11}} {
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 4*groups)}},
			Threadgroups: backend.Dim3{X: groups, Y: 1, Z: 1},
			Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
			Order:        order,
		})
		for g, v := range u32s(res.Outputs[1]) {
			if v != want[g] {
				t.Errorf("%v: group %d sum %d, want %d", order, g, v, want[g])
			}
		}
	}
	s := compileTU(t, b, "groups.cpp", "simd")
	res := run(t, s, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{0})}, {Index: 1, Data: make([]byte, 8*32)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 32, Y: 1, Z: 1},
	})
	if got := u32s(res.Outputs[1]); got[0] != 32*31/2*3+32 || got[1] != 0xffffffff {
		t.Errorf("simd exchange: sum %d mask %#x", got[0], got[1])
	}
	f := compileTU(t, b, "faults.cpp", "past_end")
	_, err := f.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 128)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 32, Y: 1, Z: 1},
	})
	wantFailure(t, err, backend.BadAccess, "byte offset +0 past the end")
	g := compileTU(t, b, "faults.cpp", "guard_write")
	_, err = g.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 128)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 1, Y: 1, Z: 1},
	})
	wantFailure(t, err, backend.BadAccess, "past the end")
}
