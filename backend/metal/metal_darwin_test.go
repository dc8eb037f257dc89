//go:build darwin && cgo

package metal

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"metalab/backend"
)

// These tests run kernels on the Mac's GPU. Elsewhere they are only
// type-checked (TestTypeCheckDarwin).

func gpuOrSkip(t *testing.T) *Backend {
	t.Helper()
	b := New()
	if ok, why := b.Available(context.Background()); !ok {
		t.Skip(why)
	}
	return b
}

func compile(t *testing.T, b *Backend, src backend.Source) backend.Program {
	t.Helper()
	p, err := b.Compile(context.Background(), src)
	if err != nil {
		t.Fatalf("compile %s: %v", src.Entry, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func floats(xs ...float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func u32s(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func fill(n int, v byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = v
	}
	return b
}

const scaleSrc = `#include <metal_stdlib>
using namespace metal;

kernel void scale(device const float *in [[buffer(0)]],
                  device float *out [[buffer(1)]],
                  constant uint &n [[buffer(2)]],
                  uint gid [[thread_position_in_grid]]) {
	if (gid < n) {
		out[gid] = in[gid] * SCALE;
	}
}
`

func TestRunScale(t *testing.T) {
	b := gpuOrSkip(t)
	p := compile(t, b, backend.Source{Name: "scale.metal", Text: []byte(scaleSrc), Entry: "scale", Defines: map[string]string{"SCALE": "3.0f"}})
	const n, total = 200, 256
	in := make([]float32, total)
	for i := range in {
		in[i] = float32(i) - 17.25
	}
	nb := make([]byte, 4)
	binary.LittleEndian.PutUint32(nb, n)
	res, err := p.Run(context.Background(), backend.Dispatch{
		Buffers: []backend.Buffer{
			{Index: 0, Data: floats(in...)},
			{Index: 1, Data: fill(4*total, 0xa5), Output: true},
			{Index: 2, Data: nb},
		},
		Threadgroups: backend.Dim3{X: 4, Y: 1, Z: 1}, Threads: backend.Dim3{X: 64, Y: 1, Z: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Outputs[1]
	for i := 0; i < total; i++ {
		got := binary.LittleEndian.Uint32(out[4*i:])
		want := math.Float32bits(in[i] * 3)
		if i >= n {
			want = 0xa5a5a5a5 // the sentinel: not written
		}
		if got != want {
			t.Fatalf("out[%d] = %#x, want %#x", i, got, want)
		}
	}
	if string(res.Outputs[0]) != string(floats(in...)) {
		t.Error("the input buffer changed")
	}
	if len(res.Times) != 0 || res.Total <= 0 {
		t.Errorf("Times = %v, Total = %v; want no per-dispatch times and a positive GPU time for the command buffer", res.Times, res.Total)
	}
	if p.MaxThreadsPerThreadgroup() < 64 {
		t.Errorf("MaxThreadsPerThreadgroup = %d", p.MaxThreadsPerThreadgroup())
	}
}

func TestRepeatIsSerial(t *testing.T) {
	b := gpuOrSkip(t)
	src := `kernel void bump(device uint *x [[buffer(0)]], uint gid [[thread_position_in_grid]]) { x[gid] += 1; }`
	p := compile(t, b, backend.Source{Name: "bump.metal", Text: []byte(src), Entry: "bump"})
	res, err := p.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*128), Output: true}},
		Threadgroups: backend.Dim3{X: 2, Y: 1, Z: 1}, Threads: backend.Dim3{X: 64, Y: 1, Z: 1}, Repeat: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range u32s(res.Outputs[0]) {
		if v != 5 {
			t.Fatalf("x[%d] = %d after 5 dispatches, want 5", i, v)
		}
	}
	if len(res.Times) != 0 || res.Total <= 0 {
		t.Errorf("Times = %v, Total = %v; want one sample, in Total, for the command buffer", res.Times, res.Total)
	}
}

func TestThreadgroupMemory(t *testing.T) {
	b := gpuOrSkip(t)
	src := `#include <metal_stdlib>
using namespace metal;
kernel void rev(device uint *x [[buffer(0)]],
                threadgroup uint *scratch [[threadgroup(0)]],
                uint lid [[thread_position_in_threadgroup]],
                uint n [[threads_per_threadgroup]]) {
	threadgroup uint tile[256];
	tile[lid] = x[lid];
	scratch[lid] = x[lid] * 2;
	threadgroup_barrier(mem_flags::mem_threadgroup);
	x[lid] = tile[n - 1 - lid] + scratch[n - 1 - lid];
}`
	p := compile(t, b, backend.Source{Name: "rev.metal", Text: []byte(src), Entry: "rev"})
	if got := p.ThreadgroupMemory(); got < 1024 || got%16 != 0 {
		t.Errorf("ThreadgroupMemory = %d, want at least 1024 (uint tile[256]), a multiple of 16", got)
	}
	in := make([]byte, 4*100)
	for i := 0; i < 100; i++ {
		binary.LittleEndian.PutUint32(in[4*i:], uint32(i))
	}
	res, err := p.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: in, Output: true}, {Index: 0, Threadgroup: true, Size: 400}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 100, Y: 1, Z: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range u32s(res.Outputs[0]) {
		if want := uint32(3 * (99 - i)); v != want {
			t.Fatalf("x[%d] = %d, want %d", i, v, want)
		}
	}
}

func TestFunctionConstants(t *testing.T) {
	b := gpuOrSkip(t)
	src := `#include <metal_stdlib>
using namespace metal;
constant uint K [[function_constant(0)]];
constant bool TWICE [[function_constant(1)]];
kernel void k(device uint *x [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
	x[gid] = TWICE ? 2 * K : K;
}`
	consts := map[string]backend.Value{"K": {Type: "uint", Bits: 7}, "TWICE": {Type: "bool", Bits: 1}, "UNUSED": {Type: "float", Bits: 0}}
	p := compile(t, b, backend.Source{Name: "fc.metal", Text: []byte(src), Entry: "k", Constants: consts})
	res, err := p.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 16), Output: true}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 4, Y: 1, Z: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range u32s(res.Outputs[0]) {
		if v != 14 {
			t.Fatalf("x[%d] = %d, want 14", i, v)
		}
	}
	consts["K"] = backend.Value{Type: "float", Bits: 0x40e00000}
	_, err = b.Compile(context.Background(), backend.Source{Name: "fc.metal", Text: []byte(src), Entry: "k", Constants: consts})
	var f *backend.Failure
	if !errors.As(err, &f) || f.Kind != backend.CompileError || !strings.Contains(f.Msg, "K is declared uint") {
		t.Errorf("a float value for a uint constant: %v, want a CompileError naming the declared type", err)
	}
}

func TestFastMathOff(t *testing.T) {
	b := gpuOrSkip(t)
	// Fast math assumes no NaNs or infinities and may fold these tests away.
	src := `#include <metal_stdlib>
using namespace metal;
kernel void k(device const float *in [[buffer(0)]], device uint *out [[buffer(1)]], uint gid [[thread_position_in_grid]]) {
	out[gid] = (isnan(in[gid]) ? 1u : 0u) | (isinf(in[gid]) ? 2u : 0u);
}`
	p := compile(t, b, backend.Source{Name: "nan.metal", Text: []byte(src), Entry: "k"})
	res, err := p.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: floats(float32(math.NaN()), float32(math.Inf(1)), 1, float32(math.Inf(-1)))}, {Index: 1, Data: make([]byte, 16), Output: true}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 4, Y: 1, Z: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := u32s(res.Outputs[1]); got[0] != 1 || got[1] != 2 || got[2] != 0 || got[3] != 2 {
		t.Errorf("isnan/isinf = %v, want [1 2 0 2]: fast math is on", got)
	}
}

