package msl_test

import (
	"fmt"
	"testing"

	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/all"
)

// BenchmarkFrontEnd times what `metalab sites` does with a function of
// 1,000 and 10,000 lines: parse it and run every mutation over it. The
// time per line should stay about the same (ns/line): the front end's
// time grows about linearly with a function's length.
//
//	go test ./msl -run '^$' -bench FrontEnd -benchtime 1x
func BenchmarkFrontEnd(b *testing.B) {
	for _, lines := range []int{1000, 10000} {
		src := msl.LongKernel(lines)
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) {
			for b.Loop() {
				f, err := msl.Parse("big.metal", src)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := mutate.FindAll(f, all.Mutations, []string{"big"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
		})
	}
}
