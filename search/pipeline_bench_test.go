package search

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"metalab/backend/fake"
)

// BenchmarkPipeline times the fixture's ablate sweep (4 variants, the
// control, explore pairs, a confirmation) on the fake backend with a
// compile cost (a sleep of -compile each, standing for nvcc or the C++
// compiler) and an exclusive timing cost (every dispatch sleeps 1ms,
// samples included), with one job and with pools of 2 and 4, and reports
// each one's wall time per sweep and the speed-up over one job
// (x-jobs2, x-jobs4).
//
//	go test ./search -run '^$' -bench Pipeline -benchtime 3x
func BenchmarkPipeline(b *testing.B) {
	fx := newFixture(b, "sleep 1ms")
	wall := map[int]time.Duration{}
	for i := 0; i < b.N; i++ {
		for _, jobs := range []int{1, 2, 4} {
			opts := fx.options(b, filepath.Join(b.TempDir(), fmt.Sprintf("j%d-%d", jobs, i)), nil)
			opts.Jobs = jobs
			opts.Backend = &probeBackend{Backend: fake.New(), compileSleep: benchCompile}
			start := time.Now()
			if _, err := Run(context.Background(), opts); err != nil {
				b.Fatal(err)
			}
			wall[jobs] += time.Since(start)
		}
	}
	for _, jobs := range []int{1, 2, 4} {
		b.ReportMetric(wall[jobs].Seconds()/float64(b.N), fmt.Sprintf("s/sweep-jobs%d", jobs))
	}
	b.ReportMetric(wall[1].Seconds()/wall[2].Seconds(), "x-jobs2")
	b.ReportMetric(wall[1].Seconds()/wall[4].Seconds(), "x-jobs4")
}

// benchCompile is the fake compile cost of BenchmarkPipeline.
const benchCompile = 150 * time.Millisecond
