package check

import (
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu/cputest"
)

// mdSpec and mdKernel copy a struct of a half and a float (MLX's and
// candle's MD<half>: two bytes of padding after the half) through
// threadgroup memory: written member by member, read whole.
const mdSpec = `source: k.metal
seed: 1
structs:
  MDh:
    - {name: m, type: half}
    - {name: d, type: float}
buffers:
  - {name: in, index: 0, type: half, count: 64, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: out, index: 1, type: MDh, count: 64, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [64]}
sets:
  quick:
    cases: [{}]
`

const mdKernel = `#include <metal_stdlib>
using namespace metal;

template <typename T>
struct MD {
    T m;
    float d;
};

kernel void k(device const half* in  [[buffer(0)]],
              device MD<half>*   out [[buffer(1)]],
              uint tid [[thread_position_in_threadgroup]])
{
    threadgroup MD<half> shared[64];
    threadgroup MD<half> again[64];
    shared[tid].m = in[tid];
    shared[tid].d = float(tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    again[tid] = shared[63 - tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid] = again[(tid + 1) % 64];
}
`

// TestStructPadding: reading a struct's padding bytes is not an
// uninitialised read (neither of threadgroup memory nor, as output bytes
// that differ between the builds' poisons, a nondeterminism), while a
// member no thread wrote still is one.
func TestStructPadding(t *testing.T) {
	be := cputest.Shared(t)
	s := setup(t, mdSpec, mdKernel)
	noD := strings.Replace(mdKernel, "    shared[tid].d = float(tid);\n", "", 1)
	noM := strings.Replace(mdKernel, "    shared[tid].m = in[tid];\n", "", 1)
	rep := run(t, Options{Spec: s, Backend: be, Variants: []Variant{variant("same", mdKernel), variant("nod", noD), variant("nom", noM)}})
	ctl := rep.Control
	if ctl.Status != Pass {
		t.Fatalf("control %s: %s", ctl.Status, ctl.Msg)
	}
	for _, cr := range ctl.Cases {
		for _, f := range cr.Findings {
			if f.Kind == backend.FindUninit || f.Kind == backend.FindUnwrittenUnused {
				t.Errorf("the baseline's padding is reported: %s", f.Msg)
			}
		}
	}
	if len(ctl.BaselineFindings) != 0 {
		t.Errorf("baseline findings %+v", ctl.BaselineFindings)
	}
	if v := rep.Variants[0]; v.Status != Pass {
		t.Errorf("same: %s %s", v.Status, v.Msg)
	}
	// The unwritten member's bytes: d at 4..7 of element 63, m at 0..1.
	for i, want := range map[int]string{1: "shared[63] (byte 508)", 2: "shared[63] (byte 504)"} {
		v := rep.Variants[i]
		if v.Status != FailUninit || !strings.Contains(v.Msg, "uninitialised read of threadgroup array "+want) {
			t.Errorf("%s: %s %s; want fail-uninit of %s", v.Name, v.Status, v.Msg, want)
		}
	}
}
