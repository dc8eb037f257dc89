package check_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/cputest"
	"metalab/check"
	"metalab/spec"
)

// BenchmarkCheckingMode measures the cost of the checking mode: one run of
// the first quick case of each bundled spec, every stage, compiled plainly
// and for the checking mode (compiles excluded). The "x-plain" metric of
// the checking sub-benchmark is its time over the plain one's.
//
//	go test ./check -run '^$' -bench CheckingMode -benchtime 10x -count 3
func BenchmarkCheckingMode(b *testing.B) {
	be := cputest.Shared(b)
	for _, name := range []string{"qsa_prompt", "qsa_prep"} {
		s, err := spec.Load(filepath.Join("..", "kernels", name+".yaml"))
		if err != nil {
			b.Fatal(err)
		}
		cases, err := s.Cases("quick")
		if err != nil {
			b.Fatal(err)
		}
		in, err := s.Instantiate(cases[0])
		if err != nil {
			b.Fatal(err)
		}
		var plain float64
		for _, detect := range []bool{false, true} {
			var progs []backend.Program
			for _, st := range in.Stages {
				text, err := os.ReadFile(st.Source)
				if err != nil {
					b.Fatal(err)
				}
				p, err := be.Compile(context.Background(), backend.Source{Name: st.Source, Text: text, Dir: filepath.Dir(st.Source),
					Entry: st.Entry, Defines: st.Defines, Constants: st.Constants, Check: detect})
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				progs = append(progs, p)
			}
			mode := "plain"
			if detect {
				mode = "checking"
			}
			b.Run(name+"/"+mode, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := check.ExecuteCase(context.Background(), progs, in, check.ExecOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				if !detect {
					plain = per
				} else if plain > 0 {
					b.ReportMetric(per/plain, "x-plain")
				}
			})
		}
	}
}
