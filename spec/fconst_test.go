package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFunctionConstantsAsCompiled holds the kernel-argument check to the
// function constants a kernel needs as Metal's compiler sees them: declared
// in an included header (MLX's sdpa_vector.h), reached through the struct
// a qualified call names (MLX's GEMVKernel::run beside another ::run), and
// through the macro in effect where the kernel uses it (ggml #undefs and
// redefines FC_OP, and names a local NSG before it #defines NSG).
func TestFunctionConstantsAsCompiled(t *testing.T) {
	const spec = `source: k.metal
includes: [inc]
buffers:
  - {name: a, index: 0, type: float, count: 4, role: input, gen: {kind: iota}}
  - {name: o, index: 1, type: float, count: 4, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [4]}
sets:
  s: {cases: [{}]}
`
	const head = "#include <metal_stdlib>\nusing namespace metal;\n"
	const kern = "kernel void k(device const float* a [[buffer(0)]], device float* o [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n    BODY\n}\n"
	tests := []struct {
		name, metal, header, constants, want string
		not                                  string // a constant the error must not name
	}{
		{name: "header constant, set",
			metal:     head + "#include \"sdpa.h\"\n" + strings.Replace(kern, "BODY", "o[i] = f(a[i]);", 1),
			header:    "constant bool has_mask [[function_constant(20)]];\ninline float f(float x) { return has_mask ? x : 0; }\n",
			constants: "constants:\n  has_mask: {type: bool, value: 1}\n"},
		{name: "header constant, unset",
			metal:  head + "#include \"sdpa.h\"\n" + strings.Replace(kern, "BODY", "o[i] = f(a[i]);", 1),
			header: "constant bool has_mask [[function_constant(20)]];\ninline float f(float x) { return has_mask ? x : 0; }\n",
			want:   `inc/sdpa.h:1:15), which has no value`},
		{name: "qualified member call",
			metal: head + "constant bool wide_axpby [[function_constant(1)]];\n" +
				"template <typename T> struct GEMVKernel { static T run(T x) { return x * 2; } };\n" +
				"template <typename T> struct GemvWide { static T run(T x) { return wide_axpby ? x : 0; } };\n" +
				strings.Replace(kern, "BODY", "o[i] = GEMVKernel<float>::run(a[i]);", 1)},
		{name: "qualified member call, the other struct",
			metal: head + "constant bool wide_axpby [[function_constant(1)]];\n" +
				"struct GEMVKernel { static float run(float x) { return x * 2; } };\n" +
				"struct GemvWide { static float run(float x) { return wide_axpby ? x : 0; } };\n" +
				strings.Replace(kern, "BODY", "o[i] = GemvWide::run(a[i]);", 1),
			want: `uses function constant "wide_axpby"`},
		{name: "qualified through an alias in the caller",
			metal: head + "constant bool wide_axpby [[function_constant(1)]];\n" +
				"template <typename T, int N> struct GEMVKernel { static T run(T x) { return x * N; } };\n" +
				"template <typename T> struct GemvWide { static T run(T x) { return wide_axpby ? x : 0; } };\n" +
				strings.Replace(kern, "BODY", "using gemv_kernel = GEMVKernel<float, 2>; o[i] = gemv_kernel::run(a[i]);", 1)},
		{name: "qualified through an alias of the other struct",
			metal: head + "constant bool wide_axpby [[function_constant(1)]];\n" +
				"template <typename T, int N> struct GEMVKernel { static T run(T x) { return x * N; } };\n" +
				"template <typename T> struct GemvWide { static T run(T x) { return wide_axpby ? x : 0; } };\n" +
				strings.Replace(kern, "BODY", "using w = GemvWide<float>; o[i] = w::run(a[i]);", 1),
			want: `uses function constant "wide_axpby"`},
		{name: "unqualified call from a member reaches its own struct",
			metal: head + "constant bool wide_axpby [[function_constant(1)]];\n" +
				"struct A { static float load(float x) { return x; } static float run(float x) { return load(x) * 2; } };\n" +
				"struct W { static float load(float x) { return wide_axpby ? x : 0; } };\n" +
				strings.Replace(kern, "BODY", "o[i] = A::run(a[i]);", 1)},
		{name: "unqualified call from a member, not its own",
			metal: head + "constant bool wide_axpby [[function_constant(1)]];\n" +
				"inline float load(float x) { return wide_axpby ? x : 0; }\n" +
				"struct A { static float run(float x) { return load(x) * 2; } };\n" +
				strings.Replace(kern, "BODY", "o[i] = A::run(a[i]);", 1),
			want: `uses function constant "wide_axpby"`},
		{name: "macro redefined after #undef",
			metal: head + "constant int FC_bin_op [[function_constant(1)]];\nconstant int FC_sum [[function_constant(2)]];\n" +
				"#define FC_OP FC_bin_op\ninline float g(float x) { return x * FC_OP; }\n#undef FC_OP\n#define FC_OP FC_sum\n" +
				strings.Replace(kern, "BODY", "o[i] = a[i] * FC_OP;", 1) + "#undef FC_OP\n",
			want: `uses function constant "FC_sum"`, not: "FC_bin_op"},
		{name: "macro undefined where used",
			metal: head + "constant int FC_bin_op [[function_constant(1)]];\n" +
				"#define FC_OP FC_bin_op\n#undef FC_OP\n" +
				strings.Replace(kern, "BODY", "int FC_OP = 2; o[i] = a[i] * FC_OP;", 1)},
		{name: "local named like a later macro",
			metal: head + "constant short FC_nsg [[function_constant(3)]];\n" +
				strings.Replace(kern, "BODY", "const short NSG = 2; o[i] = a[i] * NSG;", 1) +
				"#define NSG FC_nsg\ninline float h(float x) { return x * NSG; }\n#undef NSG\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "inc"), 0o755); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{"k.yaml": strings.Replace(spec, "stages:", tt.constants+"stages:", 1), "k.metal": tt.metal}
			if tt.header != "" {
				files["inc/sdpa.h"] = tt.header
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Load(filepath.Join(dir, "k.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			cs, err := s.Cases()
			if err != nil {
				t.Fatal(err)
			}
			in, err := s.Instantiate(cs[0])
			if err != nil {
				t.Fatal(err)
			}
			err = in.CheckKernels(os.ReadFile)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckKernels: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("CheckKernels = %v, want an error containing %q", err, tt.want)
			case tt.not != "" && strings.Contains(err.Error(), tt.not):
				t.Fatalf("CheckKernels = %v, which names %s, a constant only a macro not in effect there uses", err, tt.not)
			}
		})
	}
}
