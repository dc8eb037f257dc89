package msl

import (
	"fmt"
	"sort"
	"strings"
)

// This file computes what statements read and write: variables (def/use),
// memory by address space, barriers, calls and jumps. Everything is an
// over-approximation: a construct the facts cannot model is reported as
// Unknown, and callers must then refuse.

// An Access is one memory access: an element of an array, or what a
// pointer or reference designates.
type Access struct {
	Expr  Expr      // the access: an *IndexExpr chain, a *UnaryExpr (*p), a *MemberExpr (p.f through a reference, p->f)
	Var   *Var      // the array, pointer or reference accessed
	Space AddrSpace // Var's address space
	Subs  []Expr    // the subscripts, outermost first (a[i][j] gives i, j); nil for *p and members
	Read  bool
	Write bool
	Cond  bool // evaluated only under a condition inside its statement (?:, &&, ||)
	Stmt  Stmt // the statement it belongs to
}

// A Jump is a statement that leaves the normal flow: break, continue,
// return, goto, or a label (a goto target).
type Jump struct {
	Pos, End int
	Kind     string // "break", "continue", "return", "goto", "label", "discard_fragment"
	Stmt     Stmt
	Depth    int // loops and switches around the jump inside the statements analysed: a break at depth 0 leaves them
	Loops    int // loops around the jump inside the statements analysed: a continue at 0 goes to the next iteration of theirs
}

// Effects are the reads and writes of a statement range.
type Effects struct {
	Reads     map[*Var]bool // variables read
	Writes    map[*Var]bool // variables written: assigned, incremented, initialised, or passed to a function that may write them
	AddrTaken map[*Var]bool // variables whose address is taken (&x): they may be written through a pointer anywhere
	Accesses  []Access
	Barriers  []Stmt       // barrier statements and macro uses that hide one
	Calls     []*CallExpr  // calls of functions defined in the file
	Collect   []*CallExpr  // SIMD-group and quad collectives (simd_sum, simd_shuffle, ...)
	Jumps     []Jump       // in source order
	Unknown   []UnknownFor // constructs the facts cannot model
}

// An UnknownFor is a construct the facts could not model, and why.
type UnknownFor struct {
	Pos, End int
	Why      string
}

func newEffects() *Effects {
	return &Effects{Reads: map[*Var]bool{}, Writes: map[*Var]bool{}, AddrTaken: map[*Var]bool{}}
}

// WritesSpace reports whether any access writes memory of space sp, or an
// unknown construct or a call might.
func (e *Effects) WritesSpace(sp AddrSpace) bool {
	for _, a := range e.Accesses {
		if a.Write && a.Space == sp {
			return true
		}
	}
	return len(e.Calls) > 0 || len(e.Unknown) > 0
}

// Effects returns the effects of the statements.
func (sc *Scope) Effects(stmts ...Stmt) *Effects {
	e := newEffects()
	for _, s := range stmts {
		sc.stmtEffects(e, s, 0, 0)
	}
	return e
}

// ExprEffects returns the effects of expression x, which belongs to
// statement s (for Access.Stmt).
func (sc *Scope) ExprEffects(x Expr, s Stmt) *Effects {
	e := newEffects()
	w := &effWalker{sc: sc, e: e, stmt: s}
	w.expr(x, false)
	return e
}

// SpanEffects returns the effects of the expression in [pos, end) of
// statement s.
func (sc *Scope) SpanEffects(pos, end int, s Stmt) *Effects {
	e := newEffects()
	w := &effWalker{sc: sc, e: e, stmt: s}
	w.span(pos, end)
	return e
}

