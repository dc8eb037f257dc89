package hoist

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

//go:embed doc.go
var doc string

// Mutation is the hoist mutation.
var Mutation = &mutate.Mutation{
	Name: "hoist",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

// A cand is one thing to hoist out of a loop.
type cand struct {
	label string       // what it is: "kr", "p.KVH"
	name  string       // the local's name
	pos   int          // where it is first computed in the loop
	decl  *msl.Decl    // a hoisted declaration, or nil
	occ   []msl.Access // the occurrences of a hoisted load
	typ   string       // the type of a hoisted load
	text  string       // the load's expression text, or the declaration to insert
	deps  []*cand      // declarations it reads, hoisted before it
	fault string       // why moving it before the loop cannot fault
}

// A loopSite is what run found for one loop.
type loopSite struct {
	loop   msl.Stmt
	header int
	cands  []*cand
	at     int
	indent string
}

func run(p *mutate.Pass) error {
	sc := p.Scope()
	parents := msl.Parents(p.Func.Body)
	var sites []*loopSite
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		switch s.(type) {
		case *msl.For, *msl.While, *msl.Do:
			if ls := analyse(p, sc, parents, s); ls != nil {
				sites = append(sites, ls)
			}
		}
		return true
	})
	// A load's local is named after it; two loops of one block hoisting the
	// same load would declare one name twice, so such names get the loop's
	// line.
	type key struct {
		block msl.Stmt
		name  string
	}
	count := map[key]int{}
	for _, ls := range sites {
		for _, c := range ls.cands {
			if c.decl == nil {
				count[key{parents[ls.loop], c.name}]++
			}
		}
	}
	used := map[key]bool{}
	for _, ls := range sites {
		line := p.File.Position(startOf(ls.loop)).Line
		for _, c := range ls.cands {
			if c.decl != nil {
				continue
			}
			if count[key{parents[ls.loop], c.name}] > 1 {
				c.name = fmt.Sprintf("%s_L%d", c.name, line)
			}
			n := c.name
			for k := 2; sc.Declared(n) || used[key{parents[ls.loop], n}]; k++ {
				n = fmt.Sprintf("%s_%d", c.name, k)
			}
			c.name = n
			used[key{parents[ls.loop], n}] = true
		}
		report(p, sc, ls)
	}
	return nil
}

func startOf(s msl.Stmt) int {
	p, _ := s.Span()
	return p
}

// analyse finds what can be hoisted out of loop s.
func analyse(p *mutate.Pass, sc *msl.Scope, parents map[msl.Stmt]msl.Stmt, s msl.Stmt) *loopSite {
	f := p.File
	lf := sc.LoopFacts(s)
	body, ok := lf.Body.(*msl.Block)
	if !ok {
		return nil
	}
	ls := &loopSite{loop: s, header: mutate.HeaderEnd(s)}
	skip := func(pos, end int, why string) {
		p.Skip(mutate.Skip{Pos: pos, End: end, Reason: why})
	}
	if lp, le := s.Span(); mutate.Conditional(f, lp, le) != "" {
		return nil // moving declarations out could change their configuration
	}
	trips := ""
	if lf.RunsOnce() {
		if lf.Counted != nil {
			trips = fmt.Sprintf("the loop runs %d times", lf.Counted.Trips)
		} else {
			trips = "a do loop runs at least once"
		}
	}

	// Declarations directly in the body.
	hoisted := map[*msl.Var]*cand{}
	for _, st := range body.Stmts {
		d, ok := st.(*msl.Decl)
		if !ok {
			continue
		}
		c, why := declCand(sc, lf, body, parents, d, hoisted, trips)
		if c == nil {
			if why != "" {
				skip(d.Pos, d.End, why)
			}
			continue
		}
		hoisted[sc.Lookup(d.Names[0].Name, d.Names[0].NamePos+1)] = c
		ls.cands = append(ls.cands, c)
	}

	// Loads with invariant subscripts.
	groups := map[string][]msl.Access{}
	var keys []string
	for _, a := range lf.Effects.Accesses {
		if a.Write || !a.Read || a.Var == nil {
			continue
		}
		if a.Space != msl.Constant && a.Space != msl.Device && a.Space != msl.Threadgroup {
			continue
		}
		if _, ok := a.Expr.(*msl.UnaryExpr); ok {
			continue
		}
		k := a.Var.Name + "\x00" + normText(f, a.Expr)
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], a)
	}
	for _, k := range keys {
		c, why := loadCand(sc, lf, body, groups[k], trips)
		if c == nil {
			if why != "" {
				a := groups[k][0]
				pos, end := a.Expr.Span()
				skip(pos, end, why)
			}
			continue
		}
		ls.cands = append(ls.cands, c)
	}
	// A load all of whose occurrences lie in hoisted declarations, or in
	// other hoisted loads, moves with them: it is not a candidate of its own.
	var kept []*cand
	for _, c := range ls.cands {
		if c.decl == nil && coveredBy(c, ls.cands) {
			continue
		}
		kept = append(kept, c)
	}
	ls.cands = kept
	if len(ls.cands) == 0 {
		return nil
	}
	at, indent, why := mutate.DeclPoint(f, parents, s)
	if why != "" {
		skip(startOf(s), ls.header, "nowhere to declare hoisted values: "+why)
		return nil
	}
	ls.at, ls.indent = at, indent
	sort.SliceStable(ls.cands, func(i, j int) bool { return ls.cands[i].pos < ls.cands[j].pos })
	return ls
}

