package cpu

import (
	"context"
	"errors"
	"math"
	"testing"

	"metalab/backend"
)

// reduceMetal is a threadgroup reduction as a Metal kernel, run end to end:
// translation, prelude, compile, runner.
const reduceMetal = `#include <metal_stdlib>
using namespace metal;

kernel void reduce(device const float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   uint tid [[thread_index_in_threadgroup]],
                   uint gid [[thread_position_in_grid]],
                   uint group [[threadgroup_position_in_grid]]) {
    threadgroup float s[256];
    s[tid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint st = 128; st > 0; st >>= 1) {
        if (tid < st) s[tid] += s[tid + st];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (tid == 0) out[group] = s[0];
}
`

func TestMetalKernel(t *testing.T) {
	b := newBackend(t, Options{})
	p, err := b.Compile(context.Background(), backend.Source{Name: "reduce.metal", Text: []byte(reduceMetal), Entry: "reduce"})
	if err != nil {
		var f *backend.Failure
		if errors.As(err, &f) {
			t.Fatalf("compile: %v\n%s", err, f.Log)
		}
		t.Fatalf("compile: %v", err)
	}
	defer p.Close()
	if got := p.ThreadgroupMemory(); got != 1024 {
		t.Errorf("ThreadgroupMemory = %d, want 1024", got)
	}
	const groups = 3
	in := make([]uint32, groups*256)
	want := make([]float32, groups)
	for i := range in {
		v := float32(i%17) * 0.5
		in[i] = math.Float32bits(v)
		want[i/256] += v // exact: small multiples of 0.5
	}
	res := run(t, p, backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: le32(in)}, {Index: 1, Data: make([]byte, 4*groups)}},
		Threadgroups: backend.Dim3{X: groups, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 256, Y: 1, Z: 1},
	})
	for g, bits := range u32s(res.Outputs[1]) {
		if got := math.Float32frombits(bits); got != want[g] {
			t.Errorf("group %d: %v, want %v", g, got, want[g])
		}
	}
}
