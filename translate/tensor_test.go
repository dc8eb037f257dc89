package translate_test

import (
	"bytes"
	"strings"
	"testing"

	"metalab/backend"
)

// TestTensorOps checks that matmul2d's descriptor argument is written as
// its fields, whatever the spelling (a constexpr variable, a qualified
// name, a constructor call, inside a template), that the result compiles
// against the prelude, and that MetalPerformancePrimitives' header and
// namespace are accepted while another namespace still is not.
func TestTensorOps(t *testing.T) {
	src := `#include <metal_stdlib>
#include <metal_tensor>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>
using namespace metal;
using namespace mpp;

template <int S>
void tile(device const float* a, device const float* b, device float* c) {
    auto A = tensor(a, dextents<int32_t, 2>(8, 8));
    auto B = tensor(b, dextents<int32_t, 2>(8, 8));
    auto C = tensor(c, dextents<int32_t, 2>(8, 8));
    tensor_ops::matmul2d<tensor_ops::matmul2d_descriptor(8, 8, S), execution_simdgroup> op;
    op.run(A, B, C);
    auto part = A.template slice<4, 8>(4, 0);
    auto coop = op.template get_destination_cooperative_tensor<decltype(part), decltype(B), float>();
    op.run(part, B, coop);
    coop.store(C);
}

// As ggml's kernel_mul_mm: in a function template, a descriptor of local
// constexpr values and no template keyword before the member template.
template <typename T>
void tile_local(device const T* a, device const float* b, device float* c) {
    constexpr int NR = 8;
    auto A = tensor(a, dextents<int32_t, 2>(8, 8));
    auto B = tensor(b, dextents<int32_t, 2>(8, 8));
    mpp::tensor_ops::matmul2d<
        mpp::tensor_ops::matmul2d_descriptor(NR, NR, static_cast<int>(dynamic_extent), false, false, false,
            mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate),
        execution_simdgroups<1>> mm;
    auto cT = mm.get_destination_cooperative_tensor<decltype(A), decltype(B), float>();
    mm.run(A, B, cT);
    cT.store(tensor(c, dextents<int32_t, 2>(8, 8)));
}

kernel void k(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],
              device float* c [[buffer(2)]]) {
    constexpr auto desc = tensor_ops::matmul2d_descriptor(8, 8, 8, false, false, false,
        tensor_ops::matmul2d_descriptor::mode::multiply_accumulate);
    mpp::tensor_ops::matmul2d<desc, execution_thread> op;
    auto A = tensor<device const float, dextents<int32_t, 2>, tensor_inline>(a, dextents<int32_t, 2>(8, 8));
    auto B = tensor<device const float, dextents<int32_t, 2>, tensor_inline>(b, dextents<int32_t, 2>(8, 8));
    auto d = op.get_destination_cooperative_tensor<decltype(A), decltype(B), float>();
    op.run(A, B, d);
    d.store(tensor(c, dextents<int32_t, 2>(8, 8)).slice(0, 0));
    tile<8>(a, b, c);
    tile_local<float>(a, b, c);
}
`
	u, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(src), Entry: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"matmul2d<MTL_MATMUL2D_DESC(desc), execution_thread>",
		"mm.template get_destination_cooperative_tensor<", "op.template get_destination_cooperative_tensor<",
		"matmul2d<MTL_MATMUL2D_DESC(tensor_ops::matmul2d_descriptor(8, 8, S)), execution_simdgroup>"} {
		if !bytes.Contains(u.Text, []byte(want)) {
			t.Errorf("the translation lacks %q:\n%s", want, u.Text)
		}
	}
	if out, err := syntaxCheck(t, u.Text); err != nil {
		t.Errorf("the translation does not compile: %v\n%s\n%s", err, out, u.Text)
	}

	bad := strings.Replace(src, "using namespace mpp;", "using namespace mpp;\nnamespace other {}\nusing namespace std;", 1)
	if _, err := translateSrc(t, backend.Source{Name: "k.metal", Text: []byte(bad), Entry: "k"}); err == nil || !strings.Contains(err.Error(), "using namespace std") {
		t.Errorf("using namespace std beside mpp: err = %v, want a refusal naming it", err)
	}
}
