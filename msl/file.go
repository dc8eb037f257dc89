package msl

// Func returns the first definition (with a body) of the function named
// name, else its first declaration, else nil. A primary template wins over
// explicit specialisations of it.
func (f *File) Func(name string) *Func {
	var decl, spec *Func
	for _, fn := range f.Funcs {
		if fn.Name != name {
			continue
		}
		if fn.Body != nil && fn.SpecArgs == nil {
			return fn
		}
		if fn.Body != nil && spec == nil {
			spec = fn
		}
		if decl == nil {
			decl = fn
		}
	}
	if spec != nil {
		return spec
	}
	return decl
}

// Kernels returns the kernel functions that have a body, in source order.
func (f *File) Kernels() []*Func {
	var out []*Func
	for _, fn := range f.Funcs {
		if fn.Kind == Kernel && fn.Body != nil {
			out = append(out, fn)
		}
	}
	return out
}

// Text returns the source text in [pos, end), clamped to the file.
func (f *File) Text(pos, end int) string {
	pos = max(0, min(pos, len(f.Src)))
	end = max(pos, min(end, len(f.Src)))
	return string(f.Src[pos:end])
}

// Walk calls fn for s and every statement nested in it, in preorder: block
// statements, loop bodies, if branches, switch bodies and the bodies after
// loop-header macros (MacroUse.Body). When fn returns
// false the children of that statement are skipped. A nil s is ignored.
func Walk(s Stmt, fn func(Stmt) bool) {
	if s == nil || isNilStmt(s) || !fn(s) {
		return
	}
	switch s := s.(type) {
	case *Block:
		for _, c := range s.Stmts {
			Walk(c, fn)
		}
	case *For:
		Walk(s.Body, fn)
	case *While:
		Walk(s.Body, fn)
	case *Do:
		Walk(s.Body, fn)
	case *If:
		Walk(s.Then, fn)
		Walk(s.Else, fn)
	case *Switch:
		Walk(s.Body, fn)
	case *MacroUse:
		Walk(s.Body, fn)
	}
}

// isNilStmt reports whether s is a typed nil pointer, such as a nil *Block
// passed for a function without a body.
func isNilStmt(s Stmt) bool {
	switch s := s.(type) {
	case *Block:
		return s == nil
	case *For:
		return s == nil
	case *While:
		return s == nil
	case *Do:
		return s == nil
	case *If:
		return s == nil
	case *Switch:
		return s == nil
	case *MacroUse:
		return s == nil
	}
	return false
}

// Callees returns the functions defined in the file (its expansions' and
// headers' among them) that fn calls, directly or transitively, in the
// order they are first reached; fn itself is not included. Calls are those
// Calls finds: by name, qualified, and on objects (obj(x) runs the
// operator() of obj's type, obj.f(x) its f), fn's template parameters
// unbound; a call whose callee cannot be told (an object whose type is one
// of those parameters) is not followed (Reached lists them).
func (f *File) Callees(fn *Func) []*Func {
	out, _ := f.Reached(fn, nil)
	return out
}

// macroCalls appends the names of functions (isFunc) that macro d's
// replacement names, through the macros it uses in turn (at most 8 deep):
// a name followed by '(' or '<' is a call, and so is a bare name, which a
// parameter's use may call. Over-counting is safe: callers make proofs
// refuse, and a callee's barrier makes a call a barrier.
func (f *File) macroCalls(d *Define, isFunc func(string) bool, out []string, seen map[string]bool, depth int) []string {
	if depth > 8 || seen[d.Name] {
		return out
	}
	seen[d.Name] = true
	for _, t := range lexExpr(d.Body) {
		if t.Kind != Ident || t.Text == d.Name {
			continue
		}
		if isFunc(t.Text) {
			out = append(out, t.Text)
			continue
		}
		if e := f.lookupDefine(t.Text, 0); e != nil {
			out = f.macroCalls(e, isFunc, out, seen, depth+1)
		}
	}
	return out
}

// nextSig returns the index of the first token at or after i that is not a
// comment, directive or skipped text.
func nextSig(toks []Token, i int) int {
	for i < len(toks) && (toks[i].Kind == Comment || toks[i].Kind == Directive || toks[i].Kind == Skipped) {
		i++
	}
	return i
}

// searchTokens returns the index of the first token at or after offset off.
func searchTokens(toks []Token, off int) int {
	lo, hi := 0, len(toks)
	for lo < hi {
		m := (lo + hi) / 2
		if toks[m].Pos < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
