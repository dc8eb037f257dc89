package preadd

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

//go:embed doc.go
var doc string

// Mutation is the preadd mutation.
var Mutation = &mutate.Mutation{
	Name: "preadd",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

// A term is one addend of an index or of pointer arithmetic.
type term struct {
	x   msl.Expr
	neg bool
}

// An occ is one subscript or pointer-arithmetic chain.
type occ struct {
	x       msl.Expr // the IndexExpr, or the outermost BinaryExpr of a pointer chain
	base    msl.Expr // the pointer, array or array row
	baseVar *msl.Var
	idx     msl.Expr // the subscript (nil for a pointer chain)
	value   string   // for a subscript of a value that is not a pointer or array (a vector), its name; such an occurrence only yields a reason
	terms   []term
	flat    bool // parentheses were removed to find the terms
	stmt    msl.Stmt
	root    msl.Expr   // the expression of stmt that holds x
	loops   []msl.Stmt // enclosing loops, innermost first
}

// A group is the accesses of one base with one invariant part, in one loop.
type group struct {
	loop    msl.Stmt
	base    string // the base's text
	inv     string // the invariant terms' text, signs included
	occs    []*occ
	invs    [][]term // per occurrence: invariant terms
	rests   [][]term // per occurrence: the other terms
	name    string
	pointer string // the new pointer's type
	at      int
	indent  string
}

func run(p *mutate.Pass) error {
	f := p.File
	sc := p.Scope()
	parents := msl.Parents(p.Func.Body)
	var occs []*occ
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		var loops []msl.Stmt
		for q := parents[s]; q != nil; q = parents[q] {
			switch q.(type) {
			case *msl.For, *msl.While, *msl.Do:
				loops = append(loops, q)
			}
		}
		// A loop's own header belongs to the loop, not to its body.
		if len(loops) > 0 || isLoop(s) {
			for _, x := range sc.Exprs(s) {
				occs = append(occs, find(sc, x, s, loops)...)
			}
		}
		return true
	})
	groups := map[string]*group{}
	var order []*group
	lfs := map[msl.Stmt]*msl.LoopFacts{}
	for _, o := range occs {
		for _, l := range o.loops {
			lf := lfs[l]
			if lf == nil {
				lf = sc.LoopFacts(l)
				lfs[l] = lf
			}
			inv, rest, why := split(sc, lf, o)
			if why == "" {
				why = rowFormed(sc, lf, parents, o)
			}
			if why != "" {
				if why != "-" {
					pos, end := o.x.Span()
					p.Skip(mutate.Skip{Pos: pos, End: end, Reason: why})
				}
				continue
			}
			key := fmt.Sprintf("%d\x00%s\x00%s", startOf(l), normText(f, o.base), termsText(f, inv, false))
			g := groups[key]
			if g == nil {
				g = &group{loop: l, base: text(f, o.base), inv: termsText(f, inv, true)}
				groups[key] = g
				order = append(order, g)
			}
			g.occs = append(g.occs, o)
			g.invs = append(g.invs, inv)
			g.rests = append(g.rests, rest)
		}
	}
	// Names: the base and the invariant identifiers; groups of one block
	// that would share a name get their loop's line.
	type key struct {
		block msl.Stmt
		name  string
	}
	count := map[key]int{}
	var kept []*group
	for _, g := range order {
		at, indent, why := mutate.DeclPoint(f, parents, g.loop)
		if why != "" {
			p.Skip(mutate.Skip{Pos: startOf(g.loop), End: mutate.HeaderEnd(g.loop), Reason: fmt.Sprintf("pre-add %s%s: %s", g.base, g.inv, why)})
			continue
		}
		g.at, g.indent = at, indent
		g.name = baseName(f, g.occs[0], g.invs[0])
		g.pointer = pointerType(g.occs[0].baseVar)
		count[key{parents[g.loop], g.name}]++
		kept = append(kept, g)
	}
	used := map[key]bool{}
	for _, g := range kept {
		if count[key{parents[g.loop], g.name}] > 1 {
			g.name = fmt.Sprintf("%s_L%d", g.name, f.Position(startOf(g.loop)).Line)
		}
		for n, k := g.name, 2; ; k++ {
			if !sc.Declared(n) && !used[key{parents[g.loop], n}] {
				g.name = n
				break
			}
			n = fmt.Sprintf("%s_%d", g.name, k)
		}
		used[key{parents[g.loop], g.name}] = true
		report(p, sc, g)
	}
	return nil
}

