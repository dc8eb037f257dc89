// Package cuda is the translation target of the cuda backend: one CUDA
// translation unit per entry point, in the shape the cuda runner's ABI
// (backend/cuda/runtime/mtl_cuda.h) describes, compiled by nvcc against
// the cpu backend's metal_stdlib prelude as device code.
//
// The translation unit includes the prelude and mtl_cuda.h, and puts the
// kernel source between MTL_CUDA_BEGIN_SOURCE and MTL_CUDA_END_SOURCE, in
// namespace metal::mtl_src: nvcc includes cuda_runtime.h into every TU,
// whose global float4, fmax, min, ... would otherwise be ambiguous with
// Metal's (or win over them). Inside namespace metal unqualified lookup
// finds Metal's names first, so the source means what it means on the cpu
// backend; that is also why the cpu target's global using-declarations of
// Metal's types are not written.
//
// Address spaces vanish in types (CUDA pointers are generic; constant
// becomes const). A namespace-scope variable in the constant address
// space is MTL_CONSTANT (device memory device code reads), unless it is
// constexpr: a constexpr scalar is usable in device code as it is. Every
// function the translation keeps is MTL_DEVICE. Function constants are
// static constexpr with the spec's values.
//
// Threadgroup storage is __shared__ storage of its own where the source
// declares it, MTL_THREADGROUP(T, name), with T an alias of its type
// written before the function at namespace scope (as the cpu target does)
// so that the kernel table can describe it with the compiler's sizeof:
// nvcc lays the declarations out; the table's slots, laid out by Metal's
// rule by the runner, give the kernel's threadgroup memory as Metal (and
// the cpu backend) count it. Storage whose type cannot be written at
// namespace scope (in a member function, in a template helper, a template
// helper's storage reached with several template arguments) gets a local
// alias and no slot: the table then says that its layout is unknown, and
// the runner reports nvcc's own figure.
//
// The entry is the cpu target's wrapper, mtl_run_<kernel>(buffers,
// tgbufs) (a template for a template kernel), marked MTL_ENTRY and called
// through a plain function, mtl_entry_run, that names the instantiation
// inside the source's namespace. MTL_CUDA_KERNEL(0, ...) makes the
// extern "C" __global__ mtl_entry_0 and its host stubs, with
// __launch_bounds__ where the kernel declares
// [[max_total_threads_per_threadgroup]] or is dispatched with more than 256
// threads (launchBound); the one-entry table is exported with
// MTL_CUDA_EXPORT.
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

// Header includes the prelude and the ABI header and opens the source's
// namespace.
func (target) Header() string {
	return "#include <metal_stdlib>\n#include \"mtl_cuda.h\"\nMTL_CUDA_BEGIN_SOURCE\n"
}

// Overloads makes metal's functions of the given names members of the
// source's namespace, so that the source's functions of those names
// overload them as in Metal rather than hide them (see
// translate.Namespacer).
func (target) Overloads(names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString("using ::metal::" + n + ";\n")
	}
	return b.String()
}

// Keyword drops device, thread and threadgroup; constant is const in a
// type and constexpr on a static data member. A namespace-scope variable
// is MTL_CONSTANT, device memory that device code reads, unless it is a
// constexpr scalar, which device code reads as it is: a constexpr array or
// object (a half, a vector, a table) has no device copy without the mark.
func (target) Keyword(kw string, c translate.Context) string {
	if kw != "constant" {
		return ""
	}
	if c.Scope == translate.FileScope {
		switch {
		case c.Constexpr && c.Scalar:
			return ""
		case c.Constexpr, c.Const:
			return "MTL_CONSTANT"
		}
		return "MTL_CONSTANT const"
	}
	if c.Constexpr {
		return ""
	}
	switch c.Scope {
	case translate.StaticMember:
		return "constexpr"
	}
	if c.Const {
		return ""
	}
	return "const"
}

// FuncPrefix makes every function device code.
func (target) FuncPrefix(*msl.Func) string { return "MTL_DEVICE " }

func dims(ds []string) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("[" + d + "]")
	}
	return b.String()
}

// alias is the name of the type alias of threadgroup variable id.
func alias(id int) string { return "mtl_tg" + strconv.Itoa(id) + "_t" }

