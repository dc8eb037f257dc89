package msl

import "slices"

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

// Callees returns the functions defined in the file that fn calls, directly
// or transitively, in the order they are first reached; fn itself is not
// included. Calls are found by scanning the body's tokens for a file
// function's name followed by '(' or by template arguments and '('.
func (f *File) Callees(fn *Func) []*Func {
	if fn == nil || fn.Body == nil {
		return nil
	}
	byName := f.funcIndex()
	seen := map[*Func]bool{fn: true}
	var out []*Func
	queue := []*Func{fn}
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		for _, name := range f.ownerOf(g).calledNames(g, byName) {
			h := byName[name]
			if h == nil || seen[h] {
				continue
			}
			seen[h] = true
			out = append(out, h)
			queue = append(queue, h)
		}
	}
	return out
}

// ownerOf returns the file whose source holds fn's body: f, or the
// expansion of one of f's macro uses (candle's kernels written inside
// #define bodies), whose positions are its own.
func (f *File) ownerOf(fn *Func) *File {
	for _, x := range f.Expansions {
		if x.File != nil && slices.Contains(x.File.Funcs, fn) {
			return x.File
		}
	}
	return f
}

// calledNames lists the names in byName that g's body calls.
func (f *File) calledNames(g *Func, byName map[string]*Func) []string {
	lo, hi := g.Body.Lbrace, g.Body.Rbrace+1
	toks := f.Tokens
	var out []string
	prev := ""
	for j := searchTokens(toks, lo); j < len(toks) && toks[j].Pos < hi; j++ {
		t := toks[j]
		if t.Kind == Comment || t.Kind == Directive || t.Kind == Skipped {
			continue
		}
		p := prev
		prev = t.Text
		if t.Kind == Ident && byName[t.Text] == nil && p != "." && p != "->" {
			// A macro's use calls what its replacement calls (candle's
			// rms_norm_case(T, 1024) expands to a call of rms_norm<T,
			// 1024>): callers and barriers hidden in macros are counted.
			if d := f.lookupDefine(t.Text, t.Pos); d != nil {
				out = f.macroCalls(d, byName, out, map[string]bool{}, 0)
			}
			continue
		}
		if t.Kind != Ident || byName[t.Text] == nil || p == "." || p == "->" {
			continue
		}
		k := nextSig(toks, j+1)
		if k < len(toks) && toks[k].Text == "<" {
			depth := 0
			for n := 0; k < len(toks) && n < 24; k, n = nextSig(toks, k+1), n+1 {
				switch toks[k].Text {
				case "<":
					depth++
				case ">":
					depth--
				case ">>":
					depth -= 2
				}
				if depth <= 0 {
					k = nextSig(toks, k+1)
					break
				}
			}
		}
		if k < len(toks) && toks[k].Text == "(" && toks[k].Kind == Punct {
			out = append(out, t.Text)
		}
	}
	return out
}

// macroCalls appends the functions of byName that macro d's replacement
// names, through the macros it uses in turn (at most 8 deep): a name
// followed by '(' or '<' is a call, and so is a bare name, which a
// parameter's use may call. Over-counting is safe: callers make proofs
// refuse, and a callee's barrier makes a call a barrier.
func (f *File) macroCalls(d *Define, byName map[string]*Func, out []string, seen map[string]bool, depth int) []string {
	if depth > 8 || seen[d.Name] {
		return out
	}
	seen[d.Name] = true
	for _, t := range lexExpr(d.Body) {
		if t.Kind != Ident || t.Text == d.Name {
			continue
		}
		if byName[t.Text] != nil {
			out = append(out, t.Text)
			continue
		}
		if e := f.lookupDefine(t.Text, 0); e != nil {
			out = f.macroCalls(e, byName, out, seen, depth+1)
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