// rowFormed returns why o's base, an array row a[i] of a two-dimensional
// (or deeper) array, may not be formed before loop lf: the pointer
// declared there forms a[i] on every path that reaches the loop, where
// the loop formed it only where o is evaluated. An a[i] whose subscripts
// lie outside a's bounds is undefined behaviour even unread (the checking
// mode reports it as a bad access) and lets the compiler assume the
// subscript in bounds: qsa_flash reads sp[sg] only under sg < 2, and
// sp[sg] formed before its loop was out of bounds for the other simd
// groups. So the row is formed early only when its subscripts are
// constants within a's bounds, or when the loop certainly runs and
// evaluates o on every iteration. It returns "" when the base is no such
// row.
func rowFormed(sc *msl.Scope, lf *msl.LoopFacts, parents map[msl.Stmt]msl.Stmt, o *occ) string {
	f := sc.File
	row, ok := msl.Unparen(o.base).(*msl.IndexExpr)
	if !ok {
		return ""
	}
	_, subs, _ := chainOf(row)
	dims := o.baseVar.Dims
	inBounds := len(subs) < len(dims)
	for i, x := range subs {
		if n, ok := maxOf(x); !ok || i >= len(dims) || dims[i] < 0 || n >= dims[i] {
			inBounds = false
		}
	}
	if inBounds {
		return ""
	}
	what := fmt.Sprintf("the row %s would be formed before the loop", text(f, o.base))
	bounds := "its subscripts are not constants known to lie within " + o.baseVar.Name + "'s bounds"
	if !lf.RunsOnce() {
		return what + ", which may not run: " + bounds
	}
	for q := o.stmt; q != nil && q != lf.Loop; q = parents[q] {
		switch q.(type) {
		case *msl.For, *msl.While, *msl.Do:
			if inner := sc.LoopFacts(q); inner != nil && inner.RunsOnce() {
				continue // an inner loop that runs: its body and header are reached
			}
			return what + " on every path, where the loop forms it only in an inner loop that may not run (" + bounds + ")"
		case *msl.If, *msl.Switch:
			return what + " on every path, where the loop forms it only under a condition (" + bounds + ")"
		}
	}
	if o.stmt != lf.Loop && underCondition(o) {
		return what + " on every path, where the loop forms it only in one operand of a conditional (" + bounds + ")"
	}
	return ""
}

// underCondition reports whether o lies in an operand of o.stmt's
// expressions that is evaluated only sometimes: a branch of ?:, the right
// of && or ||.
func underCondition(o *occ) bool {
	found := false
	var walk func(x msl.Expr, cond bool)
	walk = func(x msl.Expr, cond bool) {
		if x == nil || found {
			return
		}
		if x == o.x {
			found = cond
			return
		}
		switch y := x.(type) {
		case *msl.CondExpr:
			walk(y.C, cond)
			walk(y.X, true)
			walk(y.Y, true)
			return
		case *msl.BinaryExpr:
			if y.Op == "&&" || y.Op == "||" {
				walk(y.X, cond)
				walk(y.Y, true)
				return
			}
		}
		msl.InspectExpr(x, func(z msl.Expr) bool {
			if z == x {
				return true
			}
			walk(z, cond)
			return false
		})
	}
	walk(o.root, false)
	return found
}