// coveredBy reports whether every occurrence of load c lies inside another
// candidate: a hoisted declaration or an enclosing hoisted load.
func coveredBy(c *cand, cands []*cand) bool {
	for _, o := range c.occ {
		op, oe := o.Expr.Span()
		in := false
		for _, d := range cands {
			if d == c {
				continue
			}
			if d.decl != nil && op >= d.decl.Pos && oe <= d.decl.End {
				in = true
			}
			for _, x := range d.occ {
				xp, xe := x.Expr.Span()
				if op >= xp && oe <= xe && (xp != op || xe != oe) {
					in = true
				}
			}
		}
		if !in {
			return false
		}
	}
	return true
}

// label returns a short description of a candidate for messages.
func declLabel(d *msl.Decl) string { return d.Names[0].Name }

// declCand judges a declaration directly in the loop body.
func declCand(sc *msl.Scope, lf *msl.LoopFacts, body *msl.Block, parents map[msl.Stmt]msl.Stmt, d *msl.Decl, hoisted map[*msl.Var]*cand, trips string) (*cand, string) {
	f := sc.File
	if len(d.Names) != 1 {
		return nil, ""
	}
	n := d.Names[0]
	v := sc.Lookup(n.Name, n.NamePos+1)
	if v == nil || len(n.Dims) > 0 || v.Ref || d.AddrSpace == msl.Threadgroup {
		return nil, ""
	}
	for _, q := range d.Qualifiers {
		if q == "static" || q == "constexpr" {
			return nil, ""
		}
	}
	pos, end, braced := f.InitExpr(n)
	if end <= pos || braced {
		return nil, ""
	}
	x, err := f.ParseExpr(pos, end)
	if err != nil {
		return nil, ""
	}
	name := declLabel(d)
	e := sc.ExprEffects(x, d)
	// Only declarations whose initialiser reads no loop-varying variable
	// are near enough to a hoist to be worth a reason when refused.
	var deps []*cand
	for r := range e.Reads {
		if r.IsArray() {
			continue
		}
		if c, ok := hoisted[r]; ok {
			deps = append(deps, c)
			continue
		}
		if ok, _ := sc.Invariant(lf, r); !ok {
			return nil, ""
		}
	}
	refuse := func(why string) (*cand, string) {
		return nil, fmt.Sprintf("hoist %s: %s", name, why)
	}
	if len(e.Unknown) > 0 {
		return refuse(e.Unknown[0].Why)
	}
	if len(e.Writes) > 0 || len(e.AddrTaken) > 0 {
		return refuse("its initialiser has side effects")
	}
	if len(e.Calls) > 0 {
		return refuse("its initialiser calls a function of the file")
	}
	if len(e.Collect) > 0 {
		return refuse("its initialiser calls a SIMD-group function, which every thread of the group must reach together")
	}
	if ok, why := sc.OnEveryIteration(body, d); !ok {
		return refuse(why)
	}
	if sc.FuncEffects().AddrTaken[v] {
		return refuse(fmt.Sprintf("the address of %s is taken, so it may be written through a pointer", name))
	}
	if others := otherWrites(sc, lf, d, v); others != "" {
		return refuse(others)
	}
	fault := ""
	for _, a := range e.Accesses {
		why, fw := memOK(sc, lf, a, trips)
		if why != "" {
			return refuse(why)
		}
		if fault == "" || fw != "" && strings.HasPrefix(fault, "cannot fault") {
			fault = fw
		}
	}
	// A loop that is not a statement of a block has nowhere to put the
	// declaration; analyse says so once for the loop.
	if parent, ok := parents[lf.Loop].(*msl.Block); ok {
		if why := clash(sc, lf, body, d, v, parent); why != "" {
			return refuse(why)
		}
	}
	text := strings.TrimSpace(string(f.Src[d.Pos:d.End]))
	switch {
	case v.Ptr > 0 && !v.Const:
		// device const char4* kr → device const char4* const kr
		k := n.NamePos - d.Pos
		head := string(f.Src[d.Pos:n.NamePos])
		if i := strings.LastIndex(head, "*"); i >= 0 && k <= len(text) {
			rest := head[i+1:]
			if !strings.HasPrefix(rest, " ") {
				rest = " " + rest
			}
			text = head[:i+1] + " const" + rest + text[k:]
		}
	case v.Ptr == 0 && !v.Const:
		text = "const " + text
	}
	if fault == "" {
		fault = "no load"
	}
	return &cand{label: name, name: name, pos: d.Pos, decl: d, text: text, deps: deps, fault: fault}, ""
}

