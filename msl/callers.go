package msl

import (
	"fmt"
	"sort"
	"strings"
)

// A Caller is a function of the file whose body calls another function,
// with the number of calls its body makes and how the first of them
// reaches it ("on softmax_finalize (finalize_softmax<float, 1024>)"; ""
// for a call by name).
type Caller struct {
	Func  *Func
	Calls int
	Via   string
}

// Callers returns the functions whose bodies call fn, in source order,
// with the number of calls in each body: calls by name, qualified calls
// and calls on objects (Calls), as the file's entry points instantiate
// them, and, in functions no entry point reaches, with their template
// parameters unbound. Overloads of one name are not told apart. Calls whose
// callee cannot be told are not counted: UnknownCallers lists those that
// may run fn.
func (f *File) Callers(fn *Func) []Caller {
	if fn == nil {
		return nil
	}
	g := f.graph()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.build()
	type key struct {
		caller *Func
		pos    int
	}
	seen := map[key]bool{}
	at := map[*Func]int{}
	var out []Caller
	for _, s := range g.all {
		for _, c := range s.calls {
			if c.Callee != fn || seen[key{c.Caller, c.Pos}] || c.Caller == fn && fn.Kind == Kernel {
				continue
			}
			seen[key{c.Caller, c.Pos}] = true
			i, ok := at[c.Caller]
			if !ok {
				i = len(out)
				at[c.Caller] = i
				out = append(out, Caller{Func: c.Caller, Via: c.Via()})
			}
			out[i].Calls++
		}
	}
	order := map[*Func]int{}
	for i, h := range f.Functions() {
		order[h] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		oi, iok := order[out[i].Func]
		oj, jok := order[out[j].Func]
		if iok != jok {
			return iok
		}
		return oi < oj
	})
	return out
}

// UnknownCallers returns the calls, in code the file's entry points reach,
// whose callee cannot be told (Calls' Why) and that may run fn: a call on
// an object whose type is a template parameter not bound there may run
// any member of its name in the file, and what that member calls.
func (f *File) UnknownCallers(fn *Func) []Call {
	g := f.graph()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.build()
	type key struct {
		caller *Func
		pos    int
	}
	seen := map[key]bool{}
	var out []Call
	for _, k := range g.kernels {
		for _, u := range g.reach(k.state).unknown {
			if seen[key{u.Caller, u.Pos}] || !g.mayRun(u, fn) {
				continue
			}
			seen[key{u.Caller, u.Pos}] = true
			out = append(out, u)
		}
	}
	return out
}

// KernelsReaching returns the kernels of the file (its macro uses' among
// them) whose bodies reach fn through calls (Callees, each instantiation
// with the template arguments it binds), directly or through other
// functions, in source order.
func (f *File) KernelsReaching(fn *Func) []*Func {
	ks, _ := f.kernelsReaching(fn, false)
	return ks
}

// KernelsMayReach returns KernelsReaching(fn) and the kernels that may
// reach fn through a call whose callee cannot be told (UnknownCallers), in
// source order, and whether there are such: what runs a helper with
// assumptions of its callers (their threads per threadgroup) must hold
// for every kernel that may run it.
func (f *File) KernelsMayReach(fn *Func) (kernels []*Func, unknown bool) {
	return f.kernelsReaching(fn, true)
}

func (f *File) kernelsReaching(fn *Func, may bool) ([]*Func, bool) {
	g := f.graph()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.build()
	in := map[*Func]bool{}
	unknown := false
	for _, k := range g.kernels {
		r := g.reach(k.state)
		if k.fn == fn || r.has[fn] {
			in[k.fn] = true
			continue
		}
		if !may {
			continue
		}
		for _, u := range r.unknown {
			if g.mayRun(u, fn) {
				in[k.fn], unknown = true, true
				break
			}
		}
	}
	var out []*Func
	for _, k := range f.Functions() {
		if k.Kind == Kernel && in[k] {
			out = append(out, k)
		}
	}
	return out, unknown
}

// maxNamed bounds the callers and kernels CallContext names (candle's
// block_reducer runs in 81 kernels).
const maxNamed = 8

// CallContext describes where the helper fn runs: the functions that call
// it, with their numbers of calls and how they reach it, the kernels that
// reach it, and the calls whose callee cannot be told that may run it.
// Proofs that look only inside a helper name them when they refuse an
// interval that reaches the helper's start or end, where its callers' code
// runs.
func (f *File) CallContext(fn *Func) string {
	cs := f.Callers(fn)
	us := f.UnknownCallers(fn)
	var msg string
	if len(cs) == 0 {
		msg = fmt.Sprintf("%s is not a kernel and no function of the file calls it", QualifiedName(fn))
	} else {
		var parts []string
		for i, c := range cs {
			if i == maxNamed {
				parts = append(parts, fmt.Sprintf("and %d more", len(cs)-maxNamed))
				break
			}
			s := "1 call"
			if c.Calls != 1 {
				s = fmt.Sprintf("%d calls", c.Calls)
			}
			if c.Via != "" {
				s += " " + c.Via
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", QualifiedName(c.Func), s))
		}
		msg = fmt.Sprintf("%s is called by %s", QualifiedName(fn), strings.Join(parts, ", "))
	}
	var ks []string
	all := f.KernelsReaching(fn)
	for i, k := range all {
		if i == maxNamed {
			ks = append(ks, fmt.Sprintf("and %d more", len(all)-maxNamed))
			break
		}
		ks = append(ks, k.Name)
	}
	if len(ks) > 0 {
		msg += "; kernels reaching it: " + strings.Join(ks, ", ")
	}
	if len(us) > 0 {
		var parts []string
		for i, u := range us {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("and %d more", len(us)-3))
				break
			}
			what := u.Object
			if what == "" {
				what = u.Type
			}
			parts = append(parts, fmt.Sprintf("%s in %s at %s (%s)", what, QualifiedName(u.Caller), f.owner(u.Caller).At(u.Pos), u.Why))
		}
		msg += "; it may also be run by calls whose callee cannot be told: " + strings.Join(parts, "; ")
	}
	if len(cs) == 0 && len(us) == 0 {
		msg += " (it may be reached from another file)"
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
