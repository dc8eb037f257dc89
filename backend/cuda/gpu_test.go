package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"metalab/backend"
	"metalab/internal/testenv"
)

// The tests in this file run kernels: they need an NVIDIA GPU and skip
// without one (with METALAB_REQUIRE=gpu, as scripts/gpu-tests sets it, a
// missing GPU fails them). They mirror the cpu backend's tests of the same
// behaviour.

// gpuBackend returns a Backend on this machine's GPU.
func gpuBackend(t testing.TB, opts Options) *Backend {
	t.Helper()
	b := toolBackend(t, opts)
	if ok, why := b.Available(context.Background()); !ok {
		testenv.Optional(t, "gpu", why)
	}
	return b
}

// compileCU compiles testdata/tu/file and loads kernel.
func compileCU(t testing.TB, b *Backend, file, kernel string) backend.Program {
	t.Helper()
	p, err := b.CompileCU(context.Background(), tuSource(t, file, kernel))
	if err != nil {
		var f *backend.Failure
		if errors.As(err, &f) {
			t.Fatalf("compile %s %s: %s\n%s", file, kernel, f.Msg, f.Log)
		}
		t.Fatalf("compile %s %s: %v", file, kernel, err)
	}
	return p
}

func run(t testing.TB, p backend.Program, d backend.Dispatch) *backend.Result {
	t.Helper()
	res, err := p.Run(context.Background(), d)
	if err != nil {
		var f *backend.Failure
		if errors.As(err, &f) {
			t.Fatalf("run: %s failure: %s\n%s", f.Kind, f.Msg, f.Log)
		}
		t.Fatalf("run: %v", err)
	}
	return res
}

func wantFailure(t *testing.T, err error, kind backend.FailureKind, msgPart string) *backend.Failure {
	t.Helper()
	var f *backend.Failure
	if !errors.As(err, &f) {
		t.Fatalf("got error %v, want a %s failure", err, kind)
	}
	if f.Kind != kind {
		t.Fatalf("got %s failure %q (log %q), want %s", f.Kind, f.Msg, f.Log, kind)
	}
	if !strings.Contains(f.Msg, msgPart) {
		t.Fatalf("failure message %q does not contain %q", f.Msg, msgPart)
	}
	return f
}

func TestGPUInfo(t *testing.T) {
	b := gpuBackend(t, Options{})
	ctx := context.Background()
	info := b.Info(ctx)
	if info.Name != "cuda" || info.Clock != "gpu" || info.Orders || info.Check || !strings.Contains(info.Device, "sm_") {
		t.Errorf("Info = %+v", info)
	}
	hello, err := b.Runner(ctx)
	if err != nil || !strings.Contains(hello, b.gpu.Name) {
		t.Errorf("Runner = %q, %v; want the GPU named", hello, err)
	}
	if d := b.Describe(); !strings.Contains(d, b.arch) || !strings.Contains(d, "cache ") {
		t.Errorf("Describe = %q", d)
	}
	t.Logf("%s\n%s\n%s", info.Device, hello, b.Describe())
}

func TestGPUBarrierReduction(t *testing.T) {
	b := gpuBackend(t, Options{})
	p := compileCU(t, b, "groups.cu", "reduce")
	if got := p.ThreadgroupMemory(); got != 4096 {
		t.Errorf("ThreadgroupMemory = %d, want 4096", got)
	}
	const groups, threads = 5, 256
	in := make([]uint32, groups*threads)
	want := make([]uint32, groups)
	for i := range in {
		in[i] = uint32(i*7919 + 13)
		want[i/threads] += in[i]
	}
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 4*groups), Output: true}},
		Threadgroups: backend.Dim3{X: groups, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
		Repeat:       3,
		Order:        backend.Order{Kind: "shuffle", Seed: 1}, // accepted, and ignored
	})
	got := u32s(res.Outputs[1])
	for g := range want {
		if got[g] != want[g] {
			t.Errorf("group %d sum = %d, want %d", g, got[g], want[g])
		}
	}
	if len(res.Times) != 0 || res.Total <= 0 {
		t.Errorf("Times %v, Total %v; want no per-dispatch times and a positive total", res.Times, res.Total)
	}
	if string(res.Outputs[0]) != string(le32(in)) {
		t.Error("input buffer changed")
	}
}

