package msl

import (
	"fmt"
	"strings"
)

// TGMem is the static threadgroup memory a kernel declares.
type TGMem struct {
	Kernel  string
	Decls   []TGDecl // every threadgroup declaration in the kernel body and in helpers it calls, source order
	HostSet []HostTG // [[threadgroup(n)]] parameters, sized by the host
	Total   int64    // sum with each decl aligned to its alignment, rounded up to 16; only meaningful if Known
	Known   bool     // false if any decl size is unknown
}

// A TGDecl is one threadgroup variable.
type TGDecl struct {
	Func, Name, Type string
	Pos              int
	Size, Align      int64
	Offset           int64 // placement within the threadgroup block
	Known            bool
	Why              string // why the size is unknown
}

// A HostTG is a threadgroup parameter whose size the host sets.
type HostTG struct {
	Index int64 // from [[threadgroup(n)]]; -1 if it cannot be evaluated
	Name  string
	Type  string
}

// ThreadgroupMemory computes the static threadgroup memory of a kernel,
// named by its function name or by the host_name of an instantiation (whose
// arguments then bind the template's parameters). Declarations are placed in
// source order, kernel first then its callees, each at its alignment; the
// total is rounded up to 16 bytes. env supplies defines and extra template
// arguments; its File and Func are set here.
func ThreadgroupMemory(f *File, kernel string, env Env) (*TGMem, error) {
	fn, args, err := resolveKernel(f, kernel)
	if err != nil {
		return nil, err
	}
	m := &TGMem{Kernel: kernel, Known: true}
	targs := map[string]string{}
	for k, v := range env.TemplateArgs {
		targs[k] = v
	}
	for k, v := range args {
		targs[k] = v
	}
	env.File = f
	env.At = 0
	var off int64
	funcs := append([]*Func{fn}, f.Callees(fn)...)
	for i, g := range funcs {
		e := env
		e.Func = g
		e.TemplateArgs = targs
		if i > 0 {
			e.TemplateArgs = env.TemplateArgs
		}
		if i == 0 {
			for _, p := range g.Params {
				if p.AddrSpace != Threadgroup {
					continue
				}
				h := HostTG{Index: -1, Name: p.Name, Type: p.Type}
				for _, a := range p.Attrs {
					if a.Name == "threadgroup" && len(a.Args) == 1 {
						if v, ok := e.Eval(a.Args[0]); ok {
							h.Index = v
						}
					}
				}
				m.HostSet = append(m.HostSet, h)
			}
		}
		Walk(g.Body, func(s Stmt) bool {
			d, ok := s.(*Decl)
			if !ok || d.AddrSpace != Threadgroup {
				return true
			}
			e.At = d.Pos
			for _, n := range d.Names {
				td := tgDecl(&e, g, d, n)
				if td.Known {
					off = alignUp(off, td.Align)
					td.Offset = off
					off += td.Size
				} else {
					m.Known = false
				}
				m.Decls = append(m.Decls, td)
			}
			return true
		})
	}
	m.Total = alignUp(off, 16)
	return m, nil
}

// resolveKernel finds the function for a kernel name or host_name and the
// template arguments an instantiation binds.
func resolveKernel(f *File, kernel string) (*Func, map[string]string, error) {
	for _, in := range f.Instantiations {
		if in.HostName != kernel {
			continue
		}
		var fn *Func
		for _, g := range f.Funcs {
			if g.Name == in.Func && g.Body != nil && g.Template != nil {
				fn = g
				break
			}
		}
		if fn == nil {
			return nil, nil, fmt.Errorf("kernel %q: template %q not defined", kernel, in.Func)
		}
		args := map[string]string{}
		for i, a := range in.Args {
			if i < len(fn.Template) && fn.Template[i] != "" {
				args[fn.Template[i]] = a
			}
		}
		return fn, args, nil
	}
	for _, g := range f.Funcs {
		if g.Body == nil {
			continue
		}
		if g.Name == kernel {
			return g, nil, nil
		}
		for _, a := range g.Attrs {
			if a.Name == "host_name" && len(a.Args) == 1 && unquote(a.Args[0]) == kernel {
				return g, nil, nil
			}
		}
	}
	return nil, nil, fmt.Errorf("kernel %q not found", kernel)
}

// tgDecl sizes one threadgroup declarator.
func tgDecl(e *Env, g *Func, d *Decl, n *Declarator) TGDecl {
	td := TGDecl{Func: g.Name, Name: n.Name, Type: d.Type, Pos: n.NamePos}
	size, align, ok := e.Layout(d.Type)
	if !ok {
		td.Why = fmt.Sprintf("unknown size of type %s", d.Type)
		return td
	}
	for _, dim := range n.Dims {
		text := strings.TrimSpace(e.File.Text(dim.Pos, dim.End))
		if text == "" {
			td.Why = "array dimension is empty"
			return td
		}
		v, ok := e.Eval(text)
		if !ok {
			td.Why = fmt.Sprintf("cannot evaluate array dimension %s", text)
			return td
		}
		if v < 0 {
			td.Why = fmt.Sprintf("negative array dimension %s = %d", text, v)
			return td
		}
		size *= v
	}
	td.Size, td.Align, td.Known = size, align, true
	return td
}
