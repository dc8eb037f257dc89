package msl

import "strings"

// A fileIndex holds the by-name lookups that evaluating many kernels of one
// file repeats: without it each lookup scans the file's globals, structs,
// instantiations or functions, quadratic over a large library. Parse builds
// it once the file is complete; the file is read-only afterwards, so it is
// safe to share. Each table records the length of the slice it indexes and
// is ignored when the slice has since changed, falling back to a scan.
type fileIndex struct {
	globals  map[string]globalRef
	nGlobals int

	structs  map[string]*Struct
	nStructs int

	insts  map[string]*Instantiation // first instantiation with each host name
	nInsts int

	templates map[string]*Func // first template definition with a body, by name
	byName    map[string]int   // index in Funcs of the first definition with a body, by name
	byHost    map[string]int   // index in Funcs of the first definition with a body, by [[host_name]]
	ext       map[string]*Func // functions of headers and expansions with a body, by name and host_name, where the file has none
	nFuncs    int

	src string // the source as lexed, for texts without copying
}

// text is Text without a copy: a substring of the source as lexed, which
// token texts already share.
func (f *File) text(pos, end int) string {
	x := f.idx
	if x == nil || len(x.src) != len(f.Src) {
		return f.Text(pos, end)
	}
	pos = max(0, min(pos, len(x.src)))
	end = max(pos, min(end, len(x.src)))
	return x.src[pos:end]
}

// normSpace is strings.Join(strings.Fields(s), " "), without allocating
// when s is already in that form.
func normSpace(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isSpace(c) && (c != ' ' || i == 0 || i == len(s)-1 || s[i+1] == ' ') || c >= 0x80 {
			return strings.Join(strings.Fields(s), " ")
		}
	}
	return s
}

// A globalRef is one file-scope declarator.
type globalRef struct {
	d    *Decl
	n    *Declarator
	file *File // the file d's offsets refer to
}

// buildIndex indexes f's globals, structs, instantiations and functions.
func buildIndex(f *File) *fileIndex {
	x := &fileIndex{
		globals:   make(map[string]globalRef, len(f.Globals)),
		nGlobals:  len(f.Globals),
		structs:   make(map[string]*Struct, len(f.Structs)),
		nStructs:  len(f.Structs),
		insts:     make(map[string]*Instantiation, len(f.Instantiations)),
		nInsts:    len(f.Instantiations),
		templates: map[string]*Func{},
		byName:    make(map[string]int, len(f.Funcs)),
		byHost:    map[string]int{},
		nFuncs:    len(f.Funcs),
	}
	for _, d := range f.Globals {
		for _, n := range d.Names {
			if _, ok := x.globals[n.Name]; !ok {
				x.globals[n.Name] = globalRef{d, n, f}
			}
		}
	}
	for _, st := range f.Structs {
		if _, ok := x.structs[st.Name]; !ok {
			x.structs[st.Name] = st
		}
	}
	for _, in := range f.Instantiations {
		if _, ok := x.insts[in.HostName]; !ok {
			x.insts[in.HostName] = in
		}
	}
	x.ext = map[string]*Func{}
	for _, xp := range f.Expansions {
		for _, g := range xp.File.Funcs {
			if g.Body == nil {
				continue
			}
			if g.Template != nil && g.SpecArgs == nil && x.templates[g.Name] == nil {
				x.templates[g.Name] = g
			}
			if x.ext[g.Name] == nil {
				x.ext[g.Name] = g
			}
			if h := hostName(g); h != "" && x.ext[h] == nil {
				x.ext[h] = g
			}
		}
	}
	defer func() {
		// A header's names, after the file's own: what the header
		// itself sees, its includes' included.
		for _, in := range f.Includes {
			h := in.File
			if h == nil || h.idx == nil {
				continue
			}
			hx := h.idx
			for k, v := range hx.globals {
				if _, ok := x.globals[k]; !ok {
					x.globals[k] = v
				}
			}
			for k, v := range hx.structs {
				if _, ok := x.structs[k]; !ok {
					x.structs[k] = v
				}
			}
			for k, v := range hx.templates {
				if _, ok := x.templates[k]; !ok {
					x.templates[k] = v
				}
			}
			for k, i := range hx.byName {
				if _, ok := x.byName[k]; !ok && x.ext[k] == nil {
					x.ext[k] = h.Funcs[i]
				}
			}
			for k, i := range hx.byHost {
				if _, ok := x.byHost[k]; !ok && x.ext[k] == nil {
					x.ext[k] = h.Funcs[i]
				}
			}
			for k, v := range hx.ext {
				if _, ok := x.byName[k]; !ok && x.ext[k] == nil {
					x.ext[k] = v
				}
			}
		}
	}()
	for i, g := range f.Funcs {
		if g.Body == nil {
			continue
		}
		if g.Template != nil && g.SpecArgs == nil && x.templates[g.Name] == nil {
			x.templates[g.Name] = g
		}
		if j, ok := x.byName[g.Name]; !ok || f.Funcs[j].SpecArgs != nil && g.SpecArgs == nil {
			// The primary template wins over explicit specialisations.
			x.byName[g.Name] = i
		}
		for _, a := range g.Attrs {
			if a.Name == "host_name" && len(a.Args) == 1 {
				h := unquote(a.Args[0])
				if _, ok := x.byHost[h]; !ok {
					x.byHost[h] = i
				}
			}
		}
	}
	return x
}

