package cpu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"metalab/backend"
)

// BenchmarkIsolation measures what a runner of its own costs a variant:
//
//   - loaded: a run of a program whose runner is up (the cost of a run
//     itself, what every variant paid before);
//   - new-program: compiling a cached kernel, its first run and closing it
//     — with a spare runner already started, as in a check of many
//     variants, so the added cost is this minus loaded minus the cache
//     lookup;
//   - new-program-spaced: the same with 20 ms between variants (outside
//     the timing), as a check's compiles leave the spare time to start;
//   - runner-start: starting a runner and its hello, the cost the spare
//     hides (a CPU cost still paid in the background).
//
// go test -run '^$' -bench Isolation -benchtime 100x ./backend/cpu
func BenchmarkIsolation(b *testing.B) {
	be := newBackend(b, Options{})
	src, err := os.ReadFile(filepath.Join("testdata", "tu", "faults.cpp"))
	if err != nil {
		b.Fatal(err)
	}
	d := backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{1, 2, 3, 4, 5, 6, 7, 8})}, {Index: 1, Data: make([]byte, 32)}},
		Threadgroups: backend.Dim3{X: 2, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 4, Y: 1, Z: 1},
	}
	ctx := context.Background()
	compile := func(b *testing.B) backend.Program {
		p, err := be.CompileCPP(ctx, CPPSource{Name: "faults.cpp", CPP: src, Kernel: "copy"})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	b.Run("loaded", func(b *testing.B) {
		p := compile(b)
		defer p.Close()
		run(b, p, d)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			run(b, p, d)
		}
	})
	b.Run("new-program", func(b *testing.B) {
		compile(b).Close() // the object is cached, a spare is started
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			p := compile(b)
			run(b, p, d)
			p.Close()
		}
	})
	// As in a check, where each variant's compile gives the spare time
	// to start.
	b.Run("new-program-spaced", func(b *testing.B) {
		compile(b).Close()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			time.Sleep(20 * time.Millisecond)
			b.StartTimer()
			p := compile(b)
			run(b, p, d)
			p.Close()
		}
	})
	b.Run("runner-start", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			p, err := be.startRunner(ctx)
			if err != nil {
				b.Fatal(err)
			}
			p.Close()
		}
	})
}

// BenchmarkCompileSandbox measures the compile sandbox's overhead: one
// compile of a small TU (a cache miss each time, by a define), in the
// sandbox and outside it.
//
// go test -run '^$' -bench CompileSandbox -benchtime 10x ./backend/cpu
func BenchmarkCompileSandbox(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "tu", "faults.cpp"))
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		opts Options
	}{{"sandboxed", Options{}}, {"unsandboxed", Options{NoSandbox: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			be := newBackend(b, mode.opts)
			ctx := context.Background()
			stamp := time.Now().UnixNano()
			for i := 0; i < b.N; i++ {
				in := compileInput{cpp: src, name: "faults.cpp", defines: map[string]string{"BENCH_MISS": fmt.Sprintf("%d_%d", stamp, i)}}
				if _, err := be.compileSO(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