func TestGPUPositions2D(t *testing.T) {
	b := gpuBackend(t, Options{})
	p := compileCU(t, b, "groups.cu", "positions")
	grid, tg := backend.Dim3{X: 3, Y: 2, Z: 1}, backend.Dim3{X: 4, Y: 5, Z: 1}
	w, h := grid.X*tg.X, grid.Y*tg.Y
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 16*w*h)}},
		Threadgroups: grid,
		Threads:      tg,
	})
	got := u32s(res.Outputs[0])
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := 4 * (y*w + x)
			want := []uint32{uint32(x), uint32(y), uint32(x / tg.X), uint32(y / tg.Y)}
			if fmt.Sprint(got[i:i+4]) != fmt.Sprint(want) {
				t.Fatalf("thread (%d,%d): got %v, want %v", x, y, got[i:i+4], want)
			}
		}
	}
}

// TestGPUSimdExchange: all lanes, and the even lanes only while the odd
// ones returned, in 80 threads (two full warps and one of 16 lanes). (The
// cpu backend's third mode, odd lanes waiting at a threadgroup barrier
// while the even ones exchange, is a divergent __syncthreads: undefined in
// CUDA.)
func TestGPUSimdExchange(t *testing.T) {
	b := gpuBackend(t, Options{})
	p := compileCU(t, b, "groups.cu", "simd")
	const threads = 80
	for _, mode := range []uint32{0, 1} {
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{mode})}, {Index: 1, Data: make([]byte, 8*threads)}},
			Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
			Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
		})
		got := u32s(res.Outputs[1])
		for tid := 0; tid < threads; tid++ {
			lanes := 32
			if tid >= 64 {
				lanes = threads - 64
			}
			var sum, mask uint32
			for l := 0; l < lanes; l++ {
				if mode >= 1 && l%2 == 1 {
					continue
				}
				sum += uint32(l*3 + 1)
				mask |= 1 << l
			}
			if mode >= 1 && tid%2 == 1 {
				sum, mask = 0, 0
			}
			if got[2*tid] != sum || got[2*tid+1] != mask {
				t.Fatalf("mode %d thread %d: sum %d mask %#x, want %d %#x", mode, tid, got[2*tid], got[2*tid+1], sum, mask)
			}
		}
	}
}

// TestGPUWarpsAreSimdGroups checks, for block shapes whose x is and is not
// a multiple of 32, that ctx()'s lane and simd group are the hardware's
// lane (%laneid) and warp (the lowest linear index among the warp's
// threads): Metal's simd groups are CUDA's warps.
func TestGPUWarpsAreSimdGroups(t *testing.T) {
	b := gpuBackend(t, Options{})
	p := compileCU(t, b, "groups.cu", "lanes")
	for _, tg := range []backend.Dim3{{X: 64, Y: 1, Z: 1}, {X: 20, Y: 3, Z: 1}, {X: 7, Y: 5, Z: 3}, {X: 33, Y: 1, Z: 1}, {X: 1, Y: 40, Z: 2}, {X: 32, Y: 4, Z: 2}} {
		grid := backend.Dim3{X: 2, Y: 2, Z: 1}
		n := tg.Count()
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*5*n*grid.Count())}},
			Threadgroups: grid,
			Threads:      tg,
		})
		got := u32s(res.Outputs[0])
		for i := 0; i < n*grid.Count(); i++ {
			o := got[5*i : 5*i+5]
			idx := uint32(i % n)
			if o[0] != idx || o[1] != idx%32 || o[2] != idx/32 || o[3] != idx%32 || o[4] != idx&^31 {
				t.Fatalf("threadgroup %v, thread %d: index %d, lane %d, simd group %d, %%laneid %d, warp's first thread %d",
					tg, idx, o[0], o[1], o[2], o[3], o[4])
			}
		}
	}
}