func (sc *Scope) stmtEffects(e *Effects, s Stmt, depth, loops int) {
	w := &effWalker{sc: sc, e: e, stmt: s}
	switch s := s.(type) {
	case nil:
	case *Block:
		if s == nil {
			return
		}
		for _, c := range s.Stmts {
			sc.stmtEffects(e, c, depth, loops)
		}
	case *Decl:
		for _, n := range s.Names {
			v := sc.Lookup(n.Name, n.NamePos+1)
			for _, d := range n.Dims {
				w.span(d.Pos, d.End)
			}
			if pos, end, _ := sc.File.InitExpr(n); end > pos {
				w.span(pos, end)
			}
			if v != nil {
				e.Writes[v] = true
			}
		}
	case *ExprStmt:
		sc.exprStmtEffects(w, s, depth, loops)
	case *For:
		w.forInit(s)
		w.span(s.Cond.Pos, s.Cond.End)
		w.span(s.Post.Pos, s.Post.End)
		sc.stmtEffects(e, s.Body, depth+1, loops+1)
	case *While:
		w.span(s.Cond.Pos, s.Cond.End)
		sc.stmtEffects(e, s.Body, depth+1, loops+1)
	case *Do:
		sc.stmtEffects(e, s.Body, depth+1, loops+1)
		w.span(s.Cond.Pos, s.Cond.End)
	case *If:
		w.span(s.Cond.Pos, s.Cond.End)
		sc.stmtEffects(e, s.Then, depth, loops)
		if s.Else != nil {
			sc.stmtEffects(e, s.Else, depth, loops)
		}
	case *Switch:
		w.span(s.Cond.Pos, s.Cond.End)
		sc.stmtEffects(e, s.Body, depth+1, loops)
	case *Barrier:
		e.Barriers = append(e.Barriers, s)
	case *MacroUse:
		if s.Hides == "barrier" {
			e.Barriers = append(e.Barriers, s)
		}
		e.Unknown = append(e.Unknown, UnknownFor{s.Pos, s.End, "macro " + s.Name + " hides a " + s.Hides})
		if s.Body != nil {
			sc.stmtEffects(e, s.Body, depth+1, loops+1)
		}
	default:
		pos, end := s.Span()
		e.Unknown = append(e.Unknown, UnknownFor{pos, end, "unmodelled statement"})
	}
}

// jumpWords are the statements that leave the normal flow.
var jumpWords = map[string]bool{"break": true, "continue": true, "return": true, "goto": true, "discard_fragment": true}

func (sc *Scope) exprStmtEffects(w *effWalker, s *ExprStmt, depth, loops int) {
	f := sc.File
	toks := f.SigTokens(s.Pos, s.End)
	if len(toks) == 0 {
		return
	}
	first := toks[0]
	switch {
	case first.Text == ";":
		return
	case first.Kind == Ident && (first.Text == "case" || first.Text == "default") && toks[len(toks)-1].Text == ":":
		return
	case first.Kind == Ident && len(toks) == 2 && toks[1].Text == ":" && !stmtKeywords[first.Text]:
		w.e.Jumps = append(w.e.Jumps, Jump{Pos: s.Pos, End: s.End, Kind: "label", Stmt: s, Depth: depth, Loops: loops})
		return
	case first.Kind == Ident && jumpWords[first.Text]:
		w.e.Jumps = append(w.e.Jumps, Jump{Pos: s.Pos, End: s.End, Kind: first.Text, Stmt: s, Depth: depth, Loops: loops})
		if first.Text == "return" && len(toks) > 2 {
			w.span(toks[1].Pos, toks[len(toks)-2].End)
		}
		return
	}
	end := s.End
	if toks[len(toks)-1].Text == ";" {
		end = toks[len(toks)-1].Pos
	}
	w.span(s.Pos, end)
}

// An effWalker collects the effects of the expressions of one statement.
type effWalker struct {
	sc   *Scope
	e    *Effects
	stmt Stmt
}

// span walks the expression in [pos, end), or records it as unknown and
// falls back to a token scan when it does not parse.
func (w *effWalker) span(pos, end int) {
	if end <= pos {
		return
	}
	x, err := w.sc.parseExpr(pos, end)
	if err != nil {
		w.unknown(pos, end, err.Error())
		return
	}
	w.expr(x, false)
}