// otherWrites returns why v is written in the loop other than by its own
// declaration d, or "".
func otherWrites(sc *msl.Scope, lf *msl.LoopFacts, d *msl.Decl, v *msl.Var) string {
	var stmts []msl.Stmt
	body := lf.Body.(*msl.Block)
	for _, s := range body.Stmts {
		if s != d {
			stmts = append(stmts, s)
		}
	}
	e := sc.Effects(stmts...)
	if e.Writes[v] {
		return v.Name + " is assigned in the loop"
	}
	if l, ok := lf.Loop.(*msl.For); ok {
		for _, sp := range []msl.Span{l.Cond, l.Post} {
			if sc.SpanEffects(sp.Pos, sp.End, l).Writes[v] {
				return v.Name + " is assigned in the loop header"
			}
		}
	}
	if l, ok := lf.Loop.(*msl.Do); ok && sc.SpanEffects(l.Cond.Pos, l.Cond.End, l).Writes[v] {
		return v.Name + " is assigned in the loop condition"
	}
	return ""
}

// clash returns why moving d's variable v to just before the loop would
// change what a name refers to, or "": the enclosing block already
// declares the name, or a use of the name after the loop in that block (or
// inside the loop, before d) means something else.
func clash(sc *msl.Scope, lf *msl.LoopFacts, body *msl.Block, d *msl.Decl, v *msl.Var, parent *msl.Block) string {
	f := sc.File
	loopPos, loopEnd := lf.Loop.Span()
	// Inside the loop, before d: a use of the name meant another variable.
	prev := ""
	for _, t := range f.SigTokens(loopPos, d.Pos) {
		pv := prev
		prev = t.Text
		if t.Kind == msl.Ident && t.Text == v.Name && pv != "." && pv != "->" && pv != "::" {
			return fmt.Sprintf("%s at %s, before the declaration, names something else", v.Name, f.At(t.Pos))
		}
	}
	// The enclosing block: a declaration of the name at its level clashes;
	// a later use that refers to an outer variable (or to no variable)
	// would see the hoisted one. Declarations in nested blocks shadow it.
	for _, w := range sc.Vars() {
		if w != v && w.Name == v.Name && w.Decl != nil && parent.Index(w.Decl) >= 0 {
			return fmt.Sprintf("%s is also declared at %s in the enclosing block", v.Name, f.At(w.NamePos))
		}
	}
	prev = ""
	for _, t := range f.SigTokens(loopEnd, parent.Rbrace) {
		pv := prev
		prev = t.Text
		if t.Kind != msl.Ident || t.Text != v.Name || pv == "." || pv == "->" || pv == "::" {
			continue
		}
		r := sc.Lookup(t.Text, t.Pos)
		if r != nil && r.NamePos > loopEnd {
			continue // declared after the loop, in a nested block
		}
		return fmt.Sprintf("%s is also named after the loop at %s", v.Name, f.At(t.Pos))
	}
	return ""
}