func TestCompileErrors(t *testing.T) {
	b := gpuOrSkip(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"common.h": "#pragma once\n\nconstant int broken_in_header = undeclared_h;\n",
		"ok.h":     "#pragma once\nconstant int ok_value = 1;\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		src     backend.Source
		wantMsg string
	}{
		{"error line", backend.Source{Name: "kernels/bad.metal", Text: []byte("#include <metal_stdlib>\n\nkernel void k(device uint *x [[buffer(0)]]) {\n\tx[0] = undeclared;\n}\n"), Entry: "k"},
			"kernels/bad.metal:4:"},
		{"error in a header", backend.Source{Name: "bad.metal", Dir: dir, Text: []byte("#include \"common.h\"\nkernel void k(device uint *x [[buffer(0)]]) { x[0] = 1; }\n"), Entry: "k"},
			"common.h:3:"},
		{"error after a header", backend.Source{Name: "bad.metal", Dir: dir, Text: []byte("// one\n#include \"ok.h\"\n\nkernel void k(device uint *x [[buffer(0)]]) { x[0] = y; }\n"), Entry: "k"},
			"bad.metal:4:"},
		{"no such entry", backend.Source{Name: "k.metal", Text: []byte("kernel void k(device uint *x [[buffer(0)]]) { x[0] = 1; }\n"), Entry: "nope"},
			`no function named "nope"`},
		{"not a kernel", backend.Source{Name: "k.metal", Text: []byte("#include <metal_stdlib>\nusing namespace metal;\nvertex float4 v() { return float4(0); }\n"), Entry: "v"},
			"v is not a kernel function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.Compile(context.Background(), tt.src)
			var f *backend.Failure
			if !errors.As(err, &f) || f.Kind != backend.CompileError {
				t.Fatalf("Compile: %v, want a CompileError", err)
			}
			if !strings.Contains(f.Msg, tt.wantMsg) || strings.Contains(f.Log, metalSourceName) {
				t.Errorf("Msg %q, Log:\n%s\nwant Msg containing %q and no %s in the log", f.Msg, f.Log, tt.wantMsg, metalSourceName)
			}
		})
	}
}