func TestGPUThreadgroupBuffer(t *testing.T) {
	b := gpuBackend(t, Options{})
	p := compileCU(t, b, "groups.cu", "tgbuf")
	if got := p.MaxThreadsPerThreadgroup(); got != 512 {
		t.Errorf("MaxThreadsPerThreadgroup = %d, want 512", got)
	}
	const threads = 100
	res := run(t, p, backend.Dispatch{
		Buffers: []backend.Buffer{{Index: 0, Data: make([]byte, 4*3)},
			{Index: 0, Threadgroup: true, Size: 4 * threads}, {Index: 2, Threadgroup: true, Size: 4 * threads}},
		Threadgroups: backend.Dim3{X: 3, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
	})
	var want uint32
	for i := uint32(0); i < threads; i++ {
		want += i*i - i
	}
	for g, v := range u32s(res.Outputs[0]) {
		if v != want {
			t.Errorf("group %d: %d, want %d", g, v, want)
		}
	}
	if _, err := p.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 513, Y: 1, Z: 1},
	}); err == nil {
		t.Error("513 threads per threadgroup accepted by a kernel limited to 512")
	}
}

func TestGPUSimdBarrierAndBarriers(t *testing.T) {
	b := gpuBackend(t, Options{})
	p := compileCU(t, b, "groups.cu", "simd_barrier")
	const threads = 96
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*threads)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
	})
	for i, v := range u32s(res.Outputs[0]) {
		if v != uint32(i^1)+1 {
			t.Fatalf("thread %d read %d, want %d", i, v, (i^1)+1)
		}
	}
	q := compileCU(t, b, "groups.cu", "barriers")
	res = run(t, q, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{1000})}, {Index: 1, Data: make([]byte, 4*4*256)}},
		Threadgroups: backend.Dim3{X: 4, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 256, Y: 1, Z: 1},
	})
	for i, v := range u32s(res.Outputs[1]) {
		if v != 1000 {
			t.Fatalf("thread %d passed %d barriers, want 1000", i, v)
		}
	}
}

func copyWorks(t *testing.T, b *Backend) {
	t.Helper()
	p := compileCU(t, b, "faults.cu", "copy")
	in := []uint32{1, 2, 3, 4, 5, 6, 7, 8}
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 32)}},
		Threadgroups: backend.Dim3{X: 2, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 4, Y: 1, Z: 1},
	})
	for i, v := range u32s(res.Outputs[1]) {
		if v != in[i]*2 {
			t.Fatalf("after failure: out[%d] = %d, want %d", i, v, in[i]*2)
		}
	}
}

// TestGPUFailures runs each kernel of faults.cu that fails and wants the
// failure it must come back as, then a healthy kernel on the restarted
// runner, then the failed program again (reloaded into the new runner).
func TestGPUFailures(t *testing.T) {
	b := gpuBackend(t, Options{})
	copyWorks(t, b)
	grid := backend.Dim3{X: 2, Y: 1, Z: 1}
	threads := backend.Dim3{X: 32, Y: 1, Z: 1}
	tests := []struct {
		kernel  string
		tg      int // [[threadgroup(0)]] bytes
		timeout time.Duration
		kind    backend.FailureKind
		msg     string
	}{
		{kernel: "null_write", kind: backend.BadAccess, msg: "bad access: kernel null_write: cudaErrorIllegalAddress"},
		{kernel: "far_write", kind: backend.BadAccess, msg: "cudaErrorIllegalAddress"},
		{kernel: "trap", kind: backend.Crash, msg: "crash: kernel trap:"},
		{kernel: "spin", timeout: 500 * time.Millisecond, kind: backend.Timeout, msg: "did not finish"},
		{kernel: "past_end", kind: backend.BadAccess, msg: "buffer 0, byte offset +0 past the end"},
		{kernel: "before_start", kind: backend.BadAccess, msg: "buffer 0, byte offset -4 before the start"},
		// (The static figure is nvcc's: 40960 bytes, or 41984 where the
		// driver counts the system's 1 KiB reserve in it.)
		{kernel: "big_shared", tg: 1 << 20, kind: backend.Crash, msg: "bytes static plus 1048576 bytes host-sized"},
	}
	for _, tt := range tests {
		t.Run(tt.kernel, func(t *testing.T) {
			p := compileCU(t, b, "faults.cu", tt.kernel)
			d := backend.Dispatch{
				Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 256)}},
				Threadgroups: grid,
				Threads:      threads,
				Timeout:      tt.timeout,
			}
			if tt.tg > 0 {
				d.Buffers = append(d.Buffers, backend.Buffer{Index: 0, Threadgroup: true, Size: tt.tg})
			}
			_, err := p.Run(context.Background(), d)
			f := wantFailure(t, err, tt.kind, tt.msg)
			if tt.kind == backend.Crash && tt.tg == 0 && !strings.Contains(f.Log, f.Msg) {
				t.Errorf("log %q lacks the message %q", f.Log, f.Msg)
			}
			copyWorks(t, b)
			if tt.kind != backend.Timeout {
				_, err = p.Run(context.Background(), d)
				wantFailure(t, err, tt.kind, tt.msg)
			}
		})
	}
}