// laidOut reports whether v's type can be written at namespace scope
// before its function, so that the kernel table describes it: storage the
// entry reaches once, in the kernel or a plain helper.
func laidOut(v *translate.TGVar) bool {
	if v.Slot < 0 || v.Instances > 1 || v.Func.Owner != "" || v.Func.Template != nil && !v.Entry {
		return false
	}
	for _, name := range v.TemplateNames {
		if name == "" {
			return false
		}
	}
	return true
}

// Threadgroup declares v as __shared__ storage of its own. Its type is an
// alias written before the function when the table can describe it, a
// local alias otherwise.
func (target) Threadgroup(v *translate.TGVar) (string, string, error) {
	a := alias(v.ID)
	if !laidOut(v) {
		return "typedef " + v.Type + " " + a + dims(v.Dims) + "; MTL_THREADGROUP(" + a + ", " + v.Name + ");", "", nil
	}
	if v.Template == "" {
		return "MTL_THREADGROUP(" + a + ", " + v.Name + ");", "typedef " + v.HoistType + " " + a + dims(v.HoistDims) + ";", nil
	}
	// The alias is a template; its use names the function's template
	// parameters, through a local alias (a template-id's commas would
	// split the macro's arguments).
	hoist := v.Template + " using " + a + " = " + v.HoistType + dims(v.HoistDims) + ";"
	local := "typedef " + a + "<" + strings.Join(v.TemplateNames, ", ") + "> " + a + "l; MTL_THREADGROUP(" + a + "l, " + v.Name + ");"
	return local, hoist, nil
}

// FunctionConstant defines c as a static constexpr, usable in device code
// and in constant expressions (array sizes).
func (target) FunctionConstant(c *translate.FuncConst) string {
	return fmt.Sprintf("static constexpr %s %s = static_cast<%s>(%s);", c.Type, c.Name, c.Type, c.Value)
}

// ns is the namespace the source's names live in, from the global one.
const ns = "::metal::mtl_src"