// memOK judges a load's memory: it returns why it may not move before the
// loop, or why moving it cannot fault.
func memOK(sc *msl.Scope, lf *msl.LoopFacts, a msl.Access, trips string) (why, fault string) {
	v := a.Var
	if a.Cond {
		return fmt.Sprintf("the load of %s runs only under a condition (?:, && or ||)", v.Name), ""
	}
	switch a.Space {
	case msl.Constant:
		if v.Ref && v.Kind == msl.ParamVar {
			if _, ok := a.Expr.(*msl.MemberExpr); ok {
				return "", "cannot fault: a field of constant reference " + v.Name
			}
		}
	case msl.Device:
		if !v.ElemConst {
			return fmt.Sprintf("%s is not a device const pointer", v.Name), ""
		}
		fe := sc.FuncEffects()
		if len(fe.Unknown) > 0 || len(fe.Calls) > 0 {
			return "the function has effects the facts do not model, which may write device memory", ""
		}
		if why := aliasingWrite(sc, fe.Accesses, v, "the function", "device", msl.Device); why != "" {
			return why, ""
		}
	case msl.Threadgroup:
		if len(lf.Effects.Barriers) > 0 {
			return "the loop has a barrier, after which another thread's store may be visible", ""
		}
		if len(lf.Effects.Unknown) > 0 || len(lf.Effects.Calls) > 0 {
			return "the loop has effects the facts do not model", ""
		}
		if why := aliasingWrite(sc, lf.Effects.Accesses, v, "the loop", "threadgroup", msl.Threadgroup); why != "" {
			return why, ""
		}
	case msl.ThreadSpace, msl.NoSpace:
		if lf.Effects.Writes[v] {
			return v.Name + " is written in the loop", ""
		}
		if len(lf.Effects.Unknown) > 0 || len(lf.Effects.Calls) > 0 {
			return "the loop has effects the facts do not model", ""
		}
		if why := aliasingWrite(sc, lf.Effects.Accesses, v, "the loop", "thread", msl.ThreadSpace, msl.NoSpace); why != "" {
			return why, ""
		}
		if !v.IsArray() {
			// A pointer or reference may point at any variable whose
			// address the function takes (ggml's dequantize_iq4_xs reads
			// q8[0] through q8 = (thread const uint8_t *)&aux32, and
			// writes aux32 in the loop).
			fe := sc.FuncEffects()
			for _, w := range msl.SortedVars(lf.Effects.Writes) {
				if fe.AddrTaken[w] {
					return fmt.Sprintf("the loop writes %s, whose address is taken, and %s may point at it", w.Name, v.Name), ""
				}
			}
		}
	default:
		return "unknown address space", ""
	}
	if trips == "" {
		return "the loop may run no iteration, and the load of " + v.Name + " could fault", ""
	}
	return "", trips
}

// aliasingWrite returns why a write among accs (by who: the loop, the
// function) to memory of one of spaces may change what a load through v
// reads, or "".
func aliasingWrite(sc *msl.Scope, accs []msl.Access, v *msl.Var, who, mem string, spaces ...msl.AddrSpace) string {
	for _, w := range accs {
		if w.Write && slices.Contains(spaces, w.Space) && sc.MayAlias(w.Var, v) {
			return fmt.Sprintf("%s writes %s memory through %s at %s, which may alias %s", who, mem, w.Var.Name, sc.File.At(startOf2(w.Expr)), v.Name)
		}
	}
	return ""
}

func startOf2(x msl.Expr) int {
	p, _ := x.Span()
	return p
}

// normText returns an expression's text with blanks normalised.
func normText(f *msl.File, x msl.Expr) string {
	pos, end := x.Span()
	var parts []string
	for _, t := range f.SigTokens(pos, end) {
		parts = append(parts, t.Text)
	}
	return strings.Join(parts, " ")
}