// InitExpr returns the byte range of the expression (or comma-separated
// expressions) initialising declarator n: after `=`, or inside the
// parentheses or braces of a direct or list initialisation (braced reports
// those forms, and `= {...}`). The range is empty when there is none.
func (f *File) InitExpr(n *Declarator) (pos, end int, braced bool) {
	if n.Init.End <= n.Init.Pos {
		return n.Init.Pos, n.Init.Pos, false
	}
	toks := f.SigTokens(n.Init.Pos, n.Init.End)
	if len(toks) == 0 {
		return n.Init.Pos, n.Init.Pos, false
	}
	k := searchTokens(f.Tokens, n.Init.Pos) - 1
	for k >= 0 && (f.Tokens[k].Kind == Comment || f.Tokens[k].Kind == Directive) {
		k--
	}
	afterEq := k >= 0 && f.Tokens[k].Text == "="
	first, last := toks[0].Text, toks[len(toks)-1].Text
	if (!afterEq && (first == "(" && last == ")" || first == "{" && last == "}")) || afterEq && first == "{" && last == "}" {
		if len(toks) == 2 {
			return toks[1].Pos, toks[1].Pos, true
		}
		return toks[1].Pos, toks[len(toks)-2].End, true
	}
	return n.Init.Pos, n.Init.End, false
}

// forInit walks a for loop's init: a declaration or an expression.
func (w *effWalker) forInit(s *For) {
	if v := forVar(w.sc.File, s); v != nil {
		if lv := w.sc.Lookup(v.Name, v.NamePos+1); lv != nil {
			w.e.Writes[lv] = true
		}
		w.span(v.Init.Pos, v.Init.End)
		return
	}
	w.span(s.Init.Pos, s.Init.End)
}

// unknown records an expression the facts cannot model and scans its
// tokens conservatively: every variable is read, and written when it
// could be; every memory variable is accessed both ways.
func (w *effWalker) unknown(pos, end int, why string) {
	w.e.Unknown = append(w.e.Unknown, UnknownFor{pos, end, why})
	toks := w.sc.File.SigTokens(pos, end)
	for i, t := range toks {
		if t.Kind != Ident || i > 0 && (toks[i-1].Text == "." || toks[i-1].Text == "->") {
			continue
		}
		v := w.sc.Lookup(t.Text, t.Pos)
		if v == nil {
			continue
		}
		w.e.Reads[v] = true
		w.e.Writes[v] = true
		if v.IsMemory() || v.IsArray() {
			w.e.Accesses = append(w.e.Accesses, Access{Expr: &NameExpr{Pos: t.Pos, End: t.End, Name: t.Text}, Var: v, Space: v.Space, Read: true, Write: true, Stmt: w.stmt})
		}
	}
}

// pureBuiltins are Metal library functions without side effects on memory
// or on their arguments.
var pureBuiltins = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`abs fabs min max fmin fmax clamp saturate mix select fma mad
		exp exp2 exp10 log log2 log10 pow powr sqrt rsqrt cbrt sin cos tan asin acos atan atan2 sinh cosh tanh
		asinh acosh atanh sinpi cospi tanpi floor ceil round rint trunc fract fmod remainder copysign sign step
		smoothstep dot cross length length_squared distance distance_squared normalize faceforward reflect refract
		all any isnan isinf isfinite isnormal signbit isordered isunordered not popcount clz ctz absdiff addsat subsat
		hadd rhadd mulhi mad24 mul24 rotate extract_bits insert_bits reverse_bits as_type static_cast reinterpret_cast
		divide precise_divide fast_divide min3 max3 median3 ldexp frexp_float ilogb nextafter fdim hypot
		pack_float_to_unorm4x8 unpack_unorm4x8_to_float transpose determinant convert`) {
		pureBuiltins[n] = true
	}
}

// collectivePrefixes start the names of SIMD-group and quad functions:
// every thread of the group must reach them together.
var collectivePrefixes = []string{"simd_", "quad_", "simdgroup_"}