// Entry writes the wrapper mtl_run_<kernel> and mtl_entry_run, closes the
// source's namespace, and writes the __global__ entry, the slot and
// buffer tables and the exported kernel table.
func (target) Entry(e *translate.Entry) (string, error) {
	var b strings.Builder
	var args []string
	for _, p := range e.Params {
		a, err := translate.WrapperArg(p, "cuda")
		if err != nil {
			return "", fmt.Errorf("kernel %s parameter %s: %w", e.Func.Name, p.Name, err)
		}
		args = append(args, a)
	}
	name := e.Func.Name
	if e.Namespace != "" {
		fmt.Fprintf(&b, "namespace %s {\n", e.Namespace)
	}
	call := ns + e.QualName
	if e.Template != "" {
		fmt.Fprintf(&b, "%s\n", e.Template)
		call += "<" + strings.Join(e.TemplateNames, ", ") + ">"
	}
	fmt.Fprintf(&b, "MTL_ENTRY void mtl_run_%s(void* const* mtl_b, void* const* mtl_tg) {\n", name)
	b.WriteString("  using namespace metal;\n  const ::mtl_rt::ThreadCtx& mtl_c = ::mtl_rt::ctx();\n  (void)mtl_b; (void)mtl_tg; (void)mtl_c;\n")
	fmt.Fprintf(&b, "  %s(%s);\n}\n", call, strings.Join(args, ",\n    "))
	if e.Namespace != "" {
		fmt.Fprintf(&b, "}  // namespace %s\n", e.Namespace)
	}
	// The instantiation and the slot aliases are named inside the
	// source's namespace, where the template arguments mean what they
	// mean in the source (float4 is metal's).
	targs := ""
	if e.Template != "" {
		targs = "<" + strings.Join(e.TemplateArgs, ", ") + ">"
	}
	scope := ns + "::"
	if e.Namespace != "" {
		scope = ns + "::" + e.Namespace + "::"
	}
	fmt.Fprintf(&b, "MTL_ENTRY void mtl_entry_run(void* const* mtl_b, void* const* mtl_tg) { %smtl_run_%s%s(mtl_b, mtl_tg); }\n", scope, name, targs)
	known := true
	var slots []*translate.TGVar
	for _, s := range e.Slots {
		if !laidOut(s) {
			known = false
			break
		}
		slots = append(slots, s)
	}
	slotTable := "nullptr"
	if !known {
		slots = nil
	}
	if len(slots) > 0 {
		slotTable = ns + "::mtl_slots"
		b.WriteString("static const ::mtl_rt::TGSlot mtl_slots[] = {\n")
		for _, s := range slots {
			a := ns + "::" + alias(s.ID)
			if s.Namespace != "" {
				a = ns + "::" + s.Namespace + "::" + alias(s.ID)
			}
			if s.Template != "" {
				a += targs
			}
			// Element size and extents come from the compiler, so reports
			// can give element coordinates whatever the declaration's
			// spelling.
			ext := make([]string, 4)
			for d := range ext {
				ext[d] = fmt.Sprintf("::std::extent<%s, %d>::value", a, d)
			}
			fmt.Fprintf(&b, "  {%d, sizeof(%s), alignof(%s), %s, sizeof(::std::remove_all_extents<%s>::type), int(::std::rank<%s>::value), {%s}},\n",
				s.ID, a, a, strconv.Quote(s.Name), a, a, strings.Join(ext, ", "))
		}
		b.WriteString("};\n")
	}
	bufTable, nbufs := "nullptr", 0
	for _, p := range e.Params {
		if p.Bind == translate.BindBuffer && p.Index >= 0 {
			if nbufs == 0 {
				bufTable = ns + "::mtl_bufs"
				b.WriteString("static const ::mtl_rt::BufferParam mtl_bufs[] = {\n")
			}
			w := 0
			if p.Writable {
				w = 1
			}
			fmt.Fprintf(&b, "  {%d, %s, %d, 0},\n", p.Index, strconv.Quote(p.Name), w)
			nbufs++
		}
	}
	if nbufs > 0 {
		b.WriteString("};\n")
	}
	b.WriteString("MTL_CUDA_END_SOURCE\n")
	if n := launchBound(e); n > 0 {
		fmt.Fprintf(&b, "MTL_CUDA_KERNEL_BOUNDED(0, %s::mtl_entry_run, %d)\n", ns, n)
	} else {
		fmt.Fprintf(&b, "MTL_CUDA_KERNEL(0, %s::mtl_entry_run)\n", ns)
	}
	info := "MTL_CUDA_KERNEL_INFO"
	if known {
		info = "MTL_CUDA_KERNEL_INFO_LAID_OUT"
	}
	b.WriteString("static const ::mtl_rt::KernelInfo mtl_kernel_table[] = {\n")
	fmt.Fprintf(&b, "  %s(0, %s, %d, %s, %d, %s, %d),\n", info, strconv.Quote(e.Name), len(slots), slotTable, nbufs, bufTable, e.MaxThreads)
	b.WriteString("};\n")
	b.WriteString("MTL_CUDA_EXPORT(mtl_kernel_table)\n")
	return b.String(), nil
}

// launchBound is the __launch_bounds__ of the entry, 0 for none: the
// largest threadgroup the kernel declares, else the largest it will be
// dispatched with when that is over 256 threads. Metal runs a kernel
// without the attribute at up to 1024 threads (MLX dispatches its block
// softmax, rms and sdpa_vector kernels so); unbounded, nvcc may spend so
// many registers per thread that a block of 1024 cannot launch (896 for
// MLX's rms, 640 for sdpa_vector on an H200). At 256 threads or fewer a
// bound caps nothing (nvcc's own ceiling is 255 registers a thread, and an
// SM's 65536 registers hold a block of 256 of them), so those builds stay
// as they were.
func launchBound(e *translate.Entry) int {
	switch {
	case bounded(e.Func):
		return e.MaxThreads
	case e.Dispatched > 256:
		return min(e.Dispatched, e.MaxThreads)
	}
	return 0
}

// bounded reports whether the kernel declares its largest threadgroup
// ([[max_total_threads_per_threadgroup(n)]]): only then is the entry
// compiled with __launch_bounds__, which caps its registers; elsewhere
// nvcc allocates registers as it sees fit and the runner reports the
// largest threadgroup they allow.
func bounded(fn *msl.Func) bool {
	for _, a := range fn.Attrs {
		if a.Name == "max_total_threads_per_threadgroup" {
			return true
		}
	}
	return false
}
