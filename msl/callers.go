package msl

import (
	"fmt"
	"strings"
)

// A Caller is a function of the file whose body calls another function,
// with the number of calls its body makes.
type Caller struct {
	Func  *Func
	Calls int
}

// Callers returns the functions of the file with a body that call fn by
// name, in source order, with the number of calls in each body. Calls are
// found as Callees finds them: a name followed by '(' or by template
// arguments and '('; overloads of one name are not told apart.
func (f *File) Callers(fn *Func) []Caller {
	if fn == nil {
		return nil
	}
	byName := f.funcIndex()
	if byName[fn.Name] == nil {
		byName = map[string]*Func{fn.Name: fn}
	}
	var out []Caller
	for _, g := range f.Funcs {
		if g.Body == nil || g == fn && g.Kind == Kernel {
			continue
		}
		n := 0
		for _, name := range f.calledNames(g, byName) {
			if name == fn.Name {
				n++
			}
		}
		if n > 0 {
			out = append(out, Caller{Func: g, Calls: n})
		}
	}
	return out
}

// KernelsReaching returns the kernels of the file (its macro uses' among
// them) whose bodies reach fn through calls, directly or through other
// functions, in source order.
func (f *File) KernelsReaching(fn *Func) []*Func {
	var out []*Func
	for _, k := range f.Functions() {
		if k.Kind != Kernel {
			continue
		}
		for _, c := range f.Callees(k) {
			if c == fn || c.Name == fn.Name {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// CallContext describes where the helper fn runs: the functions that call
// it, with their numbers of calls, and the kernels that reach it. Proofs
// that look only inside a helper name them when they refuse an interval
// that reaches the helper's start or end, where its callers' code runs.
func (f *File) CallContext(fn *Func) string {
	cs := f.Callers(fn)
	if len(cs) == 0 {
		return fmt.Sprintf("%s is not a kernel and no function of the file calls it (it may be reached through a member call or from another file)", fn.Name)
	}
	var parts []string
	for _, c := range cs {
		s := "1 call"
		if c.Calls != 1 {
			s = fmt.Sprintf("%d calls", c.Calls)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", QualifiedName(c.Func), s))
	}
	msg := fmt.Sprintf("%s is called by %s", fn.Name, strings.Join(parts, ", "))
	var ks []string
	for _, k := range f.KernelsReaching(fn) {
		ks = append(ks, k.Name)
	}
	if len(ks) > 0 {
		msg += "; kernels reaching it: " + strings.Join(ks, ", ")
	}
	return msg
}

// castDerived reports whether pointer variable v is given a value by a
// cast (`(device half *) p`, reinterpret_cast, as_type) in its
// initialiser or an assignment of the function: its element type then
// says nothing about what it may alias.
func (sc *Scope) castDerived(v *Var) bool {
	if v.Ptr == 0 && !v.Ref {
		return false
	}
	if sc.casts == nil {
		sc.casts = map[*Var]bool{}
	}
	if c, ok := sc.casts[v]; ok {
		return c
	}
	f := sc.File
	c := false
	look := func(pos, end int) {
		toks := f.SigTokens(pos, end)
		for i, t := range toks {
			if t.Text == "reinterpret_cast" || t.Text == "as_type" || t.Text == "*" && i+1 < len(toks) && toks[i+1].Text == ")" {
				c = true
			}
			if t.Text == ";" {
				return
			}
		}
	}
	if v.Init.End > v.Init.Pos {
		look(v.Init.Pos, v.Init.End)
	}
	if !c && sc.Func.Body != nil {
		toks := f.SigTokens(sc.Func.Body.Lbrace, sc.Func.Body.Rbrace)
		for i := 0; i+1 < len(toks) && !c; i++ {
			if toks[i].Kind == Ident && toks[i].Text == v.Name && toks[i+1].Text == "=" && (i == 0 || toks[i-1].Text != "." && toks[i-1].Text != "->") {
				look(toks[i+1].End, sc.Func.Body.Rbrace)
			}
		}
	}
	sc.casts[v] = c
	return c
}
