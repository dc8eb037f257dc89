package msl

import "fmt"

// This file gathers the loop facts mutations consult: what a loop writes,
// whether an expression is loop-invariant, whether a statement runs on
// every iteration. Mutations decide and edit; the facts live here.

// FuncEffects returns the effects of the whole function body, memoised.
func (sc *Scope) FuncEffects() *Effects {
	if sc.funcEff == nil {
		sc.funcEff = sc.Effects(sc.Func.Body)
	}
	return sc.funcEff
}

// LoopFacts are the facts about one loop.
type LoopFacts struct {
	Loop    Stmt     // a *For, *While or *Do
	Body    Stmt     // its body
	Effects *Effects // of the whole loop, header included
	Counted *Loop    // for a counted for loop; else nil
}

// LoopFacts returns the facts of loop s (a *For, *While or *Do), or nil
// for another statement.
func (sc *Scope) LoopFacts(s Stmt) *LoopFacts {
	lf := &LoopFacts{Loop: s, Effects: sc.Effects(s)}
	switch l := s.(type) {
	case *For:
		lf.Body = l.Body
		lf.Counted, _ = sc.CountLoop(l)
	case *While:
		lf.Body = l.Body
	case *Do:
		lf.Body = l.Body
	default:
		return nil
	}
	return lf
}

// RunsOnce reports whether the loop's body certainly runs at least once:
// a do loop, or a counted loop with at least one iteration.
func (lf *LoopFacts) RunsOnce() bool {
	if _, ok := lf.Loop.(*Do); ok {
		return true
	}
	return lf.Counted != nil && lf.Counted.Trips > 0
}

// Invariant reports whether v has the same value throughout the loop: the
// loop never writes it and the function never takes its address (so no
// pointer can write it). It returns why not.
func (sc *Scope) Invariant(lf *LoopFacts, v *Var) (bool, string) {
	if lf.Effects.Writes[v] {
		return false, fmt.Sprintf("%s is written in the loop", v.Name)
	}
	if sc.FuncEffects().AddrTaken[v] {
		return false, fmt.Sprintf("the address of %s is taken, so it may be written through a pointer", v.Name)
	}
	return true, ""
}

// ExprInvariant reports whether every variable expression x reads is
// invariant in the loop (Invariant), and that x has no side effects and
// calls nothing but pure library functions. Memory x reads is the
// caller's to judge (Effects.Accesses). It returns why not.
func (sc *Scope) ExprInvariant(lf *LoopFacts, x Expr, s Stmt) (bool, string) {
	e := sc.ExprEffects(x, s)
	if len(e.Unknown) > 0 {
		return false, e.Unknown[0].Why
	}
	if len(e.Writes) > 0 || len(e.AddrTaken) > 0 {
		return false, "it has side effects"
	}
	if len(e.Calls) > 0 {
		return false, "it calls " + calleeName(e.Calls[0])
	}
	if len(e.Collect) > 0 {
		return false, "it calls the SIMD-group function " + calleeName(e.Collect[0])
	}
	for _, v := range SortedVars(e.Reads) {
		if v.IsArray() {
			continue // an array names its storage; its elements are accesses
		}
		if ok, why := sc.Invariant(lf, v); !ok {
			return false, why
		}
	}
	return true, ""
}

func calleeName(c *CallExpr) string {
	if n, ok := c.Fun.(*NameExpr); ok {
		return n.Name
	}
	return "a function"
}

// OnEveryIteration reports whether s, a statement directly in the loop
// body block, runs on every iteration that reaches the end of the body: no
// statement before it in the body can leave the iteration (break or
// continue of this loop, return, goto). It returns the jump that stops
// it.
func (sc *Scope) OnEveryIteration(body *Block, s Stmt) (bool, string) {
	for _, c := range body.Stmts {
		if c == s {
			return true, ""
		}
		for _, j := range sc.Effects(c).Jumps {
			leaves := j.Kind == "return" || j.Kind == "goto" || j.Kind == "discard_fragment" ||
				j.Kind == "break" && j.Depth == 0 || j.Kind == "continue" && j.Loops == 0
			if leaves {
				return false, fmt.Sprintf("a %s at %s may skip it", j.Kind, sc.File.At(j.Pos))
			}
		}
	}
	return false, "not a statement of the loop body"
}

// MayAlias reports whether a write of memory through variable w (an array,
// pointer or reference) may change what a read through r sees: same
// variable, or same address space and types that alias (the same scalar
// base type, a char type, or a type the facts cannot tell). Distinct
// threadgroup or thread arrays never alias each other.
func (sc *Scope) MayAlias(w, r *Var) bool {
	if w == r {
		return true
	}
	if w.Space != r.Space && w.Space != NoSpace && r.Space != NoSpace {
		return false
	}
	if w.IsArray() && r.IsArray() {
		return false // distinct arrays
	}
	if sc.castDerived(w) || sc.castDerived(r) {
		return true // a pointer cast from another type: its type says nothing
	}
	a, b := scalarBase(sc.File.CanonicalType(w.Elem)), scalarBase(sc.File.CanonicalType(r.Elem))
	if a == "" || b == "" || a == b {
		return true
	}
	if a == "char" || a == "uchar" || b == "char" || b == "uchar" {
		return true
	}
	return false
}

// scalarBase returns the scalar type of a scalar or vector type, "" when
// not one (a struct may hold anything).
func scalarBase(t string) string {
	if s, _, ok := vectorScalar(t); ok {
		return canonicalScalar(s)
	}
	if _, ok := scalarSizes[t]; ok {
		return canonicalScalar(t)
	}
	switch t {
	case "float", "half", "bfloat", "bool":
		return t
	}
	return ""
}

func canonicalScalar(s string) string {
	if c, ok := canonicalInts[s]; ok {
		return c
	}
	return s
}

// Exprs returns the expressions that belong to statement s itself, not to
// the statements nested in it: a declaration's initialisers and array
// dimensions, an expression statement, a return value, a loop's header, a
// condition. Expressions that do not parse are left out; Effects reports
// them as Unknown.
func (sc *Scope) Exprs(s Stmt) []Expr {
	var out []Expr
	add := func(pos, end int) {
		if end <= pos {
			return
		}
		if x, err := sc.parseExpr(pos, end); err == nil && x != nil {
			out = append(out, x)
		}
	}
	switch s := s.(type) {
	case *Decl:
		for _, n := range s.Names {
			for _, d := range n.Dims {
				add(d.Pos, d.End)
			}
			pos, end, _ := sc.File.InitExpr(n)
			add(pos, end)
		}
	case *ExprStmt:
		if p := sc.plan(s); p.x != nil && p.err == nil {
			out = append(out, p.x)
		}
	case *For:
		if v := forVar(sc.File, s); v != nil {
			add(v.Init.Pos, v.Init.End)
		} else {
			add(s.Init.Pos, s.Init.End)
		}
		add(s.Cond.Pos, s.Cond.End)
		add(s.Post.Pos, s.Post.End)
	case *While:
		add(s.Cond.Pos, s.Cond.End)
	case *Do:
		add(s.Cond.Pos, s.Cond.End)
	case *If:
		add(s.Cond.Pos, s.Cond.End)
	case *Switch:
		add(s.Cond.Pos, s.Cond.End)
	}
	return out
}