// TestGPUDynamicSharedMemory runs a kernel with 40 KiB of static shared
// memory and 100 KiB host-sized: past the default 48 KiB per block, which
// the runner must raise for the kernel.
func TestGPUDynamicSharedMemory(t *testing.T) {
	b := gpuBackend(t, Options{})
	if b.gpu.SharedOptin < 140<<10 {
		t.Skipf("the GPU allows %d bytes of shared memory per block", b.gpu.SharedOptin)
	}
	p := compileCU(t, b, "faults.cu", "big_shared")
	if got := p.ThreadgroupMemory(); got != 40960 {
		t.Errorf("ThreadgroupMemory = %d, want 40960", got)
	}
	if got := programOf(p).StaticSharedMemory(); got != 40960 && got != 40960+1024 {
		t.Errorf("StaticSharedMemory = %d, want 40960 (or 41984, the system's reserve counted)", got)
	}
	const threads = 256
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*threads)}, {Index: 0, Threadgroup: true, Size: 100 << 10}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
	})
	for i, v := range u32s(res.Outputs[0]) {
		if want := float32((i+1)%threads) + 1; mathFloat(v) != want {
			t.Fatalf("out[%d] = %v, want %v", i, mathFloat(v), want)
		}
	}
}

// TestGPUThreadgroupMemory compiles tgmem.metal's kernels and every
// bundled kernel through Compile and holds what the runner reports to
// msl's estimate, as TestStaticSharedMemory and
// TestThreadgroupMemoryBundled hold the objects: ThreadgroupMemory (Metal's
// rule over the TU's table) is the estimate; StaticSharedMemory
// (cudaFuncGetAttributes) is nvcc's figure as cuobjdump reads it from the
// object, with or without the system's reserve (which of the two the
// driver reports is logged), and Resources repeats it.
func TestGPUThreadgroupMemory(t *testing.T) {
	b := gpuBackend(t, Options{})
	ks := append(tgmemKernels(t), bundledKernels(t, true)...)
	var mu sync.Mutex
	withReserve, without := 0, 0
	t.Run("kernels", func(t *testing.T) {
		for _, k := range ks {
			if _, ok := cudaUnsupported[k.name]; ok {
				continue
			}
			t.Run(k.name, func(t *testing.T) {
				t.Parallel()
				fg := figures(t, b, k)
				p, err := b.Compile(context.Background(), k.src)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				cp := programOf(p)
				n, raw, res := cp.ThreadgroupMemory(), cp.StaticSharedMemory(), cp.Resources()
				t.Logf("ThreadgroupMemory %d, StaticSharedMemory %d; msl %d, nvcc %d (+%d reserved); %s", n, raw, fg.msl, fg.nvcc, fg.reserved, res)
				if n != int(fg.msl) {
					t.Errorf("ThreadgroupMemory = %d, msl estimates %d", n, fg.msl)
				}
				switch raw {
				case fg.nvcc:
					mu.Lock()
					without++
					mu.Unlock()
				case fg.nvcc + fg.reserved:
					mu.Lock()
					withReserve++
					mu.Unlock()
				default:
					t.Errorf("StaticSharedMemory = %d, the object's figure is %d (%d with the reserve)", raw, fg.nvcc, fg.nvcc+fg.reserved)
				}
				if !strings.Contains(res, fmt.Sprintf("static shared %d bytes", raw)) {
					t.Errorf("resources %q do not repeat the static shared memory %d", res, raw)
				}
			})
		}
	})
	t.Logf("cudaFuncGetAttributes' sharedSizeBytes: %d kernels without the reserve, %d with it (the object's section, cuobjdump's figure)", without, withReserve)
}

