package translate

import "metalab/msl"

// MSL 4 tensors and MetalPerformancePrimitives. The prelude implements
// them in C++17 (backend/cpu/prelude/metal_tensor.h), where a template
// takes no argument of class type: matmul2d<desc, Scope> names its
// descriptor, a constexpr matmul2d_descriptor, as a template argument.
// tensorOps writes that argument as its fields, through the prelude's
// MTL_MATMUL2D_DESC, which C++17 takes.

// tensorHeaders are MetalPerformancePrimitives' headers: found as empty
// files like Metal's own, the prelude providing what they declare.
var tensorHeaders = []string{
	"MetalPerformancePrimitives/MetalPerformancePrimitives.h",
	"MetalPerformancePrimitives/MPPTensorOpsMatMul2d.h",
}

func init() { metalHeaders = append(metalHeaders, tensorHeaders...) }

// tensorHeader reports whether an angle-bracket include names one of
// tensorHeaders.
func tensorHeader(name string) bool {
	for _, h := range tensorHeaders {
		if name == h {
			return true
		}
	}
	return false
}

// tensorOps rewrites the descriptor argument of each matmul2d<...>
// template-id.
func (t *tr) tensorOps() {
	ts := t.toks
	for i := 0; i+2 < len(ts); i++ {
		if t.skip[i] || ts[i].Kind != msl.Ident || ts[i].Text != "matmul2d" || t.text(i+1) != "<" {
			continue
		}
		if p := t.text(i - 1); p == "." || p == "->" {
			continue
		}
		if t.rep[i+1] != nil {
			continue
		}
		// The first argument ends at the first comma or closing angle
		// outside brackets.
		depth, end := 0, -1
		for j := i + 2; j < len(ts) && end < 0; j++ {
			switch t.text(j) {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case ",", ">", ">>":
				if depth == 0 {
					end = j
				}
			case ";":
				j = len(ts)
			}
		}
		if end < 0 || end == i+2 || t.rep[end] != nil {
			continue
		}
		open, close := "<MTL_MATMUL2D_DESC(", ")"+t.text(end)
		t.rep[i+1] = &open
		t.rep[end] = &close
	}
	t.tensorMemberTemplates()
}

// tensorMemberTemplates are the prelude's member templates of the tensor
// types that kernels call with explicit arguments.
var tensorMemberTemplates = map[string]bool{"get_destination_cooperative_tensor": true}

// tensorMemberTemplates writes `template` before a call of one of
// tensorMemberTemplates through . or ->, where the source has none. In a
// function template, g++ takes a matmul2d whose descriptor names a local
// constexpr (ggml's kernel_mul_mm: matmul2d_descriptor(NRB, NRA, ...)) for
// a dependent type, and then `mm.get_destination_cooperative_tensor<...>()`
// for a comparison; Metal's compiler does not. The keyword is valid in
// either case.
func (t *tr) tensorMemberTemplates() {
	ts := t.toks
	for i := 1; i+1 < len(ts); i++ {
		if t.skip[i] || t.rep[i] != nil || ts[i].Kind != msl.Ident || !tensorMemberTemplates[ts[i].Text] || t.text(i+1) != "<" {
			continue
		}
		if p := t.text(i - 1); p != "." && p != "->" {
			continue
		}
		text := "template " + ts[i].Text
		t.rep[i] = &text
	}
}

// tensorNamespace reports whether a using-directive may name n besides
// metal: MetalPerformancePrimitives' mpp (and mpp::tensor_ops).
func tensorNamespace(n string) bool { return n == "mpp" }
