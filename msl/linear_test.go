package msl

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// LongKernel returns a kernel of about lines lines: one function, big, of
// counted loops over device memory, threadgroup stores, barriers and reads
// of a neighbour's element, every statement a candidate for the barrier
// mutations' proofs. (Exported for BenchmarkFrontEnd.)
func LongKernel(lines int) []byte {
	var b strings.Builder
	b.WriteString("#include <metal_stdlib>\nusing namespace metal;\n")
	b.WriteString("kernel void big(device float* out [[buffer(0)]], threadgroup float* tg [[threadgroup(0)]], uint tid [[thread_position_in_threadgroup]]) {\n")
	b.WriteString("    float acc = 0.0f;\n")
	for i := 0; 4+5*i < lines; i++ {
		fmt.Fprintf(&b, "    for (int i%d = 0; i%d < 4; ++i%d) { acc += out[i%d + %d]; }\n", i, i, i, i, i%7)
		fmt.Fprintf(&b, "    float v%d = acc * %d.0f;\n", i, i%13)
		fmt.Fprintf(&b, "    tg[tid] = v%d;\n", i)
		b.WriteString("    threadgroup_barrier(mem_flags::mem_threadgroup);\n")
		b.WriteString("    acc += tg[(tid + 1) % 32];\n")
	}
	b.WriteString("    out[tid] = acc;\n}\n")
	return []byte(b.String())
}

// TestFootprintCostFlat checks that the footprint of one statement costs
// the same near the end of a long function as of a short one: what leads
// up to it is followed only as far as the statement depends on it. A cost
// that grows with the statement's position (a scan of every earlier
// statement per thread, an environment sized by every variable of the
// function, a walk of every token) makes the barrier mutations quadratic
// in a function's length: a 100,000-line function took minutes.
func TestFootprintCostFlat(t *testing.T) {
	cost := func(lines int) time.Duration {
		f, err := Parse("big.metal", LongKernel(lines))
		if err != nil {
			t.Fatal(err)
		}
		fn := f.FuncsNamed("big")[0]
		stmts := fn.Body.Stmts
		last := stmts[len(stmts)-2] // acc += tg[(tid + 1) % 32], after the last barrier
		// The scope's indexes of the function (each block's writers, the
		// scenario constants) are made once, by the first footprint; a
		// footprint after them must not cost more for coming later.
		sc := ScopeOf(f, fn)
		sc.ThreadFootprints([]Stmt{stmts[1]})
		best := time.Duration(1 << 62)
		for range 5 {
			t0 := time.Now()
			fp := sc.ThreadFootprints([]Stmt{last})
			best = min(best, time.Since(t0))
			if w := fp.Why(); w != "" {
				t.Fatalf("%d lines: footprint unknown: %s", lines, w)
			}
		}
		return best
	}
	short, long := cost(500), cost(20000)
	t.Logf("footprint of the last statement: %v at 500 lines, %v at 20000 lines", short, long)
	if long > 4*short+5*time.Millisecond {
		t.Errorf("the last statement's footprint costs %v in a 20000-line function and %v in a 500-line one: its cost grows with the function", long, short)
	}
}