// IsCollective reports whether name is a SIMD-group or quad function.
func IsCollective(name string) bool {
	name = lastPart(name)
	for _, p := range collectivePrefixes {
		if strings.HasPrefix(name, p) && name != "simdgroup_barrier" {
			return true
		}
	}
	return false
}

// IsPureCall reports whether a call of name has no effect beyond its
// value: a pure library function or a functional cast to a type.
func (f *File) IsPureCall(name string) bool {
	name = lastPart(name)
	return pureBuiltins[name] || f.IsTypeName(name)
}

func (w *effWalker) expr(x Expr, cond bool) {
	switch x := x.(type) {
	case nil:
	case *NameExpr:
		if v := w.sc.Lookup(x.Name, x.Pos); v != nil {
			w.e.Reads[v] = true
		}
	case *LitExpr:
	case *ParenExpr:
		w.expr(x.X, cond)
	case *CastExpr:
		w.expr(x.X, cond)
	case *UnaryExpr:
		switch x.Op {
		case "++", "--":
			w.lvalue(x.X, true, cond)
		case "&":
			w.addrOf(x.X, cond)
		case "*":
			w.deref(x, cond, true, false)
		default:
			w.expr(x.X, cond)
		}
	case *BinaryExpr:
		switch {
		case assignOps[x.Op]:
			w.lvalue(x.X, x.Op != "=", cond)
			w.expr(x.Y, cond)
		case x.Op == "&&" || x.Op == "||":
			w.expr(x.X, cond)
			w.expr(x.Y, true)
		default:
			w.expr(x.X, cond)
			w.expr(x.Y, cond)
		}
	case *CondExpr:
		w.expr(x.C, cond)
		w.expr(x.X, true)
		w.expr(x.Y, true)
	case *IndexExpr, *MemberExpr:
		w.access(x, true, false, cond)
	case *CallExpr:
		w.call(x, cond)
	case *OpaqueExpr:
		w.unknown(x.Pos, x.End, "unmodelled expression")
	}
}

// chain splits an access chain a[i][j].f into its root expression and the
// subscripts and members applied to it.
func chain(x Expr) (root Expr, subs []Expr, members []*MemberExpr) {
	for {
		switch y := x.(type) {
		case *IndexExpr:
			subs = append(subs, y.I)
			x = y.X
			continue
		case *MemberExpr:
			members = append(members, y)
			x = y.X
			continue
		case *ParenExpr:
			x = y.X
			continue
		}
		// Collected outermost first; the callers want source order.
		for i, j := 0, len(subs)-1; i < j; i, j = i+1, j-1 {
			subs[i], subs[j] = subs[j], subs[i]
		}
		for i, j := 0, len(members)-1; i < j; i, j = i+1, j-1 {
			members[i], members[j] = members[j], members[i]
		}
		return x, subs, members
	}
}

// access records the memory access of an index or member chain x (or the
// reads of a plain variable's components) and walks its subscripts.
func (w *effWalker) access(x Expr, read, write, cond bool) {
	root, subs, members := chain(x)
	for _, s := range subs {
		w.expr(s, cond)
	}
	switch r := root.(type) {
	case *NameExpr:
		v := w.sc.Lookup(r.Name, r.Pos)
		if v == nil {
			if len(members) == 0 {
				return
			}
			w.unknown(startOf(x), endOf(x), "access through unknown name "+r.Name)
			return
		}
		hasArrow := false
		for _, m := range members {
			if m.Arrow {
				hasArrow = true
			}
		}
		switch {
		case v.IsArray() && len(subs) < len(v.Dims) && len(members) == 0:
			// An array row: an address, not an access.
			w.e.Reads[v] = true
		case v.IsArray() || v.Ptr > 0 && (len(subs) > 0 || hasArrow) || v.Ref && v.IsMemory():
			w.e.Reads[v] = true
			sp := v.Space
			w.e.Accesses = append(w.e.Accesses, Access{Expr: x, Var: v, Space: sp, Subs: subs, Read: read, Write: write, Cond: cond, Stmt: w.stmt})
			if v.Space == ThreadSpace || v.Space == NoSpace {
				if write {
					w.e.Writes[v] = true
				}
			}
		default:
			// A plain value's component or member (v.x, v[2]).
			if read {
				w.e.Reads[v] = true
			}
			if write {
				w.e.Writes[v] = true
			}
		}
	case *UnaryExpr:
		if r.Op == "*" {
			w.deref(r, cond, read, write)
			return
		}
		w.unknown(startOf(x), endOf(x), "access through an expression")
	case *CallExpr:
		w.call(r, cond)
		if write {
			w.unknown(startOf(x), endOf(x), "write through a call's result")
		}
	default:
		w.unknown(startOf(x), endOf(x), "access through an expression")
	}
}

