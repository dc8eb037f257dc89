package msl

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"metalab/internal/directive"
)

// TGMem is the static threadgroup memory a kernel declares.
type TGMem struct {
	Kernel   string
	Decls    []TGDecl // every threadgroup variable declared in the kernel body and in helpers it calls, source order (pointers and references into threadgroup memory are not allocations and are left out)
	HostSet  []HostTG // [[threadgroup(n)]] parameters, sized by the host
	Total    int64    // sum with each decl aligned to its alignment, rounded up to 16; when !Known, that of the known decls, a lower bound
	Known    bool     // false if any decl size is unknown
	Declared int64    // the end of the last known decl, before Total's rounding
}

// A TGDecl is one threadgroup variable.
type TGDecl struct {
	Func, Name, Type string   // Type is the element type, without array dimensions
	FuncPtr          *Func    // the function that declares it (its file: File.FileOf)
	Dims             []string // array dimensions, outermost first: each evaluated to a decimal, or its source text where it cannot be
	Pos              int
	Size, Align      int64
	Offset           int64 // placement within the threadgroup block
	Known            bool
	Why              string // why the size is unknown
}

// FullType is the declared type with its array dimensions, e.g.
// float[4][64], so a reader sees what was allocated, not just the element.
func (d TGDecl) FullType() string {
	var b strings.Builder
	b.WriteString(d.Type)
	for _, dim := range d.Dims {
		b.WriteString("[" + dim + "]")
	}
	return b.String()
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
// arguments; its File and Func are set here. Declarations in #if branches
// the parser could not decide all count, an over-estimate: parse with
// ParseWith and the build's defines to decide them.
//
// A template helper called with explicit template arguments (f<T, 4>(...))
// has them bound, the caller's own arguments substituted; each distinct
// instantiation allocates its own threadgroup variables and is counted once.
// Arguments deduced from a call's parameters are not inferred, so such a
// helper's declarations of its template parameter types are unknown.
func ThreadgroupMemory(f *File, kernel string, env Env) (*TGMem, error) {
	fn, args, err := f.Entry(kernel)
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
	var e Env // one per call, not per function reached: the closure below keeps it on the heap
	for i, in := range f.reach(fn, targs, env.TemplateArgs) {
		g := in.fn
		gf := f.owner(g) // a header's or an expansion's function reads its own source
		e = env
		e.File = gf
		e.Func = g
		e.TemplateArgs = in.targs
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
			// The type text carries the first declarator's * or &
			// (`threadgroup float *q, c;` has type float* and declares
			// a float c).
			base := strings.TrimRight(d.Type, "*& ")
			for _, n := range d.Names {
				if gf.pointerDeclarator(n) {
					// `threadgroup float* p` is a thread-local pointer
					// into threadgroup memory, not an allocation.
					continue
				}
				td := tgDecl(&e, g, base, n)
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
	m.Declared = off
	m.Total = alignUp(off, 16)
	return m, nil
}

// pointerDeclarator reports whether declarator n declares a pointer or a
// reference: the token before its name, cv-qualifiers aside, is *, & or &&.
func (f *File) pointerDeclarator(n *Declarator) bool {
	j := searchTokens(f.Tokens, n.NamePos) - 1
	for ; j >= 0; j-- {
		switch f.Tokens[j].Kind {
		case Comment, Directive, Skipped:
			continue
		}
		switch f.Tokens[j].Text {
		case "const", "volatile", "restrict", "__restrict":
			continue
		case "*", "&", "&&":
			return true
		}
		return false
	}
	return false
}

// Entry finds the function to run for a kernel name: the host_name of an
// explicit instantiation (targs then maps the template's parameter names to
// the instantiation's arguments), or the name or [[host_name]] of a function
// with a body.
func (f *File) Entry(kernel string) (fn *Func, targs map[string]string, err error) {
	if f == nil {
		return nil, nil, fmt.Errorf("kernel %q: no file", kernel)
	}
	if in := f.instantiationFor(kernel); in != nil {
		fn := f.templateDef(in.Func)
		if fn == nil {
			return nil, nil, fmt.Errorf("kernel %q: template %q not defined", kernel, in.Func)
		}
		args := map[string]string{}
		for i, a := range in.Args {
			if i < len(fn.Template) && fn.Template[i] != "" {
				args[fn.Template[i]] = a
			}
		}
		bindDefaults(fn, len(in.Args), args)
		return fn, args, nil
	}
	if g := f.entryFunc(kernel); g != nil {
		return g, nil, nil
	}
	return nil, nil, fmt.Errorf("kernel %q not found", kernel)
}

// tgDecl sizes one threadgroup declarator.
func tgDecl(e *Env, g *Func, typ string, n *Declarator) TGDecl {
	td := TGDecl{Func: g.Name, FuncPtr: g, Name: n.Name, Type: boundType(typ, e.TemplateArgs), Pos: n.NamePos}
	// Evaluate every dimension first, so the full type is shown even when
	// the element size is unknown.
	n2 := int64(1)
	dimWhy := ""
	if len(n.Dims) > 0 {
		td.Dims = make([]string, 0, len(n.Dims))
	}
	for _, dim := range n.Dims {
		text := normSpace(e.File.text(dim.Pos, dim.End))
		if text == "" {
			td.Dims = append(td.Dims, "")
			if dimWhy == "" {
				dimWhy = "array dimension is empty"
			}
			continue
		}
		v, ok := e.Eval(text)
		switch {
		case !ok:
			td.Dims = append(td.Dims, text)
			if dimWhy == "" {
				dimWhy = "cannot evaluate array dimension " + text
				if fc := e.functionConstantIn(text); fc != "" {
					dimWhy += "; " + fc + " is a function constant, set when the pipeline is made: give its value with -D " + fc + "=N"
				}
			}
		case v < 0:
			td.Dims = append(td.Dims, text)
			if dimWhy == "" {
				dimWhy = "negative array dimension " + text + " = " + strconv.FormatInt(v, 10)
			}
		default:
			td.Dims = append(td.Dims, strconv.FormatInt(v, 10))
			n2 *= v
		}
	}
	size, align, ok := e.Layout(typ)
	if !ok {
		td.Why = "unknown size of type " + typ
		for _, tp := range g.Template {
			if tp == normType(typ) && e.TemplateArgs[tp] == "" {
				td.Why += " (template parameter of " + g.Name + " not bound)"
			}
		}
		return td
	}
	if dimWhy != "" {
		td.Why = dimWhy
		return td
	}
	td.Size, td.Align, td.Known = size*n2, align, true
	return td
}

// bindDefaults binds the template parameters of fn from the n-th on to
// their default arguments, each with the parameters bound before it
// substituted (typename AccT = T). A parameter named in a function
// parameter's type is left alone: a call or an instantiation's signature
// may deduce it, and deduction wins over a default.
func bindDefaults(fn *Func, n int, targs map[string]string) {
	for i := n; i < len(fn.TemplateDefaults) && i < len(fn.Template); i++ {
		name, def := fn.Template[i], fn.TemplateDefaults[i]
		if name == "" || def == "" || targs[name] != "" || deducible(fn, name) {
			continue
		}
		targs[name] = substitute(def, targs)
	}
}

// deducible reports whether template parameter name appears in the type
// of one of fn's parameters.
func deducible(fn *Func, name string) bool {
	for _, p := range fn.Params {
		if !strings.Contains(p.Type, name) {
			continue
		}
		for _, t := range lexExpr(p.Type) {
			if t.Kind == Ident && t.Text == name {
				return true
			}
		}
	}
	return false
}

// boundType is a declaration's type text with the bound template parameters
// replaced by their arguments, so an instantiation shows half, not T.
func boundType(typ string, targs map[string]string) string {
	var bound map[string]string
	for k, v := range targs {
		if v != "" {
			if bound == nil {
				bound = make(map[string]string, len(targs))
			}
			bound[k] = v
		}
	}
	return substitute(typ, bound)
}

// maxInsts bounds the instantiations reach follows, against recursive
// templates such as f<N> calling f<N - 1>.
const maxInsts = 256

// An inst is one function instantiation reached from a kernel.
type inst struct {
	fn    *Func
	targs map[string]string
}

// reach lists the functions a kernel reaches, breadth first, each distinct
// instantiation once: the kernel with targs, then the file's functions it
// calls. Explicit template arguments at a call site bind a template
// callee's parameters; base supplies arguments for anything else.
func (f *File) reach(fn *Func, targs, base map[string]string) []inst {
	byName := f.funcIndex()
	type instKey struct {
		fn    *Func
		targs string
	}
	seen := map[instKey]bool{}
	var ks []string
	key := func(g *Func, m map[string]string) instKey {
		ks = ks[:0]
		for k, v := range m {
			ks = append(ks, k+"="+v)
		}
		sort.Strings(ks)
		return instKey{g, strings.Join(ks, ",")}
	}
	out := []inst{{fn, targs}}
	seen[key(fn, targs)] = true
	var sites []callSite
	for i := 0; i < len(out); i++ {
		caller := out[i]
		sites = f.owner(caller.fn).callSites(caller.fn, byName, sites[:0])
		for _, c := range sites {
			h := byName[c.name]
			m := map[string]string{}
			for k, v := range base {
				m[k] = v
			}
			for j, a := range c.args {
				if j < len(h.Template) && h.Template[j] != "" {
					m[h.Template[j]] = substitute(a, caller.targs)
				}
			}
			bindDefaults(h, len(c.args), m)
			if k := key(h, m); !seen[k] && len(out) < maxInsts {
				seen[k] = true
				out = append(out, inst{h, m})
			}
		}
	}
	return out
}

// funcIndex maps names to the first definition with a body.
func (f *File) funcIndex() map[string]*Func {
	if f.funcs != nil {
		return f.funcs
	}
	m := map[string]*Func{}
	for _, g := range f.Funcs {
		if g.Body != nil && (m[g.Name] == nil || m[g.Name].SpecArgs != nil && g.SpecArgs == nil) {
			m[g.Name] = g
		}
	}
	return m
}

// A callSite is a call of a file function, with its explicit template
// argument texts.
type callSite struct {
	name string
	args []string
}

// callSites appends to out the calls in g's body of functions in byName. It
// reads the file's tokens in place, stepping over comments, directives and
// skipped text.
func (f *File) callSites(g *Func, byName map[string]*Func, out []callSite) []callSite {
	hi := searchTokens(f.Tokens, g.Body.Rbrace+1)
	toks := f.Tokens[:hi]
	prev := -1
	for j := nextSig(toks, searchTokens(toks, g.Body.Lbrace)); j < hi; j = nextSig(toks, j+1) {
		t := &toks[j]
		p := prev
		prev = j
		if t.Kind != Ident || byName[t.Text] == nil || p >= 0 && (toks[p].Text == "." || toks[p].Text == "->") {
			continue
		}
		c := callSite{name: t.Text}
		k := nextSig(toks, j+1)
		if k < hi && toks[k].Text == "<" {
			depth, start := 0, nextSig(toks, k+1)
			// At most 63 significant tokens from the name on.
			for n := 1; k < hi && n < 64; k, n = nextSig(toks, k+1), n+1 {
				switch toks[k].Text {
				case "<", "(", "[":
					depth++
				case ")", "]":
					depth--
				case ">", ">>":
					depth--
					if toks[k].Text == ">>" {
						depth--
					}
				case ",":
					if depth == 1 {
						c.args = append(c.args, joinSig(toks[start:k]))
						start = nextSig(toks, k+1)
					}
				case ";", "{", "}":
					k = hi
				}
				if depth <= 0 {
					if start < k {
						c.args = append(c.args, joinSig(toks[start:k]))
					}
					k = nextSig(toks, k+1)
					break
				}
			}
		}
		if k < hi && toks[k].Text == "(" {
			out = append(out, c)
		}
	}
	return out
}

// joinSig is joinTokens over the tokens of toks that are not comments,
// directives or skipped text.
func joinSig(toks []Token) string {
	var b strings.Builder
	var prev *Token
	for i := range toks {
		t := &toks[i]
		if t.Kind == Comment || t.Kind == Directive || t.Kind == Skipped {
			continue
		}
		if prev != nil && wordLike(*prev) && wordLike(*t) {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
		prev = t
	}
	return b.String()
}

// substitute replaces the identifiers of text that are bound in targs by
// their arguments.
func substitute(text string, targs map[string]string) string {
	if len(targs) == 0 {
		return text
	}
	if directive.IsIdent(text) {
		// A lone name, the usual type: no need to lex it.
		if v, ok := targs[text]; ok {
			return v
		}
		return text
	}
	toks := lexExpr(text)
	changed := false
	for i, t := range toks {
		if v, ok := targs[t.Text]; ok && t.Kind == Ident {
			toks[i].Text = v
			changed = true
		}
	}
	if !changed {
		return text
	}
	return joinTokens(toks)
}

// functionConstantIn returns the first name in expr that is a
// [[function_constant]] of the file with no -D value, or "".
func (e *Env) functionConstantIn(expr string) string {
	if e.File == nil {
		return ""
	}
	for _, t := range lexExpr(expr) {
		if t.Kind != Ident {
			continue
		}
		r := e.File.globalRef(t.Text)
		if r.d == nil {
			continue
		}
		for _, a := range r.d.Attrs {
			if a.Name == "function_constant" {
				return t.Text
			}
		}
	}
	return ""
}

// PointerDeclarator reports whether declarator n, of a declaration in f,
// declares a pointer or a reference (`threadgroup float *p`), which
// allocates nothing, rather than storage.
func (f *File) PointerDeclarator(n *Declarator) bool { return f.pointerDeclarator(n) }
