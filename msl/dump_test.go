package msl

import (
	"fmt"
	"sort"
	"strings"
)

// dump renders a File's structure deterministically for golden tests.
func dump(f *File, err error) string {
	var b strings.Builder
	pos := func(off int) string {
		p := f.Position(off)
		return fmt.Sprintf("%d:%d", p.Line, p.Column)
	}
	q := func(s Span) string { return fmt.Sprintf("%q", f.Text(s.Pos, s.End)) }
	attrs := func(as []*Attr) string {
		var parts []string
		for _, a := range as {
			if a.Args == nil {
				parts = append(parts, a.Name)
			} else {
				parts = append(parts, a.Name+"("+strings.Join(a.Args, ",")+")")
			}
		}
		if parts == nil {
			return ""
		}
		return " [[" + strings.Join(parts, ", ") + "]]"
	}
	space := []string{"", "device ", "constant ", "threadgroup ", "thread "}
	var decl func(ind string, d *Decl)
	decl = func(ind string, d *Decl) {
		fmt.Fprintf(&b, "%sdecl %s %s%q", ind, pos(d.Pos), space[d.AddrSpace], d.Type)
		if len(d.Qualifiers) > 0 {
			fmt.Fprintf(&b, " quals=%s", strings.Join(d.Qualifiers, ","))
		}
		b.WriteString(attrs(d.Attrs))
		for _, n := range d.Names {
			fmt.Fprintf(&b, " %s", n.Name)
			for _, dim := range n.Dims {
				fmt.Fprintf(&b, "[%s]", f.Text(dim.Pos, dim.End))
			}
			if n.Init.End > n.Init.Pos {
				fmt.Fprintf(&b, "=%s", q(n.Init))
			}
		}
		b.WriteString("\n")
	}
	pragmas := func(ps []*Pragma) string {
		var parts []string
		for _, p := range ps {
			s := fmt.Sprintf("%q", p.Text)
			if p.Macro != "" {
				s += "<" + p.Macro + ">"
			}
			parts = append(parts, s)
		}
		if parts == nil {
			return ""
		}
		return " pragmas=" + strings.Join(parts, ",")
	}
	var stmt func(ind string, s Stmt)
	stmt = func(ind string, s Stmt) {
		if s == nil {
			return
		}
		switch s := s.(type) {
		case *Block:
			fmt.Fprintf(&b, "%sblock %s-%s\n", ind, pos(s.Lbrace), pos(s.Rbrace))
			for _, c := range s.Stmts {
				stmt(ind+"  ", c)
			}
		case *For:
			fmt.Fprintf(&b, "%sfor %s init=%s cond=%s post=%s%s\n", ind, pos(s.Pos), q(s.Init), q(s.Cond), q(s.Post), pragmas(s.Pragmas))
			stmt(ind+"  ", s.Body)
		case *While:
			fmt.Fprintf(&b, "%swhile %s cond=%s%s\n", ind, pos(s.Pos), q(s.Cond), pragmas(s.Pragmas))
			stmt(ind+"  ", s.Body)
		case *Do:
			fmt.Fprintf(&b, "%sdo %s cond=%s%s\n", ind, pos(s.Pos), q(s.Cond), pragmas(s.Pragmas))
			stmt(ind+"  ", s.Body)
		case *If:
			fmt.Fprintf(&b, "%sif %s cond=%s\n", ind, pos(s.Pos), q(s.Cond))
			stmt(ind+"  ", s.Then)
			if s.Else != nil {
				fmt.Fprintf(&b, "%selse\n", ind)
				stmt(ind+"  ", s.Else)
			}
		case *Switch:
			fmt.Fprintf(&b, "%sswitch %s cond=%s\n", ind, pos(s.Pos), q(s.Cond))
			stmt(ind+"  ", s.Body)
		case *Decl:
			decl(ind, s)
		case *Barrier:
			fmt.Fprintf(&b, "%sbarrier %s %s(%s)\n", ind, pos(s.Pos), s.Name, f.Text(s.Args.Pos, s.Args.End))
		case *MacroUse:
			unknown := ""
			if s.Unknown {
				unknown = " unknown"
			}
			fmt.Fprintf(&b, "%smacro %s %s hides=%s%s\n", ind, pos(s.Pos), s.Name, s.Hides, unknown)
			stmt(ind+"  ", s.Body)
		case *ExprStmt:
			fmt.Fprintf(&b, "%sstmt %s %q", ind, pos(s.Pos), f.Text(s.Pos, s.End))
			if len(s.Calls) > 0 {
				fmt.Fprintf(&b, " calls=%s", strings.Join(s.Calls, ","))
			}
			b.WriteString("\n")
		}
	}
	for _, d := range f.Defines {
		if d.FuncLike {
			fmt.Fprintf(&b, "define %s %s(%s) %q\n", pos(d.Pos), d.Name, strings.Join(d.Params, ","), d.Body)
		} else {
			fmt.Fprintf(&b, "define %s %s %q\n", pos(d.Pos), d.Name, d.Body)
		}
	}
	for _, g := range f.Globals {
		b.WriteString("global ")
		decl("", g)
	}
	var enames []string
	for k := range f.Enums {
		enames = append(enames, k)
	}
	sort.Strings(enames)
	for _, k := range enames {
		fmt.Fprintf(&b, "enum %s=%d\n", k, f.Enums[k])
	}
	var tnames []string
	for k := range f.Types {
		tnames = append(tnames, k)
	}
	sort.Strings(tnames)
	for _, k := range tnames {
		fmt.Fprintf(&b, "type %s = %q\n", k, f.Types[k])
	}
	for _, st := range f.Structs {
		kind := "struct"
		if st.Union {
			kind = "union"
		}
		fmt.Fprintf(&b, "%s %s %s", kind, pos(st.Pos), st.Name)
		if st.Template != nil {
			fmt.Fprintf(&b, " template=[%s]", strings.Join(st.Template, " "))
		}
		if st.SpecArgs != nil {
			fmt.Fprintf(&b, " spec=%q", st.SpecArgs)
		}
		fmt.Fprintf(&b, " methods=%d\n", len(st.Methods))
		for _, d := range st.Fields {
			decl("  field ", d)
		}
	}
	for _, in := range f.Instantiations {
		fmt.Fprintf(&b, "instantiation %s host_name=%q func=%s args=%q\n", pos(in.Pos), in.HostName, in.Func, in.Args)
	}
	for _, fn := range f.Funcs {
		kind := "helper"
		if fn.Kind == Kernel {
			kind = "kernel"
		}
		fmt.Fprintf(&b, "func %s %s %s ret=%q", kind, pos(fn.Pos), fn.Name, fn.ReturnType)
		if fn.Template != nil {
			ps := make([]string, len(fn.Template))
			for i, name := range fn.Template {
				ps[i] = name
				if i < len(fn.TemplateDefaults) && fn.TemplateDefaults[i] != "" {
					ps[i] += "=" + fn.TemplateDefaults[i]
				}
			}
			fmt.Fprintf(&b, " template=[%s]", strings.Join(ps, " "))
		}
		if fn.SpecArgs != nil {
			fmt.Fprintf(&b, " spec=%q", fn.SpecArgs)
		}
		if fn.Owner != "" {
			fmt.Fprintf(&b, " owner=%s", fn.Owner)
		}
		b.WriteString(attrs(fn.Attrs))
		if fn.Body == nil {
			b.WriteString(" decl")
		}
		b.WriteString("\n")
		for _, pm := range fn.Params {
			fmt.Fprintf(&b, "  param %s%q %s%s\n", space[pm.AddrSpace], pm.Type, pm.Name, attrs(pm.Attrs))
		}
		if fn.Body != nil {
			stmt("  ", fn.Body)
		}
	}
	for _, w := range f.Warnings {
		fmt.Fprintf(&b, "warning %s\n", w)
	}
	if err != nil {
		for _, e := range err.(ErrorList) {
			fmt.Fprintf(&b, "error %s\n", e)
		}
	}
	return b.String()
}