// deref records *p.
func (w *effWalker) deref(x *UnaryExpr, cond, read, write bool) {
	if n, ok := Unparen(x.X).(*NameExpr); ok {
		if v := w.sc.Lookup(n.Name, n.Pos); v != nil && v.Ptr > 0 {
			w.e.Reads[v] = true
			w.e.Accesses = append(w.e.Accesses, Access{Expr: x, Var: v, Space: v.Space, Read: read, Write: write, Cond: cond, Stmt: w.stmt})
			return
		}
	}
	// *(p + i): the pointer expression's root.
	root := pointerRoot(w.sc, x.X)
	w.expr(x.X, cond)
	if root == nil {
		w.unknown(x.Pos, x.End, "dereference of an unknown pointer")
		return
	}
	w.e.Accesses = append(w.e.Accesses, Access{Expr: x, Var: root, Space: root.Space, Read: read, Write: write, Cond: cond, Stmt: w.stmt})
}

// pointerRoot returns the memory variable a pointer expression (p + i,
// &a[i], a) points into, or nil.
func pointerRoot(sc *Scope, x Expr) *Var {
	switch y := Unparen(x).(type) {
	case *NameExpr:
		if v := sc.Lookup(y.Name, y.Pos); v != nil && (v.Ptr > 0 || v.IsArray()) {
			return v
		}
	case *BinaryExpr:
		if y.Op == "+" || y.Op == "-" {
			if v := pointerRoot(sc, y.X); v != nil {
				return v
			}
			if y.Op == "+" {
				return pointerRoot(sc, y.Y)
			}
		}
	case *UnaryExpr:
		if y.Op == "&" {
			root, _, _ := chain(y.X)
			return pointerRoot(sc, root)
		}
	case *IndexExpr:
		root, subs, _ := chain(y)
		if v := pointerRoot(sc, root); v != nil && len(subs) < len(v.Dims) {
			return v
		}
	case *CastExpr:
		return pointerRoot(sc, y.X)
	}
	return nil
}

// lvalue records a write (and a read when compound) of x.
func (w *effWalker) lvalue(x Expr, compound, cond bool) {
	switch y := Unparen(x).(type) {
	case *NameExpr:
		if v := w.sc.Lookup(y.Name, y.Pos); v != nil {
			w.e.Writes[v] = true
			if compound {
				w.e.Reads[v] = true
			}
			if v.Ref && v.IsMemory() {
				w.e.Accesses = append(w.e.Accesses, Access{Expr: y, Var: v, Space: v.Space, Read: compound, Write: true, Cond: cond, Stmt: w.stmt})
			}
			return
		}
		w.unknown(y.Pos, y.End, "assignment to unknown name "+y.Name)
	case *IndexExpr, *MemberExpr:
		w.access(y, compound, true, cond)
	case *UnaryExpr:
		if y.Op == "*" {
			w.deref(y, cond, compound, true)
			return
		}
		w.unknown(y.Pos, y.End, "assignment to an expression")
	default:
		w.unknown(startOf(x), endOf(x), "assignment to an expression")
	}
}

