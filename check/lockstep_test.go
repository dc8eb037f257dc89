package check

import (
	"strings"
	"testing"

	"metalab/backend/cpu/cputest"
)

const lockstepSpec = `source: k.metal
seed: 3
buffers:
  - {name: b, index: 1, type: float, count: 64, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: x, index: 0, type: float, count: 64, role: output}
stages:
  - {entry: solve, threadgroups: [1], threads: [64]}
sets:
  quick:
    cases: [{}]
`

// A forward substitution in ggml's kernel_solve_tri style: lane 0 of each
// simd group publishes a value that the other lanes read in the next step,
// with no simd synchronisation between the write and the read.
const lockstepKernel = `#include <metal_stdlib>
using namespace metal;

kernel void solve(device float* x [[buffer(0)]], device const float* b [[buffer(1)]],
                  ushort lane [[thread_index_in_simdgroup]], ushort sg [[simdgroup_index_in_threadgroup]])
{
    device float* col = x + sg*32;
    for (short r = 0; r < 32; ++r) {
        float v = lane < r ? col[lane] : 0.0f;
        float sum = simd_sum(v);
        if (lane == 0) {
            col[r] = b[sg*32 + r] - 0.5f*sum;
        }
    }
}
`

// TestRaceProbeLockstep: a baseline that relies on SIMD lockstep (a
// warning) passes its control under the race probe: the orders that run a
// simd group's lanes out of order are left out, and said to be, and the
// simd-group orders still run. A variant that races across simd groups
// still fails.
func TestRaceProbeLockstep(t *testing.T) {
	be := cputest.Shared(t)
	s := setup(t, lockstepSpec, lockstepKernel)
	racy := strings.Replace(lockstepKernel, "b[sg*32 + r]", "b[sg*32 + r] + x[(1 - sg)*32 + r]", 1)
	rep := run(t, Options{Spec: s, Backend: be, Race: true, Variants: []Variant{variant("same", lockstepKernel), variant("racy", racy)}})
	ctl := rep.Control
	if ctl.Status != Pass {
		t.Fatalf("control %s: %s", ctl.Status, ctl.Msg)
	}
	var relies, left bool
	for _, w := range ctl.Warnings {
		relies = relies || strings.Contains(w, "relies on SIMD lockstep")
		left = left || strings.Contains(w, "left out the orders reversed, shuffle") && strings.Contains(w, "the simd-group orders ran")
	}
	if !relies || !left {
		t.Errorf("control warnings %q: want the lockstep warning and the left-out orders", ctl.Warnings)
	}
	if v := rep.Variants[0]; v.Status != Pass {
		t.Errorf("the baseline as a variant: %s %s", v.Status, v.Msg)
	}
	if v := rep.Variants[1]; v.Status != FailRace {
		t.Errorf("a race across simd groups: %s %s, want %s", v.Status, v.Msg, FailRace)
	}

}

// TestRaceProbeLockstepEarned: a variant cannot earn the left-out orders
// by adding a reliance on lockstep. Its baseline synchronises the lanes
// (simdgroup_barrier between the write and the read); the variant drops
// that, relies on lockstep where the baseline did not, and is probed under
// every order: the reversed one gives other bytes.
func TestRaceProbeLockstepEarned(t *testing.T) {
	be := cputest.Shared(t)
	synced := strings.Replace(lockstepKernel, "            col[r] = b[sg*32 + r] - 0.5f*sum;\n        }\n",
		"            col[r] = b[sg*32 + r] - 0.5f*sum;\n        }\n        simdgroup_barrier(mem_flags::mem_device);\n", 1)
	if synced == lockstepKernel {
		t.Fatal("the test kernel changed: no place for the barrier")
	}
	s := setup(t, lockstepSpec, synced)
	rep := run(t, Options{Spec: s, Backend: be, Race: true, Variants: []Variant{variant("dropped", lockstepKernel)}})
	if ctl := rep.Control; ctl.Status != Pass || len(ctl.Warnings) != 0 {
		t.Fatalf("control %s %s, warnings %q", ctl.Status, ctl.Msg, ctl.Warnings)
	}
	v := rep.Variants[0]
	if v.Status != FailRace || v.Mismatch == nil || v.Mismatch.Order != "reversed" {
		t.Errorf("the variant relying on lockstep its baseline does not: %s %s, want %s under the reversed order", v.Status, v.Msg, FailRace)
	}
}
