package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBundledKernels checks every case of the bundled specs against their
// kernels: the shipped specs bind every parameter with a fitting type and
// give every constant the kernels need.
func TestBundledKernels(t *testing.T) {
	paths, _ := filepath.Glob("../kernels/*.yaml")
	if len(paths) == 0 {
		t.Skip("no bundled kernel specs in ../kernels")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			s, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, set := range s.Sets {
				in, err := s.Instantiate(set.Cases[0])
				if err != nil {
					t.Fatal(err)
				}
				if err := in.CheckKernels(os.ReadFile); err != nil {
					t.Errorf("set %s: %v", set.Name, err)
				}
			}
		})
	}
}

// kernelCase parses spec text (its source is k.metal) and returns the
// first case's instance and the CheckKernels error with metal as k.metal.
func checkKernel(t *testing.T, specText, metal string) error {
	t.Helper()
	s, err := Parse("k.yaml", []byte(specText))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	cs, err := s.Cases()
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.Instantiate(cs[0])
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	return in.CheckKernels(func(path string) ([]byte, error) {
		if path != "k.metal" {
			return nil, os.ErrNotExist
		}
		return []byte(metal), nil
	})
}

func TestCheckKernels(t *testing.T) {
	const twoBuffers = `source: k.metal
buffers:
  - {name: a, index: 0, type: float, count: 4, role: input, gen: {kind: iota}}
  - {name: o, index: 1, type: float, count: 4, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [4]}
sets:
  s: {cases: [{}]}
`
	const kernel2 = `#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]],
              device float* o [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
    o[i] = a[i];
}
`
	tests := []struct {
		name        string
		spec, metal string
		want        string // "" means no error
	}{
		{name: "fits", spec: twoBuffers, metal: kernel2},
		{name: "unbound",
			spec: twoBuffers, metal: strings.Replace(kernel2, "uint i", "device float* x [[buffer(2)]], uint i", 1),
			want: `k.yaml:6:5: case s/default: stage "k": kernel parameter "x" [[buffer(2)]] (k.metal:5:29) is not bound`},
		{name: "half param on a float buffer",
			spec: twoBuffers, metal: strings.Replace(kernel2, "const float* a", "const half* a", 1),
			want: `k.yaml:3:22: case s/default: stage "k": buffer "a" (float) bound to kernel parameter "a" [[buffer(0)]] (k.metal:3:34, device const half*): the kernel reads half, the buffer holds float`},
		{name: "bytes view anything",
			spec: twoBuffers, metal: strings.Replace(kernel2, "const float* a", "const uchar* a", 1)},
		{name: "void views anything",
			spec: twoBuffers, metal: strings.Replace(kernel2, "const float* a", "const void* a", 1)},
		{name: "vector over scalars",
			spec: twoBuffers, metal: strings.Replace(kernel2, "const float* a", "const float4* a", 1)},
		{name: "signedness is free",
			spec:  strings.Replace(twoBuffers, "type: float, count: 4, role: input", "type: int, count: 4, role: input", 1),
			metal: strings.Replace(kernel2, "const float* a", "const uint* a", 1)},
		{name: "integer widths differ",
			spec:  strings.Replace(twoBuffers, "type: float, count: 4, role: input", "type: int, count: 4, role: input", 1),
			metal: strings.Replace(kernel2, "const float* a", "const ushort* a", 1),
			want:  `the kernel reads ushort, the buffer holds int`},
		{name: "packed against padded",
			spec:  strings.Replace(twoBuffers, "type: float, count: 4, role: input", "type: float3, count: 4, role: input", 1),
			metal: strings.Replace(kernel2, "const float* a", "const packed_float3* a", 1),
			want:  `the kernel's element is 12 bytes, the buffer's 16, and neither divides the other`},
		{name: "implicit index",
			spec:  twoBuffers,
			metal: strings.Replace(kernel2, "uint i", "device float* extra, uint i", 1),
			want:  `kernel parameter "extra" implicit [[buffer(2)]] (k.metal:5:29) is not bound`},
		{name: "implicit index skips named ones",
			spec:  twoBuffers,
			metal: strings.Replace(strings.Replace(kernel2, "const float* a [[buffer(0)]]", "const half* a", 1), "device float* o [[buffer(1)]]", "device float* o [[buffer(0)]]", 1),
			want:  `k.yaml:4:22: case s/default: stage "k": buffer "o" (float) bound to kernel parameter "a" implicit [[buffer(1)]] (k.metal:3:34, device const half*): the kernel reads half`},
		{name: "declared but unused constant",
			spec:  twoBuffers,
			metal: strings.Replace(kernel2, "kernel void", "constant int N [[function_constant(0)]];\nkernel void", 1)},
		{name: "used function constant without a value",
			spec:  twoBuffers,
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "constant int N [[function_constant(0)]];\nkernel void", 1), "o[i] = a[i];", "o[i] = a[i] * N;", 1),
			want:  `k.yaml:6:5: case s/default: stage "k": kernel k uses function constant "N" (k.metal:3:14), which has no value`},
		{name: "constant through a helper, a global and a macro",
			spec: twoBuffers,
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "constant int N [[function_constant(0)]];\nconstant int M = N + 1;\n#define TIMES_M * M\nfloat f(float x) { return x TIMES_M; }\nkernel void", 1),
				"o[i] = a[i];", "o[i] = f(a[i]);", 1),
			want: `uses function constant "N" (k.metal:3:14), which has no value`},
		{name: "guarded constant",
			spec: twoBuffers,
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "constant int N [[function_constant(0)]];\nconstant bool has_n = is_function_constant_defined(N);\nconstant int n_val = has_n ? N : 4;\nkernel void", 1),
				"o[i] = a[i];", "o[i] = a[i] * n_val;", 1)},
		{name: "constant with a value",
			spec: strings.Replace(twoBuffers, "stages:", "constants:\n  N: {type: int, value: 3}\nstages:", 1),
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "constant int N [[function_constant(0)]];\nkernel void", 1),
				"o[i] = a[i];", "o[i] = a[i] * N;", 1)},
		{name: "constant of another type",
			spec: strings.Replace(twoBuffers, "stages:", "constants:\n  N: {type: uint, value: 3}\nstages:", 1),
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "constant int N [[function_constant(0)]];\nkernel void", 1),
				"o[i] = a[i];", "o[i] = a[i] * N;", 1),
			want: `k.yaml:6:3: case s/default: stage "k": constant "N" is given as uint, but k.metal:3:14 declares it int`},
		{name: "constant nobody declares",
			spec:  strings.Replace(twoBuffers, "stages:", "constants:\n  COOP_K5: {type: bool, value: \"true\"}\nstages:", 1),
			metal: kernel2,
			want:  `k.yaml:6:3: case s/default: constant "COOP_K5": no stage's source declares a function constant of that name`},
		{name: "conditional parameter off",
			spec: strings.Replace(twoBuffers, "stages:", "constants:\n  has_m: {type: bool, value: \"false\"}\nstages:", 1),
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "constant bool has_m [[function_constant(0)]];\nkernel void", 1),
				"uint i", "device const half* m [[buffer(2), function_constant(has_m)]], uint i", 1)},
		{name: "conditional parameter on",
			spec: strings.Replace(twoBuffers, "stages:", "constants:\n  has_m: {type: bool, value: \"true\"}\nstages:", 1),
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "constant bool has_m [[function_constant(0)]];\nkernel void", 1),
				"uint i", "device const half* m [[buffer(2), function_constant(has_m)]], uint i", 1),
			want: `kernel parameter "m" [[buffer(2)]] (k.metal:6:34) is not bound`},
		{name: "conditional parameter undecided",
			spec: twoBuffers,
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "constant bool has_m [[function_constant(0)]];\nkernel void", 1),
				"uint i", "device const half* m [[buffer(2), function_constant(has_m)]], uint i", 1),
			want: `uses function constant "has_m" (k.metal:3:15), which has no value`},
		{name: "threadgroup index space",
			spec:  strings.Replace(twoBuffers, "stages:", "  - {name: tg, index: 0, type: float, count: 4, role: threadgroup}\nstages:", 1),
			metal: strings.Replace(kernel2, "uint i", "threadgroup float* tg [[threadgroup(0)]], uint i", 1)},
		{name: "threadgroup parameter unbound",
			spec:  twoBuffers,
			metal: strings.Replace(kernel2, "uint i", "threadgroup float* tg [[threadgroup(0)]], uint i", 1),
			want:  `kernel parameter "tg" [[threadgroup(0)]] (k.metal:5:34) is not bound (buffer "a" is bound at buffer index 0: buffer and threadgroup indices are separate)`},
		{name: "struct sizes",
			spec: strings.Replace(strings.Replace(twoBuffers, "buffers:", "structs:\n  P:\n    - {name: n, type: uint, value: 4}\n    - {name: s, type: float, value: 2}\n    - {name: t, type: float, value: 2}\nbuffers:", 1),
				"stages:", "  - {name: p, index: 2, type: P, role: input}\nstages:", 1),
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "struct P { uint n; float s; };\nkernel void", 1), "uint i", "constant P& p [[buffer(2)]], uint i", 1),
			want:  `k.yaml:10:22: case s/default: stage "k": buffer "p" (P) bound to kernel parameter "p" [[buffer(2)]] (k.metal:6:27, constant P&): the kernel's struct is 8 bytes, the spec's 12`},
		{name: "reference to more than the buffer holds",
			spec:  strings.Replace(twoBuffers, "stages:", "  - {name: n, index: 2, type: uint, role: input, gen: {kind: constant, value: 4}}\nstages:", 1),
			metal: strings.Replace(strings.Replace(kernel2, "kernel void", "struct P { uint n; float s; };\nkernel void", 1), "uint i", "constant P& p [[buffer(2)]], uint i", 1),
			want:  `buffer "n" holds 4 bytes, but kernel parameter "p" [[buffer(2)]] (k.metal:6:27) is a reference to 8 bytes`},
		{name: "one buffer at two indices, read",
			spec:  strings.Replace(twoBuffers, "threads: [4]}", "threads: [4], bind: {a: [0, 2]}}", 1),
			metal: strings.Replace(kernel2, "uint i", "device const float* mask [[buffer(2)]], uint i", 1)},
		{name: "one buffer at two indices, written",
			spec:  strings.Replace(twoBuffers, "threads: [4]}", "threads: [4], bind: {o: [1, 2]}}", 1),
			metal: strings.Replace(kernel2, "uint i", "device const float* mask [[buffer(2)]], uint i", 1),
			want:  `k.yaml:6:5: case s/default: stage "k": buffer "o" is bound at 2 indices and written through "o" [[buffer(1)]]`},
		{name: "template instantiation",
			spec: twoBuffers,
			metal: `template <typename T>
kernel void kt(device const T* a [[buffer(0)]], device float* o [[buffer(1)]], uint i [[thread_position_in_grid]]) { o[i] = a[i]; }
template [[host_name("k")]] kernel void kt<half>(device const half*, device float*, uint);
`,
			want: `the kernel reads half, the buffer holds float`},
		{name: "entry missing",
			spec: twoBuffers, metal: strings.Replace(kernel2, "void k(", "void k2(", 1),
			want: `k.yaml:6:5: case s/default: stage "k": kernel "k" not found in k.metal`},
		{name: "defines choose the parameters",
			spec:  strings.Replace(twoBuffers, "stages:", "defines: {WITH_X: \"1\"}\nstages:", 1),
			metal: strings.Replace(kernel2, "uint i", "\n#if WITH_X\n device float* x [[buffer(2)]],\n#endif\n uint i", 1),
			want:  `kernel parameter "x" [[buffer(2)]]`},
		{name: "defines choose the parameters, off",
			spec:  strings.Replace(twoBuffers, "stages:", "defines: {WITH_X: \"0\"}\nstages:", 1),
			metal: strings.Replace(kernel2, "uint i", "\n#if WITH_X\n device float* x [[buffer(2)]],\n#endif\n uint i", 1)},
		{name: "index from a macro",
			spec:  twoBuffers,
			metal: "#define IDX 2\n" + strings.Replace(kernel2, "uint i", "device float* x [[buffer(IDX)]], uint i", 1),
			want:  `kernel parameter "x" [[buffer(2)]]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkKernel(t, tt.spec, tt.metal)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error = %v\nwant %q", err, tt.want)
			}
		})
	}
}

// TestBundledKernelMistakes makes the mistakes CheckKernels exists for in
// a copy of a bundled spec and requires each to be caught against the real
// kernel.
func TestBundledKernelMistakes(t *testing.T) {
	path := "../kernels/qsa_prompt.yaml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skip("no bundled qsa_prompt spec:", err)
	}
	tests := []struct{ name, old, new, want string }{
		// The fallback set then gives the only value, so the quick set has none.
		{"constant dropped", "constants:\n  COOP_K4: {type: bool, value: \"true\"}\n", "", `uses function constant "COOP_K4"`},
		{"q as float", "    type: half\n    count: T * H * 128\n    shape: [T, H, 128]\n    role: input", "    type: float\n    count: T * H * 128\n    shape: [T, H, 128]\n    role: input",
			`buffer "q" (float) bound to kernel parameter "q" [[buffer(0)]]`},
		{"params not bound", "buffers: [q, kq, ksc, vq, vsc, ids, out, params]", "buffers: [q, kq, ksc, vq, vsc, ids, out]", `kernel parameter "p" [[buffer(7)]]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := string(data)
			if !strings.Contains(text, tt.old) {
				t.Fatalf("test bug: %q not in %s", tt.old, path)
			}
			text = strings.Replace(text, tt.old, tt.new, 1)
			text = strings.Replace(text, "COOP_K4: false", "COOP_K4: {type: bool, value: \"false\"}", 1)
			s, err := Parse(path, []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			in, err := s.Instantiate(s.Sets[0].Cases[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := in.CheckKernels(os.ReadFile); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckKernels = %v, want %q", err, tt.want)
			}
		})
	}
}

// BenchmarkCheckKernels checks one case of the bundled qsa_prompt spec
// (four stages on one 500-line source) against its kernels.
func BenchmarkCheckKernels(b *testing.B) {
	s, err := Load("../kernels/qsa_prompt.yaml")
	if err != nil {
		b.Skip("no bundled qsa_prompt spec:", err)
	}
	in, err := s.Instantiate(s.Sets[0].Cases[0])
	if err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile(s.Source)
	if err != nil {
		b.Fatal(err)
	}
	read := func(string) ([]byte, error) { return src, nil }
	for b.Loop() {
		if err := in.CheckKernels(read); err != nil {
			b.Fatal(err)
		}
	}
}