// addrOf records &x: the address of a variable escapes; the address of an
// element is pointer arithmetic.
func (w *effWalker) addrOf(x Expr, cond bool) {
	root, subs, _ := chain(x)
	for _, s := range subs {
		w.expr(s, cond)
	}
	if n, ok := root.(*NameExpr); ok {
		if v := w.sc.Lookup(n.Name, n.Pos); v != nil {
			w.e.Reads[v] = true
			if !v.IsMemory() {
				w.e.AddrTaken[v] = true
				w.e.Writes[v] = true
			}
			return
		}
	}
	w.expr(root, cond)
}

// call records a call: pure library functions read their arguments;
// atomics and functions of the file may write through pointer and
// reference arguments; barriers are barriers.
func (w *effWalker) call(x *CallExpr, cond bool) {
	name := ""
	if n, ok := x.Fun.(*NameExpr); ok {
		name = lastPart(n.Name)
	} else if m, ok := x.Fun.(*MemberExpr); ok {
		// A member function (texture.write, atomic.load): unknown effects on its object.
		w.unknown(x.Pos, x.End, "member call ."+m.Name)
		return
	} else {
		w.unknown(x.Pos, x.End, "call through an expression")
		return
	}
	f := w.sc.File
	switch {
	case name == "threadgroup_barrier" || name == "simdgroup_barrier":
		w.e.Barriers = append(w.e.Barriers, w.stmt)
		return
	case IsCollective(name):
		w.e.Collect = append(w.e.Collect, x)
		w.pointerArgs(x, name, cond)
		return
	case w.sc.isPure(name):
		w.pointerArgs(x, name, cond)
		return
	case strings.HasPrefix(name, "atomic_"):
		for i, a := range x.Args {
			if i == 0 {
				if root := pointerRoot(w.sc, a); root != nil {
					w.expr(a, cond)
					w.e.Accesses = append(w.e.Accesses, Access{Expr: x, Var: root, Space: root.Space, Read: true, Write: !strings.HasPrefix(name, "atomic_load"), Cond: cond, Stmt: w.stmt})
					continue
				}
				w.unknown(x.Pos, x.End, "atomic on an unknown object")
				continue
			}
			w.expr(a, cond)
		}
		return
	}
	if n, ok := x.Fun.(*NameExpr); ok && n.Name == name && w.sc.objectNamed(name, n.Pos) {
		// A variable hides a function of its name: obj(x) runs the
		// operator() of obj's type, which the facts do not follow.
		w.unknown(x.Pos, x.End, fmt.Sprintf("call of %s, an object: its operator() is not followed", name))
		for _, a := range x.Args {
			w.expr(a, cond)
		}
		return
	}
	callee := f.Func(name)
	if callee == nil && f.IsPureMacro(name) {
		// A macro computing a value from its arguments: each may be
		// evaluated any number of times, or not at all.
		for _, a := range x.Args {
			w.expr(a, true)
		}
		return
	}
	if callee == nil {
		// Not a known pure function nor one of the file's: anything it
		// receives by address may be written.
		w.unknown(x.Pos, x.End, fmt.Sprintf("call of %s, whose effects are unknown", name))
		for _, a := range x.Args {
			w.expr(a, cond)
		}
		return
	}
	w.e.Calls = append(w.e.Calls, x)
	if f.hasBarrier(callee) {
		w.e.Barriers = append(w.e.Barriers, w.stmt)
	}
	for i, a := range x.Args {
		w.expr(a, cond)
		var pm *Param
		if i < len(callee.Params) {
			pm = callee.Params[i]
		}
		if pm != nil && !strings.Contains(pm.Type, "&") && !strings.Contains(pm.Type, "*") {
			continue // by value
		}
		// By reference or pointer (or unknown): the argument may be written.
		if n, ok := Unparen(a).(*NameExpr); ok {
			if v := w.sc.Lookup(n.Name, n.Pos); v != nil {
				if v.IsMemory() || v.IsArray() {
					w.e.Accesses = append(w.e.Accesses, Access{Expr: a, Var: v, Space: v.Space, Read: true, Write: true, Cond: cond, Stmt: w.stmt})
				} else {
					w.e.Writes[v] = true
				}
				continue
			}
		}
		if root := pointerRoot(w.sc, a); root != nil {
			w.e.Accesses = append(w.e.Accesses, Access{Expr: a, Var: root, Space: root.Space, Read: true, Write: true, Cond: cond, Stmt: w.stmt})
		}
	}
}