// TestGPUTiming: the total of Repeat launches comes from CUDA events, per
// Run; no per-dispatch times. (How long anything takes is for the
// benchmarks, not for assertions.)
func TestGPUTiming(t *testing.T) {
	b := gpuBackend(t, Options{})
	p := compileCU(t, b, "faults.cu", "copy")
	const n = 1 << 20
	for _, repeat := range []int{1, 100} {
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*n)}, {Index: 1, Data: make([]byte, 4*n)}},
			Threadgroups: backend.Dim3{X: n / 256, Y: 1, Z: 1},
			Threads:      backend.Dim3{X: 256, Y: 1, Z: 1},
			Repeat:       repeat,
		})
		if res.Total <= 0 || len(res.Times) != 0 {
			t.Errorf("repeat %d: Total %v, Times %v", repeat, res.Total, res.Times)
		}
		t.Logf("repeat %d: %v (%v per launch)", repeat, res.Total, res.Total/time.Duration(repeat))
	}
	if _, err := p.Run(context.Background(), backend.Dispatch{Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 1, Y: 1, Z: 1}, Order: backend.Order{Kind: "sideways"}}); err == nil {
		t.Error("an unknown thread order was accepted")
	}
}

// TestGPURacecheck runs a kernel with a threadgroup-memory race (and its
// fixed twin) under compute-sanitizer's racecheck.
func TestGPURacecheck(t *testing.T) {
	b := toolBackend(t, Options{Racecheck: true, CacheDir: t.TempDir()})
	if _, err := b.sanitizer(); err != nil {
		testenv.Optional(t, "compute-sanitizer", err.Error())
	}
	if ok, why := b.Available(context.Background()); !ok {
		testenv.Optional(t, "gpu", why)
	}
	for _, tt := range []struct {
		kernel string
		races  bool
	}{{"racy", true}, {"fixed", false}} {
		p := compileCU(t, b, "race.cu", tt.kernel)
		res := run(t, p, backend.Dispatch{
			Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*64)}},
			Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
			Threads:      backend.Dim3{X: 64, Y: 1, Z: 1},
			Timeout:      5 * time.Minute,
		})
		t.Logf("%s: %+v", tt.kernel, res.Findings)
		if got := len(res.Findings) > 0; got != tt.races {
			t.Errorf("%s: %d findings, want races %v; compute-sanitizer's log so far:\n%s", tt.kernel, len(res.Findings), tt.races, raceLogText(b, p))
		}
		for _, f := range res.Findings {
			if f.Kind != backend.FindRace || f.Space != "threadgroup" || f.Access.Line == 0 {
				t.Errorf("%s: finding %+v, want a threadgroup race with a source line", tt.kernel, f)
			}
		}
	}
}

// raceLogText is what racecheck reported so far for p's runner.
func raceLogText(b *Backend, p backend.Program) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l := b.raceLogOf(programOf(p).Lease().Proc()); l != nil {
		return l.since(0, false)
	}
	return "(no report)"
}

func mathFloat(v uint32) float32 { return math.Float32frombits(v) }

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
