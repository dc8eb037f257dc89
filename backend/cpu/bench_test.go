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

// benchBarriers runs the barriers kernel (n barriers per thread) b.N times
// and reports the dispatch wall time and barrier crossings per second.
func benchBarriers(b *testing.B, workers, groups, threads, n int) {
	be := newBackend(b, Options{Workers: workers})
	p := compileTU(b, be, "groups.cpp", "barriers")
	d := backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32([]uint32{uint32(n)})}, {Index: 1, Data: make([]byte, 4*groups*threads)}},
		Threadgroups: backend.Dim3{X: groups, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: threads, Y: 1, Z: 1},
	}
	run(b, p, d) // warm up: start the runner, map stacks
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := run(b, p, d)
		total += res.Times[0]
		if i == 0 {
			for j, v := range u32s(res.Outputs[1]) {
				if v != uint32(n) {
					b.Fatalf("thread %d crossed %d barriers, want %d", j, v, n)
				}
			}
		}
	}
	crossings := float64(b.N) * float64(groups*threads*n)
	b.ReportMetric(crossings/total.Seconds()/float64(workers), "crossings/s/core")
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "dispatch-ns")
}

// BenchmarkBarrierCrossings measures the cost of one fiber reaching a
// threadgroup barrier and being resumed: one threadgroup of 256 threads,
// 1000 barriers each, on one worker.
func BenchmarkBarrierCrossings(b *testing.B) { benchBarriers(b, 1, 1, 256, 1000) }

// BenchmarkGrid64x256 is a whole-grid dispatch: 64 threadgroups of 256
// threads with 8 barriers per thread, on every core.
func BenchmarkGrid64x256(b *testing.B) {
	benchBarriers(b, defaultWorkers(), 64, 256, 8)
}

// qsaVariant returns variant i of qsa_flash: its lines moved down by a
// number of blank lines unique to the run and to i, so that its
// translation (whose #line directives follow them) is a new TU, which no
// compile cache holds.
func qsaVariant(b *testing.B) func(i int) backend.Source {
	src, err := os.ReadFile(filepath.Join("..", "..", "kernels", "qsa_prompt.metal"))
	if err != nil {
		b.Fatal(err)
	}
	base := int(time.Now().UnixNano()/1000) % 1000000 * 64
	return func(i int) backend.Source {
		text := append([]byte(fmt.Sprintf("// variant %d\n#line %d\n", i, base+i+2)), src...)
		return backend.Source{Name: "qsa_prompt.metal", Text: text, Entry: "qsa_flash",
			Constants: map[string]backend.Value{"COOP_K4": {Type: "bool", Bits: 1}}}
	}
}

// BenchmarkCompileQsaFlash measures what a sweep pays per variant: cold,
// a fresh variant of qsa_flash translated, compiled and loaded, plain and
// for the checking mode, with the prelude parsed by every compile
// ("prelude") and precompiled ("pch"); cached, the same variant again
// (translation, cache lookup with its sha256 verification, load).
//
//	go test ./backend/cpu -run '^$' -bench CompileQsaFlash -benchtime 3x
func BenchmarkCompileQsaFlash(b *testing.B) {
	be := newBackend(b, Options{})
	variant := qsaVariant(b)
	ctx := context.Background()
	for _, check := range []bool{false, true} {
		mode := "plain"
		if check {
			mode = "checking"
		}
		warm := variant(-1) // builds the runner and the precompiled prelude
		warm.Check = check
		if _, err := be.Compile(ctx, warm); err != nil {
			b.Fatal(err)
		}
		for _, prelude := range []string{"prelude", "pch"} {
			b.Run(mode+"/cold/"+prelude, func(b *testing.B) {
				be.noPCH = prelude == "prelude"
				defer func() { be.noPCH = false }()
				runs := be.compilerRuns.Load()
				for i := 0; i < b.N; i++ {
					s := variant(i + b.N*1000 + len(prelude)*100000)
					s.Check = check
					p, err := be.Compile(ctx, s)
					if err != nil {
						b.Fatal(err)
					}
					p.Close()
				}
				if be.compilerRuns.Load() == runs {
					b.Fatal("no compiler ran: the variants were cached")
				}
			})
		}
		b.Run(mode+"/cached", func(b *testing.B) {
			s := variant(-2)
			s.Check = check
			if _, err := be.Compile(ctx, s); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p, err := be.Compile(ctx, s)
				if err != nil {
					b.Fatal(err)
				}
				p.Close()
			}
		})
	}
}

// BenchmarkCompileBoth measures a fresh variant of qsa_flash built for
// both modes, as the checking stage needs it: two Compiles in series
// against CompileBoth (one translation, the two builds at once).
//
//	go test ./backend/cpu -run '^$' -bench CompileBoth -benchtime 3x
func BenchmarkCompileBoth(b *testing.B) {
	be := newBackend(b, Options{})
	variant := qsaVariant(b)
	ctx := context.Background()
	for _, check := range []bool{false, true} { // the runner and both precompiled preludes
		s := variant(-1)
		s.Check = check
		if _, err := be.Compile(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s := variant(2*i + 10000)
			for _, check := range []bool{false, true} {
				s.Check = check
				p, err := be.Compile(ctx, s)
				if err != nil {
					b.Fatal(err)
				}
				p.Close()
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			plain, checking, perr, cerr := backend.CompileBoth(ctx, be, variant(2*i+20000))
			if perr != nil || cerr != nil {
				b.Fatal(perr, cerr)
			}
			plain.Close()
			checking.Close()
		}
	})
}
