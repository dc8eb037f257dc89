package prelude

import (
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"metalab/internal/testenv"
)

// TestTranslatedKernel runs a kernel written the way the translator emits
// them, through its mtl_kernels table, on 64 threads, and checks the result
// against a model of half arithmetic and the lane-order reduction.
func TestTranslatedKernel(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	const n = 64
	var a, b [n * 4]uint16
	var in strings.Builder
	for i := range a {
		a[i] = refHalf(r.Float64()*4 - 2)
		b[i] = refHalf(r.Float64()*4 - 2)
		fmt.Fprintf(&in, "%x %x\n", a[i], b[i])
	}
	src := `#include "dot_kernel.cpp"
#include <cstdio>
#include "stub_rt.h"
int main() {
  static half4 a[64], b[64];
  static float out[65];
  Params p{64, 0.5f};
  for (int i = 0; i < 64 * 4; i++) {
    unsigned x, y;
    if (std::scanf("%x %x", &x, &y) != 2) return 1;
    a[i / 4][i % 4] = as_type<half>(ushort(x));
    b[i / 4][i % 4] = as_type<half>(ushort(y));
  }
  int count;
  const mtl_rt::KernelInfo* k = mtl_kernels(&count);
  void* buffers[] = {a, b, out, &p};
  mtl_test::run_threads(64, [&] { k[0].run(buffers, nullptr); });
  std::printf("%s %d %zu\n", k[0].name, count, k[0].slots[0].size);
  for (float v : out) std::printf("%x\n", as_type<uint>(v));
}
`
	out := lines(buildRun(t, src, in.String()))
	if len(out) != 1+n+1 {
		t.Fatalf("got %d lines", len(out))
	}
	if out[0] != "dot_rows 1 8" {
		t.Errorf("kernel table: %q", out[0])
	}
	var s [n]float32
	var last [n]float32
	for tid := 0; tid < n; tid++ {
		var prod [4]float64
		for c := 0; c < 4; c++ {
			prod[c] = halfValue(refHalf(halfValue(a[tid*4+c]) * halfValue(b[tid*4+c])))
		}
		acc := prod[0]
		for c := 1; c < 4; c++ {
			acc = halfValue(refHalf(acc + prod[c]))
		}
		s[tid] = float32(acc)
		last[tid] = float32(prod[3])
	}
	p0 := foldLanes(s[:32], ^uint32(0), add32)
	p1 := foldLanes(s[32:], ^uint32(0), add32)
	sum := p0 + p1
	twice := 2 * sum
	want := []float32{twice * 0.5}
	want = append(want, last[:]...)
	for i, w := range want {
		if got := out[1+i]; got != fmt.Sprintf("%x", math.Float32bits(w)) {
			t.Errorf("out[%d] = %s, want %x (%g)", i, got, math.Float32bits(w), w)
		}
	}
}

// TestKernelCompilesAsSharedObject compiles the kernel TU the way the
// backend does, as a position-independent shared object.
func TestKernelCompilesAsSharedObject(t *testing.T) {
	gxx := needGXX(t)
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(t.TempDir(), "k.so")
	args := append(append([]string{}, cxxFlags...), "-fPIC", "-shared", "-Wall", "-I", here, "-I", runtimeDir(t),
		"-o", so, filepath.Join("testdata", "dot_kernel.cpp"))
	if out, err := testenv.Command(gxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
}
