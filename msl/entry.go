package msl

import "strings"

// An EntryPoint is one kernel the host can ask a library built from the
// file for, by Name.
type EntryPoint struct {
	Name      string         // the name the host uses: the host_name, or the function's name
	Func      *Func          // the kernel function (the template, for an instantiation)
	Inst      *Instantiation // the explicit instantiation, or nil
	Expansion *Expansion     // the macro use that wrote the kernel, or nil
	Pos       int            // where the entry point is made in the file: the kernel, the instantiation or the macro use
}

// EntryPoints lists the file's kernels the way the Metal compiler makes
// them: each kernel function with a body (by its [[host_name]] if it has
// one), each explicit instantiation with a host_name of a template kernel
// defined in the file or a header it includes (written out or made by a
// macro such as MLX's instantiate_kernel), and each kernel written inside a
// #define body and made by a use of that macro (see Expansion), in source
// order. A template kernel with no instantiation is listed by its name,
// with its template parameters unbound.
func (f *File) EntryPoints() []EntryPoint {
	type item struct {
		ep  EntryPoint
		pos int
	}
	var out []EntryPoint
	instantiated := map[string]bool{}
	for _, in := range f.Instantiations {
		if in.HostName != "" {
			instantiated[in.Func] = true
		}
	}
	add := func(fn *Func, inst *Instantiation, x *Expansion, pos int) {
		name := fn.Name
		if inst != nil {
			name = inst.HostName
		} else if h := hostName(fn); h != "" {
			name = h
		}
		out = append(out, EntryPoint{Name: name, Func: fn, Inst: inst, Expansion: x, Pos: pos})
	}
	// Kernels in source order, each followed by its instantiations.
	seen := map[*Func]bool{}
	for _, fn := range f.Funcs {
		if fn.Kind != Kernel || fn.Body == nil || seen[fn] {
			continue
		}
		seen[fn] = true
		if fn.Template == nil || !instantiated[fn.Name] {
			add(fn, nil, nil, fn.Pos)
		}
	}
	for _, in := range f.Instantiations {
		if in.HostName == "" {
			continue
		}
		if fn := f.templateDef(in.Func); fn != nil && fn.Kind == Kernel {
			add(fn, in, nil, in.Pos)
		}
	}
	for _, x := range f.Expansions {
		for _, fn := range x.File.Funcs {
			if fn.Kind == Kernel && fn.Body != nil && (fn.Template == nil || !instantiated[fn.Name]) {
				add(fn, nil, x, x.Pos)
			}
		}
	}
	// Stable source order of where each is made.
	items := make([]item, len(out))
	for i, ep := range out {
		items[i] = item{ep, ep.Pos}
	}
	for i := 1; i < len(items); i++ {
		for j := i; j > 0 && items[j].pos < items[j-1].pos; j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
	for i := range items {
		out[i] = items[i].ep
	}
	return out
}

// hostName returns the argument of fn's [[host_name("...")]], or "".
func hostName(fn *Func) string {
	for _, a := range fn.Attrs {
		if a.Name == "host_name" && len(a.Args) == 1 {
			return unquote(a.Args[0])
		}
	}
	return ""
}

// Functions returns the functions with a body the file defines, which
// sites and edits may concern: its own in source order, then those its
// macro uses write (Expansions), in order of use. A header's functions are
// not the file's.
func (f *File) Functions() []*Func {
	var out []*Func
	for _, fn := range f.Funcs {
		if fn.Body != nil {
			out = append(out, fn)
		}
	}
	for _, x := range f.Expansions {
		for _, fn := range x.File.Funcs {
			if fn.Body != nil {
				out = append(out, fn)
			}
		}
	}
	return out
}

// QualifiedName returns fn's name qualified by the struct it is a member
// of, Owner::Name (GemvKernel::run, Op::operator()), or its plain name.
func QualifiedName(fn *Func) string {
	if fn.Owner != "" && !strings.Contains(fn.Name, "::") {
		return fn.Owner + "::" + fn.Name
	}
	return fn.Name
}

// FuncsNamed returns the functions of Functions that name names, in
// order: by plain name (every overload and every struct's member of that
// name), by qualified name (GemvKernel::run, Op::operator(); spaces are
// ignored, so `Op::operator ()` is the same), or by an entry point's host
// name (the function with that [[host_name]], or the template an explicit
// instantiation with that host_name instantiates).
func (f *File) FuncsNamed(name string) []*Func {
	want := strings.ReplaceAll(name, " ", "")
	var out []*Func
	all := f.Functions()
	for _, fn := range all {
		if strings.ReplaceAll(fn.Name, " ", "") == want || strings.ReplaceAll(QualifiedName(fn), " ", "") == want || hostName(fn) == name {
			out = append(out, fn)
		}
	}
	if len(out) > 0 {
		return out
	}
	if in := f.instantiationFor(name); in != nil {
		for _, fn := range all {
			if fn.Name == in.Func && fn.Template != nil {
				out = append(out, fn)
			}
		}
	}
	return out
}