// loadCand judges a group of identical loads in the loop.
func loadCand(sc *msl.Scope, lf *msl.LoopFacts, body *msl.Block, occ []msl.Access, trips string) (*cand, string) {
	f := sc.File
	a := occ[0]
	pos, end := a.Expr.Span()
	label := strings.Join(strings.Fields(f.Text(pos, end)), " ")
	// Subscripts (and for members, nothing) must be invariant; only then is
	// the load worth a reason when refused.
	if ok, _ := sc.ExprInvariant(lf, a.Expr, a.Stmt); !ok {
		return nil, ""
	}
	refuse := func(why string) (*cand, string) {
		return nil, fmt.Sprintf("hoist %s: %s", label, why)
	}
	// The memory its subscripts read must hold still too: kvalues[q8[0]]
	// with q8 pointing at a variable the loop writes is not invariant.
	for _, in := range sc.ExprEffects(a.Expr, a.Stmt).Accesses {
		if in.Expr == a.Expr || in.Write {
			continue
		}
		if why, _ := memOK(sc, lf, withCond(in, false), trips); why != "" {
			pos, end := in.Expr.Span()
			return refuse(fmt.Sprintf("its subscript %s: %s", strings.Join(strings.Fields(f.Text(pos, end)), " "), why))
		}
	}
	every := false
	top := false
	whyNot := ""
	for _, o := range occ {
		if body.Index(o.Stmt) >= 0 {
			top = true
		}
	}
	if !top {
		return nil, "" // only inside nested statements: a matter for an inner loop, if any
	}
	for _, o := range occ {
		if o.Cond {
			whyNot = "it runs only under a condition (?:, && or ||)"
			continue
		}
		if body.Index(o.Stmt) < 0 {
			continue
		}
		if ok, why := sc.OnEveryIteration(body, o.Stmt); !ok {
			whyNot = why
			continue
		}
		every = true
	}
	if !every {
		return refuse("not on every iteration: " + whyNot)
	}
	why, fault := memOK(sc, lf, withCond(a, false), trips)
	if why != "" {
		return refuse(why)
	}
	typ := sc.TypeOf(a.Expr)
	if typ == "" {
		return refuse("its type cannot be told")
	}
	return &cand{label: label, name: localName(f, a.Expr), pos: pos, occ: occ, typ: typ, text: f.Text(pos, end), fault: fault}, ""
}

func withCond(a msl.Access, c bool) msl.Access {
	a.Cond = c
	return a
}

// localName returns the name a hoisted load's local gets: its identifiers
// and numbers joined by '_' (p.KVH gives p_KVH, kst[b][c][sg] kst_b_c_sg).
func localName(f *msl.File, x msl.Expr) string {
	pos, end := x.Span()
	var parts []string
	for _, t := range f.SigTokens(pos, end) {
		if t.Kind == msl.Ident || t.Kind == msl.Int {
			parts = append(parts, t.Text)
		}
	}
	n := strings.Join(parts, "_")
	if len(n) > 40 {
		n = n[:40]
	}
	return strings.TrimRight(n, "_")
}

// choiceName turns a label into a choice name.
func choiceName(label string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(label) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if s == "" || s == "all" {
		s = "v-" + s
	}
	return strings.TrimRight(s, "-")
}

// report turns a loop's candidates into a site.
func report(p *mutate.Pass, sc *msl.Scope, ls *loopSite) {
	f := p.File
	var choices []mutate.Choice
	var labels []string
	for _, c := range ls.cands {
		labels = append(labels, c.label)
	}
	if len(ls.cands) > 1 {
		choices = append(choices, choice(f, sc, ls, "all", "hoist "+strings.Join(labels, ", "), ls.cands))
	}
	seen := map[string]int{}
	for _, c := range ls.cands {
		if len(c.deps) > 0 {
			continue // only with what it reads, in all
		}
		name := choiceName(c.label)
		seen[name]++
		if seen[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, seen[name])
		}
		choices = append(choices, choice(f, sc, ls, name, "hoist "+c.label+" ("+c.fault+")", []*cand{c}))
	}
	if len(choices) == 0 {
		return
	}
	kind := "loop"
	switch l := ls.loop.(type) {
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
	p.Report(mutate.Site{Pos: startOf(ls.loop), End: ls.header, Message: fmt.Sprintf("%s: invariant %s", kind, strings.Join(labels, ", ")), Choices: choices})
}

