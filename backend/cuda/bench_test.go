package cuda

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend"
	"metalab/internal/testenv"
)

// The GPU benchmarks report the GPU's time (Result.Total, CUDA events) per
// dispatch as gpu-ns/dispatch, besides Go's wall time per Run (which adds
// binding and reading back the buffers).

func benchRun(b *testing.B, p backend.Program, d backend.Dispatch) {
	b.Helper()
	var gpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := p.Run(context.Background(), d)
		if err != nil {
			b.Fatal(err)
		}
		gpu += res.Total
	}
	b.ReportMetric(float64(gpu.Nanoseconds())/float64(b.N*max(d.Repeat, 1)), "gpu-ns/dispatch")
}

// BenchmarkGPULaunch measures an almost empty kernel: what a launch costs.
func BenchmarkGPULaunch(b *testing.B) {
	g := gpuBackend(b, Options{})
	p := compileCU(b, g, "faults.cu", "copy")
	benchRun(b, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 128)}, {Index: 1, Data: make([]byte, 128)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 32, Y: 1, Z: 1},
		Repeat:       1000,
	})
}

// BenchmarkGPUReduce measures a threadgroup-memory tree reduction over 4M
// integers (16 MiB read per dispatch).
func BenchmarkGPUReduce(b *testing.B) {
	g := gpuBackend(b, Options{})
	p := compileCU(b, g, "groups.cu", "reduce")
	const groups, threads = 16384, 256
	benchRun(b, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*groups*threads)}, {Index: 1, Data: make([]byte, 4*groups)}},
		Threadgroups: backend.Dim3{X: groups, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
		Repeat:       100,
	})
}

// BenchmarkGPUSimd measures the simd-group functions as the prelude builds
// them on the GPU (each a gather by warp shuffles and a fold in lane
// order): parity.inc's simd kernel, 26 collectives per thread.
func BenchmarkGPUSimd(b *testing.B) {
	g := gpuBackend(b, Options{})
	p := compileCU(b, g, "parity.cu", "simd")
	const groups, threads = 1024, 256
	n := groups * threads
	benchRun(b, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 8*n)}, {Index: 1, Data: make([]byte, 4*32*n)}},
		Threadgroups: backend.Dim3{X: groups, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
		Repeat:       10,
	})
}

// BenchmarkCompileParity measures one nvcc compile of parity.cu (the whole
// prelude as device code), a cache miss each time. It needs nvcc, not a
// GPU.
func BenchmarkCompileParity(b *testing.B) {
	t := toolBackend(b, Options{CacheDir: b.TempDir()})
	src := tuSource(b, "parity.cu", "")
	text := src.CU
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src.CU = append(append([]byte{}, text...), fmt.Sprintf("// %d %d\n", time.Now().UnixNano(), i)...)
		if _, err := t.compileObject(context.Background(), src, testArch(), false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildVariants builds 8 ablation-like variants of one kernel
// (the same tokens under different comments, blank lines and
// indentation) with a fake nvcc that takes 0.2 s a run, keyed by the
// translation's exact text ("exact", as before) and by its tokens
// ("tokens"): nvcc-runs/op is what the GPU machine's nvcc would run.
//
//	go test ./backend/cuda -run '^$' -bench BuildVariants -benchtime 2x
func BenchmarkBuildVariants(b *testing.B) {
	testenv.RequireCXX(b)
	nvcc, runs := fakeNVCC(b)
	ctx := context.Background()
	for _, mode := range []string{"exact", "tokens"} {
		b.Run(mode, func(b *testing.B) {
			be := New(Options{NVCC: nvcc, CacheDir: b.TempDir()})
			be.exactKey = mode == "exact"
			before := runs()
			for i := 0; i < b.N; i++ {
				k := fmt.Sprintf("%d.0f", i+2)
				for v := 0; v < 8; v++ {
					text := variantKernel(fmt.Sprintf("// variant %d\n%s", v, strings.Repeat("\n", v*3)), strings.Repeat(" ", v+1), k)
					if _, err := be.Build(ctx, backend.Source{Name: "v.metal", Text: []byte(text), Entry: "scale"}, "sm_90"); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(runs()-before)/float64(b.N), "nvcc-runs/op")
		})
	}
}

// BenchmarkNVCCFlags times nvcc on fresh variants of qsa_flash (its
// translation, moved down by lines unique to the run) with the kernel
// flags as they are and with the per-variant cuts worth trying: SASS for
// the device's architecture only, no PTX embedded (-gencode
// arch=compute_XY,code=sm_XY instead of -arch=sm_XY); the host pass
// unoptimised (-Xcompiler -O0: the host side is the launch stubs and the
// kernel table; the device code keeps -O3); both. It needs nvcc, not a
// GPU; the objects' timings must then be compared on the GPU before a
// cut is adopted.
//
//	go test ./backend/cuda -run '^$' -bench NVCCFlags -benchtime 3x
func BenchmarkNVCCFlags(b *testing.B) {
	nvcc := testenv.RequireNVCC(b)
	src, err := os.ReadFile(filepath.Join("..", "..", "kernels", "qsa_prompt.metal"))
	if err != nil {
		b.Fatal(err)
	}
	arch := testArch()
	sm := strings.TrimPrefix(arch, "sm_")
	gencode := func(args []string) []string {
		for i, a := range args {
			if a == "-arch="+arch {
				args[i] = "-gencode=arch=compute_" + sm + ",code=sm_" + sm
			}
		}
		return args
	}
	hostO0 := func(args []string) []string { return append(args, "-Xcompiler", "-O0") }
	cuts := []struct {
		name string
		edit func([]string) []string
	}{
		{"as-is", nil},
		{"sass-only", gencode},
		{"host-O0", hostO0},
		{"sass-only+host-O0", func(a []string) []string { return hostO0(gencode(a)) }},
	}
	base := int(time.Now().UnixNano()/1000) % 1000000 * 64
	ctx := context.Background()
	for ci, c := range cuts {
		b.Run(c.name, func(b *testing.B) {
			be := New(Options{NVCC: nvcc, CacheDir: testCache()})
			be.exactKey, be.flagEdit = true, c.edit
			for i := 0; i < b.N; i++ {
				text := append([]byte(fmt.Sprintf("#line %d\n", base+ci*1000+i+2)), src...)
				s := backend.Source{Name: "qsa_prompt.metal", Text: text, Entry: "qsa_flash",
					Constants: map[string]backend.Value{"COOP_K4": {Type: "bool", Bits: 1}}}
				if _, err := be.Build(ctx, s, arch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