func TestLaunchLimits(t *testing.T) {
	b := gpuOrSkip(t)
	p := compile(t, b, backend.Source{Name: "bump.metal", Text: []byte(`kernel void bump(device uint *x [[buffer(0)]], uint gid [[thread_position_in_grid]]) { x[gid] += 1; }`), Entry: "bump"})
	_, err := p.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*4096)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: p.MaxThreadsPerThreadgroup() + 1, Y: 1, Z: 1},
	})
	var f *backend.Failure
	if !errors.As(err, &f) || f.Kind != backend.Crash {
		t.Errorf("a threadgroup over the pipeline's limit: %v, want a Crash failure", err)
	}
}

// TestTimeout runs in a child process: a command buffer that outlives its
// timeout stops the device for the rest of the process.
func TestTimeout(t *testing.T) {
	if os.Getenv("METALAB_METAL_TIMEOUT_CHILD") != "1" {
		gpuOrSkip(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestTimeout$", "-test.v")
		cmd.Env = append(os.Environ(), "METALAB_METAL_TIMEOUT_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	b := gpuOrSkip(t)
	src := `kernel void spin(device uint *x [[buffer(0)]], constant uint &n [[buffer(1)]]) {
	uint a = x[0];
	for (uint i = 0; i < n; i++) { a = a * 1664525u + 1013904223u; }
	x[0] = a;
}`
	p := compile(t, b, backend.Source{Name: "spin.metal", Text: []byte(src), Entry: "spin"})
	n := make([]byte, 4)
	binary.LittleEndian.PutUint32(n, 200_000_000)
	start := time.Now()
	d := backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4)}, {Index: 1, Data: n}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 1, Y: 1, Z: 1}, Timeout: time.Millisecond,
	}
	_, err := p.Run(context.Background(), d)
	var env *backend.EnvError
	if !errors.As(err, &env) || !strings.Contains(err.Error(), "still runs") {
		t.Errorf("a long kernel with a 1ms timeout: %v, want an environment error saying it still runs", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run returned after %v, long past its timeout", d)
	}
	if _, again := p.Run(context.Background(), d); again == nil || again.Error() != err.Error() {
		t.Errorf("the run after: %v, want the same environment error", again)
	}
}

// TestKeptBuffersOnTheGPU: a keyed buffer is restored from its kept copy,
// never from what the last run wrote, and a Discard buffer is not read.
func TestKeptBuffersOnTheGPU(t *testing.T) {
	b := gpuOrSkip(t)
	src := `kernel void bump(device uint *x [[buffer(0)]], device uint *y [[buffer(1)]], uint gid [[thread_position_in_grid]]) { x[gid] += 1; y[gid] = x[gid]; }`
	p := compile(t, b, backend.Source{Name: "bump.metal", Text: []byte(src), Entry: "bump"})
	d := backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*64), Key: "kept-x", Discard: true}, {Index: 1, Data: make([]byte, 4*64), Output: true}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 64, Y: 1, Z: 1},
	}
	for run := 0; run < 3; run++ {
		res, err := p.Run(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := res.Outputs[0]; ok {
			t.Error("a Discard buffer was read back")
		}
		for i, v := range u32s(res.Outputs[1]) {
			if v != 1 {
				t.Fatalf("run %d: y[%d] = %d, want 1 (x restored to zeros each run)", run, i, v)
			}
		}
	}
}

// TestSelfTestOnTheGPU is `metalab backends`' self-test.
func TestSelfTestOnTheGPU(t *testing.T) {
	b := gpuOrSkip(t)
	for _, s := range b.SelfTest(context.Background()) {
		t.Logf("%s: ok %v %s", s.Name, s.OK, s.Detail)
		if !s.OK {
			t.Errorf("self-test step %q failed: %s", s.Name, s.Detail)
		}
	}
	t.Log(b.Describe())
}

func TestCheckRefused(t *testing.T) {
	b := gpuOrSkip(t)
	_, err := b.Compile(context.Background(), backend.Source{Name: "k.metal", Text: []byte("kernel void k() {}"), Entry: "k", Check: true})
	var f *backend.Failure
	if !errors.As(err, &f) || f.Kind != backend.Unavailable {
		t.Errorf("Compile with Check: %v, want Unavailable", err)
	}
}
