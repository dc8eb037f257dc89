// Package cpp is the translation target of the cpu backend: C++17 against
// the metal_stdlib prelude of backend/cpu/prelude, with the entry point
// exported through the mtl_kernels table that backend/cpu/runtime/mtl_rt.h
// declares.
//
// Address spaces vanish (constant becomes const): the runner has one
// memory. Threadgroup storage becomes a reference to the runner's storage
// for the threadgroup, mtl_rt::tg_slot(id), through a type alias written
// before the function at namespace scope, so that the slot table sizes it
// with the compiler's own sizeof; storage the entry does not reach gets a
// local alias and an id outside the table (the runner stops with a clear
// message should it ever be reached). The entry gets a wrapper,
// mtl_run_<kernel>, that casts the runner's buffer and threadgroup
// pointers to the kernel's parameter types and reads thread positions
// from mtl_rt::ctx(); for a template kernel the wrapper is a template with
// the kernel's header, instantiated with the instantiation's arguments.
// Function constants become static constants with the spec's values.
package cpp

import (
	"fmt"
	"strconv"
	"strings"

	"metalab/msl"
	"metalab/translate"
)

// Target is the C++ target of the cpu backend.
var Target translate.Target = target{}

type target struct{}

func (target) Name() string { return "cpu" }

// Header includes the prelude and makes Metal's scalar, vector and
// matrix types global names, as Metal has them (a header may use half or
// float4 before any using namespace metal); the prelude declares them in
// namespace metal.
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

// Keyword drops device, thread and threadgroup, and spells constant as
// const, or constexpr for a static data member (which C++ initialises in
// its struct only when constexpr); nothing where const or constexpr
// already says it.
func (target) Keyword(kw string, c translate.Context) string {
	switch {
	case kw != "constant" || c.Constexpr:
		return ""
	case c.Scope == translate.StaticMember:
		return "constexpr"
	case c.Const:
		return ""
	}
	return "const"
}

func (target) FuncPrefix(*msl.Func) string { return "" }

func dims(ds []string) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("[" + d + "]")
	}
	return b.String()
}

// Threadgroup declares v as a reference to its slot's storage. Storage
// the entry reaches in a member function or a template helper is not
// supported: its slot's alias cannot be written before the function.
func (target) Threadgroup(v *translate.TGVar) (string, string, error) {
	if v.Slot >= 0 {
		switch {
		case v.Func.Owner != "":
			return "", "", fmt.Errorf("threadgroup declaration in member function %s is not supported by the cpu target", msl.QualifiedName(v.Func))
		case v.Func.Template != nil && !v.Entry:
			return "", "", fmt.Errorf("threadgroup declaration in template helper %s is not supported by the cpu target", v.Func.Name)
		}
		for _, name := range v.TemplateNames {
			if name == "" {
				return "", "", fmt.Errorf("threadgroup declaration in %s, a template with an unnamed parameter, is not supported by the cpu target", v.Func.Name)
			}
		}
	}
	id := strconv.Itoa(v.ID)
	alias := "mtl_tg" + id + "_t"
	if v.Slot < 0 {
		local := "typedef " + v.Type + " " + alias + dims(v.Dims) + "; " +
			alias + "& " + v.Name + " = *static_cast<" + alias + "*>(mtl_rt::tg_slot(" + id + "));"
		return local, "", nil
	}
	use := alias
	var hoist string
	if v.Template != "" {
		use = alias + "<" + strings.Join(v.TemplateNames, ", ") + ">"
		hoist = v.Template + " using " + alias + " = " + v.HoistType + dims(v.HoistDims) + ";"
	} else {
		hoist = "typedef " + v.HoistType + " " + alias + dims(v.HoistDims) + ";"
	}
	local := use + "& " + v.Name + " = *static_cast<" + use + "*>(mtl_rt::tg_slot(" + id + "));"
	return local, hoist, nil
}

// FunctionConstant defines c as a static constant.
func (target) FunctionConstant(c *translate.FuncConst) string {
	return fmt.Sprintf("static const %s %s = static_cast<%s>(%s);", c.Type, c.Name, c.Type, c.Value)
}

// Entry writes the wrapper mtl_run_<kernel>, the slot and buffer tables
// and mtl_kernels.
func (target) Entry(e *translate.Entry) (string, error) {
	var b strings.Builder
	var args []string
	for _, p := range e.Params {
		a, err := translate.WrapperArg(p, "cpu")
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
	fmt.Fprintf(&b, "static void mtl_run_%s(void* const* mtl_b, void* const* mtl_tg) {\n", name)
	fmt.Fprintf(&b, "  using namespace metal;\n  const mtl_rt::ThreadCtx& mtl_c = mtl_rt::ctx();\n  (void)mtl_b; (void)mtl_tg; (void)mtl_c;\n")
	fmt.Fprintf(&b, "  %s(%s);\n}\n", call, strings.Join(args, ",\n    "))
	if e.Namespace != "" {
		fmt.Fprintf(&b, "}  // namespace %s\n", e.Namespace)
	}
	targs := ""
	if e.Template != "" {
		targs = "<" + strings.Join(e.TemplateArgs, ", ") + ">"
	}
	ns := "::"
	if e.Namespace != "" {
		ns = "::" + e.Namespace + "::"
	}
	slots := "nullptr"
	for _, s := range e.Slots {
		if s.Instances > 1 {
			return "", fmt.Errorf("threadgroup declaration %s in template helper %s, reached with several template arguments, is not supported by the cpu target", s.Name, s.Func.Name)
		}
	}
	if len(e.Slots) > 0 {
		slots = "mtl_slots"
		b.WriteString("static const mtl_rt::TGSlot mtl_slots[] = {\n")
		for _, s := range e.Slots {
			alias := "::mtl_tg" + strconv.Itoa(s.ID) + "_t"
			if s.Namespace != "" {
				alias = "::" + s.Namespace + "::mtl_tg" + strconv.Itoa(s.ID) + "_t"
			}
			if s.Template != "" {
				alias += targs
			}
			// Element size and extents come from the compiler, so reports
			// can give element coordinates whatever the declaration's
			// spelling.
			ext := make([]string, 4)
			for d := range ext {
				ext[d] = fmt.Sprintf("std::extent<%s, %d>::value", alias, d)
			}
			fmt.Fprintf(&b, "  {%d, sizeof(%s), alignof(%s), %s, sizeof(std::remove_all_extents<%s>::type), int(std::rank<%s>::value), {%s}},\n",
				s.ID, alias, alias, strconv.Quote(s.Name), alias, alias, strings.Join(ext, ", "))
		}
		b.WriteString("};\n")
	}
	bufs, nbufs := "nullptr", 0
	for _, p := range e.Params {
		if p.Bind == translate.BindBuffer && p.Index >= 0 {
			if nbufs == 0 {
				bufs = "mtl_bufs"
				b.WriteString("static const mtl_rt::BufferParam mtl_bufs[] = {\n")
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
	b.WriteString("static const mtl_rt::KernelInfo mtl_kernel_table[] = {\n")
	fmt.Fprintf(&b, "  {%s, &%smtl_run_%s%s, %d, %s, %d, %d, %s},\n", strconv.Quote(e.Name), ns, name, targs, len(e.Slots), slots, e.MaxThreads, nbufs, bufs)
	b.WriteString("};\n")
	b.WriteString("extern \"C\" const mtl_rt::KernelInfo* mtl_kernels(int* count) { *count = 1; return mtl_kernel_table; }\n")
	return b.String(), nil
}