// choice returns the choice hoisting cands.
func choice(f *msl.File, sc *msl.Scope, ls *loopSite, name, msg string, cands []*cand) mutate.Choice {
	src := f.Src
	eol := mutate.EOL(src, ls.at)
	var ins strings.Builder
	var edits []edit.Edit
	decls := map[*msl.Decl]bool{}
	for _, c := range cands {
		if c.decl != nil {
			decls[c.decl] = true
		}
	}
	// Loads first: their subscripts read nothing the loop declares, and
	// hoisted declarations may read them.
	ordered := make([]*cand, 0, len(cands))
	for _, c := range cands {
		if c.decl == nil {
			ordered = append(ordered, c)
		}
	}
	for _, c := range cands {
		if c.decl != nil {
			ordered = append(ordered, c)
		}
	}
	for _, c := range ordered {
		if c.decl != nil {
			start, next, whole := mutate.LineSpan(f, c.decl.Pos, c.decl.End, true)
			if whole {
				// Comment lines above the declaration move with it.
				cstart, _ := mutate.LineStart(src, c.decl.Pos)
				for _, line := range strings.SplitAfter(string(src[start:cstart]), "\n") {
					if strings.TrimSpace(line) != "" {
						ins.WriteString(ls.indent + strings.TrimLeft(line, " \t"))
					}
				}
				edits = append(edits, edit.Edit{Start: start, End: next})
			} else {
				e := c.decl.End
				for e < len(src) && (src[e] == ' ' || src[e] == '\t') {
					e++
				}
				edits = append(edits, edit.Edit{Start: c.decl.Pos, End: e})
			}
			ins.WriteString(ls.indent + replaceLoads(f, c.decl.Pos, c.decl.End, c.text, cands) + eol)
			continue
		}
		ins.WriteString(fmt.Sprintf("%sconst %s %s = %s;%s", ls.indent, c.typ, c.name, c.text, eol))
		for _, o := range c.occ {
			if decls[declOf(o.Stmt)] {
				continue // moves with its declaration, which is hoisted too
			}
			if nestedIn(o, c, cands) {
				continue // inside another hoisted load, which reads it once
			}
			pos, end := o.Expr.Span()
			edits = append(edits, edit.Edit{Start: pos, End: end, New: c.name})
		}
	}
	// Declarations other mutations put before the same loop are
	// independent of these: the insertions are keyed so they compose.
	var names []string
	for _, c := range ordered {
		names = append(names, c.name)
	}
	edits = append(edits, edit.Edit{Start: ls.at, End: ls.at, New: ins.String(), Key: "decl " + strings.Join(names, " ")})
	return mutate.Choice{Name: name, Message: msg, Edits: edits}
}

// nestedIn reports whether occurrence o of load c lies inside an
// occurrence of another load among cands.
func nestedIn(o msl.Access, c *cand, cands []*cand) bool {
	op, oe := o.Expr.Span()
	for _, d := range cands {
		if d == c || d.decl != nil {
			continue
		}
		for _, x := range d.occ {
			xp, xe := x.Expr.Span()
			if op >= xp && oe <= xe && (xp != op || xe != oe) {
				return true
			}
		}
	}
	return false
}

func declOf(s msl.Stmt) *msl.Decl {
	d, _ := s.(*msl.Decl)
	return d
}

// replaceLoads returns the text of a hoisted declaration (declText, which
// is src[pos:end] possibly with const added at the front or after its
// last '*') with the hoisted loads among cands that occur in it replaced
// by their locals; a load hoisted alongside the declaration is declared
// before it.
func replaceLoads(f *msl.File, pos, end int, declText string, cands []*cand) string {
	type rep struct {
		pos, end int
		name     string
	}
	var reps []rep
	for _, c := range cands {
		if c.decl != nil {
			continue
		}
		for _, o := range c.occ {
			p, e := o.Expr.Span()
			if p >= pos && e <= end {
				reps = append(reps, rep{p, e, c.name})
			}
		}
	}
	if len(reps) == 0 {
		return declText
	}
	// declText differs from the source by text added before the name; the
	// initialiser, where loads are, keeps its offsets from the end.
	orig := string(f.Src[pos:end])
	shift := len(declText) - len(strings.TrimSpace(orig))
	sort.Slice(reps, func(i, j int) bool { return reps[i].pos > reps[j].pos })
	out := declText
	for _, r := range reps {
		a, b := r.pos-pos+shift, r.end-pos+shift
		if a < 0 || b > len(out) {
			return declText
		}
		out = out[:a] + r.name + out[b:]
	}
	return out
}