// pointerArgs walks the arguments of a library call and records an access
// for each that hands it memory: simdgroup_load reads through its second
// argument and simdgroup_store writes through it; any other library call
// given a pointer to shared memory may read and write it.
func (w *effWalker) pointerArgs(x *CallExpr, name string, cond bool) {
	for i, a := range x.Args {
		if i == 0 && matrixResults[name] {
			// simdgroup_multiply(d, a, b) and the like write their
			// first argument, a matrix passed by reference.
			w.lvalue(a, false, cond)
			continue
		}
		w.expr(a, cond)
		if castBuiltins[name] || w.sc.isType(name) {
			continue
		}
		root := pointerArg(w.sc, a)
		if root == nil || root.Space == ThreadSpace || root.Space == NoSpace {
			continue
		}
		read, write := true, true
		switch {
		case name == "simdgroup_load" && i == 1:
			write = false
		case name == "simdgroup_store" && i == 1:
			read = false
		}
		w.e.Accesses = append(w.e.Accesses, Access{Expr: a, Var: root, Space: root.Space, Read: read, Write: write, Cond: cond, Stmt: w.stmt})
	}
}

// matrixResults are the library functions that write their first
// argument by reference.
var matrixResults = map[string]bool{"simdgroup_load": true, "simdgroup_multiply": true, "simdgroup_multiply_accumulate": true}

// pointerArg returns the memory variable an argument hands a call by
// address (a pointer, an array, p + i, &a[i], a cast of one), or nil for a
// value (a[i], x).
func pointerArg(sc *Scope, a Expr) *Var {
	switch y := Unparen(a).(type) {
	case *IndexExpr:
		root, subs, _ := chain(y)
		if n, ok := root.(*NameExpr); ok {
			if v := sc.Lookup(n.Name, n.Pos); v != nil && v.IsArray() && len(subs) < len(v.Dims) {
				return v
			}
		}
		return nil
	case *NameExpr:
		if v := sc.Lookup(y.Name, y.Pos); v != nil && (v.Ptr > 0 || v.IsArray()) {
			return v
		}
		return nil
	}
	return pointerRoot(sc, a)
}

// hasBarrier reports whether fn, or a function it may call, contains a
// barrier: calls whose callee cannot be told count as calls of every
// function they could run.
func (f *File) hasBarrier(fn *Func) bool {
	g := f.graph()
	g.mu.Lock()
	may := g.mayReach(fn)
	g.mu.Unlock()
	for g := range may {
		found := false
		if g.Body != nil {
			Walk(g.Body, func(s Stmt) bool {
				switch s := s.(type) {
				case *Barrier:
					found = true
				case *MacroUse:
					if s.Hides == "barrier" {
						found = true
					}
				}
				return !found
			})
		}
		if found {
			return true
		}
	}
	return false
}

// objectNamed reports whether name, at offset at of the scope's function,
// names a variable (a local, a parameter, or a data member of the
// function's struct) rather than a function.
func (sc *Scope) objectNamed(name string, at int) bool {
	if v := sc.Lookup(name, at); v != nil && v.Kind != GlobalVar {
		return true
	}
	if st := sc.File.graph().ownerSt[sc.Func]; st != nil {
		if _, ok := fieldOf(st, name); ok {
			return true
		}
	}
	return false
}

// SortedVars returns the variables of set by name, then by position, so
// that what is said of the first of them does not depend on map order.
func SortedVars(set map[*Var]bool) []*Var {
	vs := make([]*Var, 0, len(set))
	for v := range set {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].Name != vs[j].Name {
			return vs[i].Name < vs[j].Name
		}
		return vs[i].NamePos < vs[j].NamePos
	})
	return vs
}
