// Package cuda is the translation target of the cuda backend: CUDA C++
// for nvcc or NVRTC against a CUDA prelude that implements metal_stdlib
// on the GPU (the same API as the cpu backend's: namespace metal, half,
// vector types with swizzle methods, simd-group functions on warps,
// threadgroup_barrier on __syncthreads).
//
// Address spaces vanish in types (CUDA pointers are generic; constant
// becomes const); a namespace-scope variable in the constant address
// space becomes __constant__, a constexpr one stays constexpr. Every
// function the translation keeps is __device__. Threadgroup storage is
// __shared__ where it is declared: CUDA lays it out and reports its size
// (cudaFuncGetAttributes), so nothing is hoisted. Function constants are
// static constexpr with the spec's values.
//
// The entry point is one extern "C" __global__ function, mtl_entry, with
// the cpu runner's shape of arguments:
//
//	extern "C" __global__ void mtl_entry(void* const* mtl_b, const unsigned* mtl_tg)
//
// mtl_b[i] is the device pointer bound at [[buffer(i)]] (or the implicit
// position i), an array in device memory; host-sized threadgroup memory
// is the dynamic shared memory, [[threadgroup(i)]] at byte offset
// mtl_tg[i] of it (an array in device memory too; the launch's dynamic
// shared memory size covers them all). Thread positions are read from
// threadIdx, blockIdx, blockDim and gridDim; a simd group is a warp of 32
// consecutive threads by linear thread index, as on Apple GPUs.
// [[max_total_threads_per_threadgroup(n)]] becomes __launch_bounds__(n).
package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"metalab/msl"
	"metalab/translate"
)

// Target is the CUDA target of the cuda backend.
var Target translate.Target = target{}

type target struct{}

func (target) Name() string { return "cuda" }

// Header includes the CUDA prelude and makes Metal's scalar, vector and
// matrix types global names, as Metal has them.
func (target) Header() string { return header }