// maxOf returns the largest value subscript x can have when x is an
// integer literal (its value, not negative) or x & C with C such a
// literal (C: the and of anything with a non-negative constant lies in
// [0, C]).
func maxOf(x msl.Expr) (int64, bool) {
	if n, ok := intLit(x); ok && n >= 0 {
		return n, true
	}
	if b, ok := msl.Unparen(x).(*msl.BinaryExpr); ok && b.Op == "&" {
		for _, c := range []msl.Expr{b.X, b.Y} {
			if n, ok := intLit(c); ok && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// intLit returns the value of an integer literal (suffixes aside).
func intLit(x msl.Expr) (int64, bool) {
	l, ok := msl.Unparen(x).(*msl.LitExpr)
	if !ok || l.Kind != msl.Int {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimRight(l.Text, "uUlL"), 0, 64)
	return n, err == nil
}

func isLoop(s msl.Stmt) bool {
	switch s.(type) {
	case *msl.For, *msl.While, *msl.Do:
		return true
	}
	return false
}

func startOf(s msl.Stmt) int {
	p, _ := s.Span()
	return p
}

func text(f *msl.File, x msl.Expr) string {
	pos, end := x.Span()
	return f.Text(pos, end)
}

func normText(f *msl.File, x msl.Expr) string {
	pos, end := x.Span()
	var parts []string
	for _, t := range f.SigTokens(pos, end) {
		parts = append(parts, t.Text)
	}
	return strings.Join(parts, " ")
}

// termsText joins terms with their signs; lead says whether a leading
// '+' is written.
func termsText(f *msl.File, ts []term, lead bool) string {
	var b strings.Builder
	for i, t := range ts {
		s := text(f, t.x)
		switch {
		case t.neg && i == 0 && !lead:
			b.WriteString("-(" + s + ")")
		case t.neg:
			b.WriteString(" - " + s)
		case i > 0 || lead:
			b.WriteString(" + " + s)
		default:
			b.WriteString(s)
		}
	}
	return b.String()
}

// find returns the subscripts and pointer chains in expression x of
// statement s.
func find(sc *msl.Scope, x msl.Expr, s msl.Stmt, loops []msl.Stmt) []*occ {
	if s, ok := s.(*msl.For); ok {
		loops = append([]msl.Stmt{s}, loops...)
	}
	if len(loops) == 0 {
		return nil
	}
	var out []*occ
	inner := map[msl.Expr]bool{} // left spines of pointer chains already taken
	msl.InspectExpr(x, func(e msl.Expr) bool {
		switch e := e.(type) {
		case *msl.IndexExpr:
			if o := subscript(sc, e); o != nil {
				o.stmt, o.root, o.loops = s, x, loops
				out = append(out, o)
			}
		case *msl.BinaryExpr:
			if inner[e] || e.Op != "+" && e.Op != "-" {
				return true
			}
			if o := pointerChain(sc, e, inner); o != nil {
				o.stmt, o.root, o.loops = s, x, loops
				out = append(out, o)
			}
		}
		return true
	})
	return out
}

// subscript returns the occurrence of an element access p[i], a[i] or
// a[x][i], or nil.
func subscript(sc *msl.Scope, e *msl.IndexExpr) *occ {
	base := msl.Unparen(e.X)
	var v *msl.Var
	switch b := base.(type) {
	case *msl.NameExpr:
		v = sc.Lookup(b.Name, b.Pos)
		if v != nil && v.Ptr == 0 && !v.Ref && !v.IsArray() {
			terms, flat := flatten(e.I, false, false)
			return &occ{x: e, base: e.X, baseVar: v, idx: e.I, terms: terms, flat: flat, value: v.Name}
		}
		if v == nil || !(v.Ptr == 1 && len(v.Dims) == 0 || v.Ptr == 0 && len(v.Dims) == 1) {
			return nil
		}
	case *msl.IndexExpr:
		root, subs, members := chainOf(b)
		n, ok := root.(*msl.NameExpr)
		if !ok || members > 0 {
			return nil
		}
		v = sc.Lookup(n.Name, n.Pos)
		if v == nil || v.Ptr != 0 || len(subs) != len(v.Dims)-1 {
			return nil
		}
	default:
		return nil
	}
	terms, flat := flatten(e.I, false, false)
	return &occ{x: e, base: e.X, baseVar: v, idx: e.I, terms: terms, flat: flat}
}

// chainOf splits a[i][j] into a and its subscripts.
func chainOf(x msl.Expr) (root msl.Expr, subs []msl.Expr, members int) {
	for {
		switch y := x.(type) {
		case *msl.IndexExpr:
			subs = append([]msl.Expr{y.I}, subs...)
			x = y.X
			continue
		case *msl.MemberExpr:
			members++
			x = y.X
			continue
		case *msl.ParenExpr:
			x = y.X
			continue
		}
		return x, subs, members
	}
}

// flatten splits a sum into its terms, through parentheses around sums
// (flat reports that it went through some).
func flatten(x msl.Expr, neg, inParen bool) ([]term, bool) {
	switch y := x.(type) {
	case *msl.BinaryExpr:
		if y.Op == "+" || y.Op == "-" {
			a, fa := flatten(y.X, neg, inParen)
			b, fb := flatten(y.Y, neg != (y.Op == "-"), inParen)
			return append(a, b...), fa || fb
		}
	case *msl.ParenExpr:
		if b, ok := y.X.(*msl.BinaryExpr); ok && (b.Op == "+" || b.Op == "-") {
			ts, _ := flatten(b, neg, true)
			return ts, true
		}
	}
	return []term{{x: x, neg: neg}}, false
}

// pointerChain returns the occurrence of pointer arithmetic p + a + b, or
// nil; it marks the chain's inner nodes so they are not taken again.
func pointerChain(sc *msl.Scope, e *msl.BinaryExpr, inner map[msl.Expr]bool) *occ {
	var terms []term
	var x msl.Expr = e
	for {
		b, ok := x.(*msl.BinaryExpr)
		if !ok || b.Op != "+" && b.Op != "-" {
			break
		}
		terms = append([]term{{x: b.Y, neg: b.Op == "-"}}, terms...)
		if b != e {
			inner[b] = true
		}
		x = b.X
	}
	base := msl.Unparen(x)
	var v *msl.Var
	switch b := base.(type) {
	case *msl.NameExpr:
		v = sc.Lookup(b.Name, b.Pos)
		if v == nil || !(v.Ptr == 1 && len(v.Dims) == 0 || v.Ptr == 0 && len(v.Dims) == 1) {
			return nil
		}
	case *msl.IndexExpr:
		root, subs, members := chainOf(b)
		n, ok := root.(*msl.NameExpr)
		if !ok || members > 0 {
			return nil
		}
		v = sc.Lookup(n.Name, n.Pos)
		if v == nil || v.Ptr != 0 || len(subs) != len(v.Dims)-1 {
			return nil
		}
	default:
		return nil
	}
	return &occ{x: e, base: x, baseVar: v, terms: terms}
}

// split divides an occurrence's terms into the loop-invariant part and the
// rest. It returns why not ("-" when there is nothing worth a reason: no
// invariant or no varying term).
func split(sc *msl.Scope, lf *msl.LoopFacts, o *occ) (inv, rest []term, why string) {
	f := sc.File
	if ok, _ := sc.ExprInvariant(lf, o.base, o.stmt); !ok || hasAccess(sc, o.base, o.stmt) {
		return nil, nil, "-"
	}
	named := false
	for _, t := range o.terms {
		if invariantTerm(sc, lf, t.x, o.stmt) {
			inv = append(inv, t)
			if _, lit := msl.Unparen(t.x).(*msl.LitExpr); !lit {
				named = true
			}
			continue
		}
		rest = append(rest, t)
	}
	if len(inv) == 0 || len(rest) == 0 || !named {
		return nil, nil, "-"
	}
	label := fmt.Sprintf("pre-add %s%s", text(f, o.base), termsText(f, inv, true))
	if o.value != "" {
		return nil, nil, fmt.Sprintf("%s: %s is not a pointer or an array (a vector's component)", label, o.value)
	}
	if o.idx == nil {
		return inv, rest, "" // pointer arithmetic adds term by term
	}
	if why := intSplitOK(sc, o, inv, rest); why != "" {
		return nil, nil, label + ": " + why
	}
	return inv, rest, ""
}

// hasAccess reports whether x reads memory.
func hasAccess(sc *msl.Scope, x msl.Expr, s msl.Stmt) bool {
	return len(sc.ExprEffects(x, s).Accesses) > 0
}

// invariantTerm reports whether term x is the same on every iteration and
// may be computed before the loop: invariant variables, constants and
// fields of constant reference parameters only.
func invariantTerm(sc *msl.Scope, lf *msl.LoopFacts, x msl.Expr, s msl.Stmt) bool {
	if ok, _ := sc.ExprInvariant(lf, x, s); !ok {
		return false
	}
	for _, a := range sc.ExprEffects(x, s).Accesses {
		_, member := a.Expr.(*msl.MemberExpr)
		if a.Space != msl.Constant || !a.Var.Ref || a.Var.Kind != msl.ParamVar || !member {
			return false
		}
	}
	return true
}

// intSplitOK returns why splitting a subscript's integer sum into inv and
// rest could change its value, or "".
func intSplitOK(sc *msl.Scope, o *occ, inv, rest []term) string {
	T, why := typeOf(sc, o.idx)
	if why != "" {
		return "the subscript's type is not known: " + why
	}
	if !msl.IsIntegerType(T) {
		return fmt.Sprintf("the subscript's type %q is not a known integer type", T)
	}
	bits, signed := msl.IntWidth(T)
	types := map[msl.Expr]string{}
	for _, t := range o.terms {
		tt, why := typeOf(sc, t.x)
		if why != "" {
			return fmt.Sprintf("the type of %s is not known: %s", text(sc.File, t.x), why)
		}
		tt = msl.Promote(tt)
		if !msl.IsIntegerType(tt) {
			return fmt.Sprintf("the type of %s is not a known integer type", text(sc.File, t.x))
		}
		types[t.x] = tt
		if t.neg && !signed {
			return fmt.Sprintf("it subtracts in unsigned %d-bit arithmetic (%s), which may wrap", bits, T)
		}
	}
	all := func(ts []term) bool {
		for _, t := range ts {
			if types[t.x] != T {
				return false
			}
		}
		return true
	}
	same := func(a string) bool {
		if a == T {
			return true
		}
		ab, as := msl.IntWidth(a)
		return !as && ab < bits || as && signed && ab <= bits
	}
	if all(inv) && all(rest) {
		return ""
	}
	if o.flat {
		return "splitting a parenthesised sum of mixed types would change where the arithmetic widens"
	}
	if len(inv) == 1 && same(types[inv[0].x]) && (all(rest) || len(rest) == 1 && same(types[rest[0].x])) {
		return ""
	}
	if len(rest) == 1 && same(types[rest[0].x]) && all(inv) {
		return ""
	}
	var parts []string
	for _, t := range o.terms {
		parts = append(parts, fmt.Sprintf("%s is %s", text(sc.File, t.x), types[t.x]))
	}
	return fmt.Sprintf("the subscript is %s arithmetic but %s: splitting it would change the type, signedness or width of a sum", T, strings.Join(parts, ", "))
}

// pointerType returns the type of a pointer to v's elements: its address
// space, constness and element type.
func pointerType(v *msl.Var) string {
	space := "thread"
	switch v.Space {
	case msl.Device:
		space = "device"
	case msl.Constant:
		space = "constant"
	case msl.Threadgroup:
		space = "threadgroup"
	}
	c := ""
	if v.ElemConst && v.Space != msl.Constant {
		c = "const "
	}
	return space + " " + c + v.Elem + "*"
}

// baseName returns the new pointer's name: the base's identifiers and the
// invariant terms' identifiers, joined by '_' (qs4_sg_kk).
func baseName(f *msl.File, o *occ, inv []term) string {
	var parts []string
	seen := map[string]bool{}
	add := func(x msl.Expr) {
		pos, end := x.Span()
		for _, t := range f.SigTokens(pos, end) {
			if t.Kind == msl.Ident && !seen[t.Text] && !f.IsTypeName(t.Text) {
				seen[t.Text] = true
				parts = append(parts, t.Text)
			}
		}
	}
	add(o.base)
	for _, t := range inv {
		add(t.x)
	}
	n := strings.Join(parts, "_")
	if len(n) > 40 {
		n = strings.TrimRight(n[:40], "_")
	}
	return n
}

// report turns a group into a site.
func report(p *mutate.Pass, sc *msl.Scope, g *group) {
	f := p.File
	eol := mutate.EOL(f.Src, g.at)
	decl := fmt.Sprintf("%s%s const %s = %s%s;%s", g.indent, g.pointer, g.name, g.base, termsText(f, g.invs[0], true), eol)
	// Keyed: independent of other declarations inserted before the loop.
	edits := []edit.Edit{{Start: g.at, End: g.at, New: decl, Key: "decl " + g.name}}
	for i, o := range g.occs {
		var repl string
		if o.idx != nil {
			repl = g.name + "[" + termsText(f, g.rests[i], false) + "]"
		} else {
			repl = g.name + termsText(f, g.rests[i], true)
		}
		pos, end := o.x.Span()
		edits = append(edits, edit.Edit{Start: pos, End: end, New: repl})
	}
	// Accesses nested in one another (p[q[i + k]]) cannot both be rewritten
	// by one choice; keep the outermost.
	sort.SliceStable(edits[1:], func(i, j int) bool { return edits[1+i].Start < edits[1+j].Start })
	var clean []edit.Edit
	clean = append(clean, edits[0])
	last := -1
	for _, e := range edits[1:] {
		if e.Start < last {
			continue
		}
		clean = append(clean, e)
		last = e.End
	}
	kind := "loop"
	switch l := g.loop.(type) {
	case *msl.For:
		kind = "for loop"
		if lc, _ := sc.CountLoop(l); lc != nil {
			kind = "for loop over " + lc.Var
		}
	case *msl.While:
		kind = "while loop"
	case *msl.Do:
		kind = "do loop"
	}
	n := len(clean) - 1
	acc := "access"
	if n > 1 {
		acc = "accesses"
	}
	p.Report(mutate.Site{
		Pos:     startOf(g.loop),
		End:     mutate.HeaderEnd(g.loop),
		Message: fmt.Sprintf("%s%s, %d %s in the %s", g.base, g.inv, n, acc, kind),
		Choices: []mutate.Choice{{Name: "preadd", Message: fmt.Sprintf("declare %s = %s%s before the loop", g.name, g.base, g.inv), Edits: clean}},
	})
}
