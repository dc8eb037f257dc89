package msl

import (
	"slices"
	"testing"
)

// Kernels written inside #define bodies (candle's reduce.metal) call their
// helpers through further macros: Callees reads the expansion's own
// source and looks through the macros it uses.
func TestCalleesThroughMacros(t *testing.T) {
	src := `
template <typename T, int N>
METAL_FUNC void norm(device T* o, threadgroup float* s, uint tid) {
  s[tid] = 1;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  o[tid] = s[N - 1 - tid % N];
}
METAL_FUNC uint unrelated(uint x) { return x + 1; }
#define norm_case(T, N) case N: { threadgroup float s[N]; norm<T, N>(o, s, tid); break; }
#define impl_norm(NAME, T) \
kernel void NAME(device T* o [[buffer(0)]], uint tid [[thread_index_in_threadgroup]], uint w [[threads_per_threadgroup]]) { \
  switch (w) { norm_case(T, 64) norm_case(T, 32) } \
}
impl_norm(norm_f32, float)
kernel void plain(device uint* o [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) { o[tid] = unrelated(tid); }
#define RUN_NORM(o, s, tid) norm<float, 32>(o, s, tid)
kernel void direct(device float* o [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float s[32];
  RUN_NORM(o, s, tid);
}
`
	f, err := Parse("m.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	fn, _, err := f.Entry("norm_f32")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range f.Callees(fn) {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, "norm") || slices.Contains(names, "unrelated") {
		t.Errorf("callees of norm_f32 = %v, want norm and not unrelated", names)
	}
	if !f.hasBarrier(fn) {
		t.Error("norm_f32 reaches a barrier through norm_case and norm")
	}
	// A kernel of the file calling the helper through a macro of its own.
	if d := f.Func("direct"); !f.hasBarrier(d) || !slices.Contains(f.Callees(d), f.Func("norm")) {
		t.Errorf("direct reaches norm through RUN_NORM: callees %v", f.Callees(d))
	}
	if ks := f.KernelsReaching(f.Func("norm")); len(ks) != 2 || ks[0].Name != "direct" && ks[1].Name != "direct" {
		t.Errorf("kernels reaching norm: %v", ks)
	}
}
