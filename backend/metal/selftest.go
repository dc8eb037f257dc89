package metal

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"metalab/backend"
)

// A Step is one step of the self-test `metalab backends` runs on metal.
type Step struct {
	Name   string `json:"step"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"` // what was seen, or why it failed
}

// The self-test kernel: one thread, a function constant and host-sized
// threadgroup memory, so that compile, specialisation, pipeline, binding,
// dispatch and read-back all take part. With K = 13 it writes 42 to
// out[0] and inverts out[1]: a second run shows that the output buffer was
// restored from its kept copy (the sentinel inverted again, not the first
// run's result inverted back).
const (
	selfTestName   = "metalab-selftest.metal"
	selfTestEntry  = "metalab_selftest"
	selfTestK      = 13
	selfTestWant   = 3 * (selfTestK + 1)
	selfTestSentry = 0xa5a5a5a5
	selfTestSource = `#include <metal_stdlib>
using namespace metal;

constant uint K [[function_constant(0)]];

kernel void metalab_selftest(device uint *out [[buffer(0)]],
                             threadgroup uint *scratch [[threadgroup(0)]],
                             uint lid [[thread_position_in_threadgroup]]) {
	scratch[lid] = K + 1u;
	threadgroup_barrier(mem_flags::mem_threadgroup);
	out[lid] = scratch[lid] * 3u;
	out[lid + 1] = ~out[lid + 1];
}
`
)

// selfTest runs the self-test on b and reports each step; it stops at the
// first that fails (the steps after it are not listed).
func selfTest(ctx context.Context, b backend.Backend) []Step {
	var steps []Step
	pass := func(name, detail string) { steps = append(steps, Step{Name: name, OK: true, Detail: detail}) }
	fail := func(name string, err any) []Step {
		return append(steps, Step{Name: name, Detail: fmt.Sprint(err)})
	}
	if ok, why := b.Available(ctx); !ok {
		return fail("open the device", why)
	}
	pass("open the device", "")
	src := backend.Source{Name: selfTestName, Text: []byte(selfTestSource), Entry: selfTestEntry,
		Constants: map[string]backend.Value{"K": {Type: "uint", Bits: selfTestK}}}
	p, err := b.Compile(ctx, src)
	if err != nil {
		return fail("compile (function constant K, threadgroup buffer)", err)
	}
	defer p.Close()
	pass("compile (function constant K, threadgroup buffer)", fmt.Sprintf("pipeline allows %d threads per threadgroup, %d B static threadgroup memory", p.MaxThreadsPerThreadgroup(), p.ThreadgroupMemory()))
	sentinel := make([]byte, 8)
	binary.LittleEndian.PutUint32(sentinel, selfTestSentry)
	binary.LittleEndian.PutUint32(sentinel[4:], selfTestSentry)
	d := backend.Dispatch{
		Buffers: []backend.Buffer{
			{Index: 0, Data: sentinel, Output: true, Key: "metalab-selftest-out"},
			{Index: 0, Threadgroup: true, Size: 4},
		},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 1, Y: 1, Z: 1},
		Timeout: 10 * time.Second,
	}
	for i, name := range []string{"dispatch one thread", "dispatch again (output restored from its kept copy)"} {
		res, err := p.Run(ctx, d)
		if err != nil {
			return fail(name, err)
		}
		pass(name, "")
		out := res.Outputs[0]
		if len(out) != 8 {
			return fail("read the output", fmt.Sprintf("%d bytes back, want 8", len(out)))
		}
		got, rest := binary.LittleEndian.Uint32(out), binary.LittleEndian.Uint32(out[4:])
		if got != selfTestWant || rest != ^uint32(selfTestSentry) {
			what := "the kernel did not run as compiled"
			if i == 1 && got == selfTestWant && rest == selfTestSentry {
				what = "the output buffer was not restored from its kept copy"
			}
			return fail("read the output", fmt.Sprintf("out = [%d %#x], want [%d %#x]: %s", got, rest, selfTestWant, ^uint32(selfTestSentry), what))
		}
		if i == 0 {
			pass("read the output", fmt.Sprintf("out[0] = %d (3*(K+1)), out[1] inverted", got))
		}
		if res.Total <= 0 {
			return fail("GPU timestamps", fmt.Sprintf("GPUEndTime-GPUStartTime = %v", res.Total))
		}
		if i == 0 {
			pass("GPU timestamps", fmt.Sprintf("command buffer ran %v on the GPU", res.Total))
		}
	}
	return steps
}
