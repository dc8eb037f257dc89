package check

import (
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/cputest"
)

// argmaxKernel is ggml's argmax in shape: the result is stored at line 25
// by a threadgroup of more than one simd group, else at line 28, the same
// store of the same address in two branches, which the optimiser merges
// into one unless told not to.
const argmaxKernel = `#include <metal_stdlib>
using namespace metal;

kernel void k(device const float* x   [[buffer(0)]],
              device int*         dst [[buffer(1)]],
              uint tg   [[threadgroup_position_in_grid]],
              uint tid  [[thread_position_in_threadgroup]],
              uint ntg  [[threads_per_threadgroup]],
              uint sg   [[simdgroup_index_in_threadgroup]],
              uint lane [[thread_index_in_simdgroup]])
{
    threadgroup float sm[32];
    threadgroup int sa[32];
    float v = x[tg * ntg + tid];
    float m = simd_max(v);
    int a = simd_max(select(-1, int(tid), v == m));
    device int* d = (device int*) dst;
    if (ntg > 32) {
        if (lane == 0) { sm[sg] = m; sa[sg] = a; }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        float mr = sm[lane % (ntg / 32)];
        int ar = sa[lane % (ntg / 32)];
        float r = simd_max(mr);
        int ra = simd_max(select(-1, ar, mr == r));
        d[tg] = ra;
        return;
    }
    d[tg] = a;
}
`

func argmaxSpec(threads string) string {
	return `source: k.metal
seed: 1
buffers:
  - {name: x, index: 0, type: float, count: 2 * ` + threads + `, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: dst, index: 1, type: int, count: 2, role: output}
stages:
  - {entry: k, threadgroups: [2], threads: [` + threads + `]}
sets:
  quick:
    cases: [{}]
`
}

// TestMergedStoreLines: the findings of a store name the line that ran,
// not the line of an identical store the optimiser merged it with.
func TestMergedStoreLines(t *testing.T) {
	be := cputest.Shared(t)
	for _, tc := range []struct {
		threads string
		kind    backend.FindingKind
		line    int
	}{
		{"64", backend.FindSameValue, 25}, // every thread stores the reduced result
		{"32", backend.FindLockstep, 28},  // one simd group: the lanes store theirs
	} {
		s := setup(t, argmaxSpec(tc.threads), argmaxKernel)
		rep := run(t, Options{Spec: s, Backend: be})
		if rep.Control.Status != Pass {
			t.Fatalf("threads %s: control %s %s", tc.threads, rep.Control.Status, rep.Control.Msg)
		}
		var found []string
		ok := false
		for _, cr := range rep.Control.Cases {
			for _, f := range cr.Findings {
				if f.Detail.Space != "device" {
					continue
				}
				found = append(found, f.Msg)
				if f.Kind == tc.kind && f.Detail.Access.Line == tc.line && f.Detail.Other != nil && f.Detail.Other.Line == tc.line {
					ok = true
				}
				if f.Detail.Access.Line != tc.line {
					t.Errorf("threads %s: a store is named at line %d, the line that ran is %d: %s", tc.threads, f.Detail.Access.Line, tc.line, f.Msg)
				}
			}
		}
		if !ok {
			t.Errorf("threads %s: no %s finding at line %d; findings:\n%s", tc.threads, tc.kind, tc.line, strings.Join(found, "\n"))
		}
	}
}