var header = func() string {
	var b strings.Builder
	b.WriteString("#include <metal_stdlib>\n")
	b.WriteString("using metal::uchar; using metal::ushort; using metal::uint; using metal::ulong; using metal::half; using metal::bfloat;\n")
	for _, e := range []string{"float", "half", "bfloat", "int", "uint", "short", "ushort", "char", "uchar", "bool", "long", "ulong"} {
		for _, p := range []string{"", "packed_"} {
			for n := 2; n <= 4; n++ {
				fmt.Fprintf(&b, "using metal::%s%s%d; ", p, e, n)
			}
		}
		b.WriteString("\n")
	}
	for _, e := range []string{"float", "half"} {
		for c := 2; c <= 4; c++ {
			for r := 2; r <= 4; r++ {
				fmt.Fprintf(&b, "using metal::%s%dx%d; ", e, c, r)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}()

// Keyword drops device, thread and threadgroup; constant is const in a
// type, __constant__ on a namespace-scope variable (not a constexpr one:
// a constexpr variable is usable in device code as it is) and constexpr
// on a static data member.
func (target) Keyword(kw string, c translate.Context) string {
	if kw != "constant" || c.Constexpr {
		return ""
	}
	switch c.Scope {
	case translate.StaticMember:
		return "constexpr"
	case translate.FileScope:
		if c.Const {
			return "__constant__"
		}
		return "__constant__ const"
	}
	if c.Const {
		return ""
	}
	return "const"
}

// FuncPrefix makes every function a device function.
func (target) FuncPrefix(*msl.Func) string { return "__device__ " }

func dims(ds []string) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("[" + d + "]")
	}
	return b.String()
}

// Threadgroup declares v as __shared__ where it stands.
func (target) Threadgroup(v *translate.TGVar) (string, string, error) {
	return "__shared__ " + v.Type + " " + v.Name + dims(v.Dims) + ";", "", nil
}

// FunctionConstant defines c as a static constexpr, usable in device code
// and in constant expressions (array sizes).
func (target) FunctionConstant(c *translate.FuncConst) string {
	return fmt.Sprintf("static constexpr %s %s = static_cast<%s>(%s);", c.Type, c.Name, c.Type, c.Value)
}

// Linear thread index, simd group and quad group arithmetic, from the
// CUDA built-ins.
const (
	linear  = "(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))"
	threads = "(blockDim.x * blockDim.y * blockDim.z)"
)

// attrs maps a thread-position attribute to its components (three for a
// vector attribute, one for a scalar).
var attrs = map[string][]string{
	"thread_position_in_grid":        {"blockIdx.x * blockDim.x + threadIdx.x", "blockIdx.y * blockDim.y + threadIdx.y", "blockIdx.z * blockDim.z + threadIdx.z"},
	"thread_position_in_threadgroup": {"threadIdx.x", "threadIdx.y", "threadIdx.z"},
	"threadgroup_position_in_grid":   {"blockIdx.x", "blockIdx.y", "blockIdx.z"},
	"threads_per_threadgroup":        {"blockDim.x", "blockDim.y", "blockDim.z"},
	"threadgroups_per_grid":          {"gridDim.x", "gridDim.y", "gridDim.z"},
	"threads_per_grid":               {"gridDim.x * blockDim.x", "gridDim.y * blockDim.y", "gridDim.z * blockDim.z"},
	"thread_index_in_threadgroup":    {linear},
	"thread_index_in_simdgroup":      {linear + " % 32u"},
	"simdgroup_index_in_threadgroup": {linear + " / 32u"},
	"simdgroups_per_threadgroup":     {"(" + threads + " + 31u) / 32u"},
	"threads_per_simdgroup":          {"32u"},
	"thread_execution_width":         {"32u"},
	"thread_index_in_quadgroup":      {linear + " % 4u"},
	"quadgroup_index_in_threadgroup": {linear + " / 4u"},
	"quadgroups_per_threadgroup":     {"(" + threads + " + 3u) / 4u"},
}

// Entry writes a __device__ wrapper that binds the arguments and calls
// the kernel (a template for a template kernel) and the __global__
// mtl_entry that calls the wrapper, instantiated.
func (target) Entry(e *translate.Entry) (string, error) {
	var b strings.Builder
	var args []string
	for _, p := range e.Params {
		a, err := paramExpr(p)
		if err != nil {
			return "", fmt.Errorf("kernel %s parameter %s: %w", e.Func.Name, p.Name, err)
		}
		args = append(args, a)
	}
	name := e.Func.Name
	if e.Namespace != "" {
		fmt.Fprintf(&b, "namespace %s {\n", e.Namespace)
	}
	call := e.QualName
	if e.Template != "" {
		fmt.Fprintf(&b, "%s\n", e.Template)
		call += "<" + strings.Join(e.TemplateNames, ", ") + ">"
	}
	fmt.Fprintf(&b, "__device__ void mtl_run_%s(void* const* mtl_b, const unsigned* mtl_tg) {\n", name)
	b.WriteString("  using namespace metal;\n  extern __shared__ unsigned char mtl_shared[];\n  (void)mtl_b; (void)mtl_tg; (void)mtl_shared;\n")
	fmt.Fprintf(&b, "  %s(%s);\n}\n", call, strings.Join(args, ",\n    "))
	if e.Namespace != "" {
		fmt.Fprintf(&b, "}  // namespace %s\n", e.Namespace)
	}
	run := "::mtl_run_" + name
	if e.Namespace != "" {
		run = "::" + e.Namespace + "::mtl_run_" + name
	}
	if e.Template != "" {
		run += "<" + strings.Join(e.TemplateArgs, ", ") + ">"
	}
	fmt.Fprintf(&b, "// %s\n", strconv.Quote(e.Name))
	fmt.Fprintf(&b, "extern \"C\" __global__ void __launch_bounds__(%d) mtl_entry(void* const* mtl_b, const unsigned* mtl_tg) {\n", e.MaxThreads)
	fmt.Fprintf(&b, "  %s(mtl_b, mtl_tg);\n}\n", run)
	return b.String(), nil
}

// paramExpr is the wrapper's argument for parameter p.
func paramExpr(p *translate.Param) (string, error) {
	switch p.Bind {
	case translate.BindBuffer:
		return castArg(p.Type, "mtl_b["+index(p)+"]"), nil
	case translate.BindThreadgroup:
		return castArg(p.Type, "static_cast<void*>(mtl_shared + mtl_tg["+index(p)+"])"), nil
	}
	comps, ok := attrs[p.Attr]
	if !ok {
		return "", fmt.Errorf("attribute [[%s]] is not supported by the cuda backend", p.Attr)
	}
	return threadArg(p.Type, comps)
}

// index is a parameter's buffer or threadgroup index expression.
func index(p *translate.Param) string {
	if p.Index >= 0 {
		return strconv.Itoa(p.Index)
	}
	return "(" + p.IndexExpr + ")"
}

// castArg converts a void* to a parameter of type typ.
func castArg(typ, slot string) string {
	typ = strings.TrimSpace(typ)
	switch {
	case strings.HasSuffix(typ, "*"):
		return fmt.Sprintf("static_cast<%s>(%s)", typ, slot)
	case strings.HasSuffix(typ, "&"):
		base := strings.TrimSpace(strings.TrimSuffix(typ, "&"))
		return fmt.Sprintf("*static_cast<%s*>(%s)", base, slot)
	}
	return fmt.Sprintf("*static_cast<%s*>(%s)", typ, slot)
}

// threadArg builds a thread attribute of the declared type from its
// components.
func threadArg(typ string, comps []string) (string, error) {
	base := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(typ), "const "))
	base = strings.TrimPrefix(base, "metal::")
	n := 1
	elem := base
	if l := len(base); l > 1 && base[l-1] >= '2' && base[l-1] <= '4' {
		n = int(base[l-1] - '0')
		elem = base[:l-1]
	}
	switch elem {
	case "uint", "ushort", "int", "short", "uchar", "char", "long", "ulong", "uint32_t", "uint16_t", "int32_t", "size_t", "unsigned", "unsigned int":
	default:
		return "", fmt.Errorf("thread attribute type %q is not supported", typ)
	}
	if len(comps) == 1 && n != 1 {
		return "", fmt.Errorf("thread attribute of type %q must be a scalar", typ)
	}
	if n > 3 {
		return "", fmt.Errorf("thread attribute type %q has more than 3 components", typ)
	}
	if n == 1 {
		return fmt.Sprintf("static_cast<%s>(%s)", base, comps[0]), nil
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("static_cast<%s>(%s)", elem, comps[i])
	}
	return fmt.Sprintf("%s(%s)", base, strings.Join(parts, ", ")), nil
}