// globalNamed returns the first file-scope declarator named name, in the
// file, its headers or (for an expansion) the file it was expanded in.
func (f *File) globalNamed(name string) (*Decl, *Declarator) {
	r := f.globalRef(name)
	return r.d, r.n
}

// globalRef is globalNamed with the file the declaration is in.
func (f *File) globalRef(name string) globalRef {
	if x := f.idx; x != nil && x.nGlobals == len(f.Globals) {
		if r, ok := x.globals[name]; ok {
			return r
		}
	} else {
		for _, d := range f.Globals {
			for _, n := range d.Names {
				if n.Name == name {
					return globalRef{d, n, f}
				}
			}
		}
	}
	if up := f.up(); up != nil {
		return up.globalRef(name)
	}
	return globalRef{}
}

// structNamed returns the first struct named name, or, for a qualified name,
// the first named by its last component.
func (f *File) structNamed(name string) *Struct {
	for {
		if st := f.structExactly(name); st != nil {
			return st
		}
		i := strings.LastIndex(name, "::")
		if i < 0 {
			return nil
		}
		name = name[i+2:]
	}
}

// structExactly returns the first struct whose name is name.
func (f *File) structExactly(name string) *Struct {
	if x := f.idx; x != nil && x.nStructs == len(f.Structs) {
		if st := x.structs[name]; st != nil {
			return st
		}
	} else {
		for _, st := range f.Structs {
			if st.Name == name {
				return st
			}
		}
	}
	if up := f.up(); up != nil {
		return up.structExactly(name)
	}
	return nil
}

// instantiationFor returns the first instantiation whose host name is kernel.
func (f *File) instantiationFor(kernel string) *Instantiation {
	if x := f.idx; x != nil && x.nInsts == len(f.Instantiations) {
		return x.insts[kernel]
	}
	for _, in := range f.Instantiations {
		if in.HostName == kernel {
			return in
		}
	}
	return nil
}

// templateDef returns the first template definition with a body named name.
func (f *File) templateDef(name string) *Func {
	if x := f.idx; x != nil && x.nFuncs == len(f.Funcs) {
		if g := x.templates[name]; g != nil {
			return g
		}
	} else {
		for _, g := range f.Funcs {
			if g.Name == name && g.Body != nil && g.Template != nil && g.SpecArgs == nil {
				return g
			}
		}
	}
	if up := f.up(); up != nil {
		return up.templateDef(name)
	}
	return nil
}

// entryFunc returns the first function with a body whose name or
// [[host_name]] is kernel.
func (f *File) entryFunc(kernel string) *Func {
	if x := f.idx; x != nil && x.nFuncs == len(f.Funcs) {
		i, ok := x.byName[kernel]
		if j, hok := x.byHost[kernel]; hok && (!ok || j < i) {
			i, ok = j, true
		}
		if !ok {
			if g := x.ext[kernel]; g != nil {
				return g
			}
			if f.parent != nil {
				return f.parent.entryFunc(kernel)
			}
			return nil
		}
		return f.Funcs[i]
	}
	for _, g := range f.Funcs {
		if g.Body == nil {
			continue
		}
		if g.Name == kernel {
			return g
		}
		for _, a := range g.Attrs {
			if a.Name == "host_name" && len(a.Args) == 1 && unquote(a.Args[0]) == kernel {
				return g
			}
		}
	}
	return nil
}

// up returns the file whose names are in scope after f's own: the file a
// macro expansion was expanded in, or the file that included a header.
func (f *File) up() *File {
	if f.parent != nil {
		return f.parent
	}
	return f.includer
}

// typeAlias returns the typedef or using alias name, in f, its headers or
// the files it falls back on.
func (f *File) typeAlias(name string) (string, bool) {
	for g := f; g != nil; g = g.up() {
		if t, ok := g.Types[name]; ok {
			return t, true
		}
	}
	return "", false
}

// enumValue returns the enumerator name, in f, its headers or the files it
// falls back on.
func (f *File) enumValue(name string) (int64, bool) {
	for g := f; g != nil; g = g.up() {
		if v, ok := g.Enums[name]; ok {
			return v, true
		}
	}
	return 0, false
}
