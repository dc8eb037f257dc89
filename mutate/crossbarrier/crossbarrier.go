package crossbarrier

import (
	_ "embed"
	"fmt"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/elidebarrier"
)

//go:embed doc.go
var doc string

// Mutation is the cross-barrier mutation.
var Mutation = &mutate.Mutation{
	Name: "cross-barrier",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

func run(p *mutate.Pass) error {
	sc := p.Scope()
	parents := msl.Parents(p.Func.Body)
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		blk, ok := s.(*msl.Block)
		if !ok {
			return true
		}
		ivs := msl.Intervals(blk)
		if len(ivs) < 2 {
			return true
		}
		for k, iv := range ivs {
			for j, st := range iv.Stmts {
				site(p, sc, parents, blk, ivs, k, j, st)
			}
		}
		return true
	})
	return nil
}

// site judges moving statement st, the j-th of interval k of blk.
func site(p *mutate.Pass, sc *msl.Scope, parents map[msl.Stmt]msl.Stmt, blk *msl.Block, ivs []msl.Interval, k, j int, st msl.Stmt) {
	f := p.File
	pos, end := st.Span()
	if _, isDecl := st.(*msl.Decl); isDecl {
		return // declarations are not worth moving on their own
	}
	if ivs[k].Before == nil && ivs[k].After == nil {
		return
	}
	e := sc.Effects(st)
	var refused, assumed []string
	var choices []mutate.Choice
	label := describe(f, st)
	if why := movable(sc, st, e); why != "" {
		p.Skip(mutate.Skip{Pos: pos, End: end, Reason: "move " + label + ": " + why})
		return
	}
	start, next, whole := mutate.LineSpan(f, pos, end, true)
	if !whole {
		p.Skip(mutate.Skip{Pos: pos, End: end, Reason: "move " + label + ": it shares its lines with other code"})
		return
	}
	if c := mutate.Conditional(f, start, next); c != "" {
		p.Skip(mutate.Skip{Pos: pos, End: end, Reason: "move " + label + ": it holds " + c})
		return
	}
	text := string(f.Src[start:next])
	if b := ivs[k].Before; b != nil {
		jumped := ivs[k].Stmts[:j]
		var reach []msl.Stmt
		if why := check(sc, parents, blk, st, jumped, b, k-1, ivs, true, &assumed, &reach); why != "" {
			refused = append(refused, "up: "+why)
		} else {
			bpos, bend := b.Span()
			at, _, ok := mutate.LineSpan(f, bpos, bend, true)
			if !ok {
				refused = append(refused, "up: the barrier shares its line with other code")
			} else {
				own := []edit.Edit{{Start: at, End: at, New: text}, {Start: start, End: next}}
				// The proof read the interval it joins (from the barrier
				// that opens it), the barrier and the statements it jumps.
				from := at
				if len(reach) > 0 {
					from, _ = reach[0].Span()
				}
				choices = append(choices, mutate.Choice{Name: "up", Message: "move it before the barrier above", Edits: append(own, mutate.Guards(f.Src, from, start, own)...)})
			}
		}
	}
	if b := ivs[k].After; b != nil {
		jumped := ivs[k].Stmts[j+1:]
		var reach []msl.Stmt
		if why := check(sc, parents, blk, st, jumped, b, k+1, ivs, false, &assumed, &reach); why != "" {
			refused = append(refused, "down: "+why)
		} else {
			bpos, bend := b.Span()
			_, at, ok := mutate.LineSpan(f, bpos, bend, false)
			if !ok {
				refused = append(refused, "down: the barrier shares its line with other code")
			} else {
				own := []edit.Edit{{Start: start, End: next}, {Start: at, End: at, New: text}}
				to := at
				if len(reach) > 0 {
					_, to = reach[len(reach)-1].Span()
				}
				choices = append(choices, mutate.Choice{Name: "down", Message: "move it after the barrier below", Edits: append(own, mutate.Guards(f.Src, next, to, own)...)})
			}
		}
	}
	if len(choices) == 0 {
		p.Skip(mutate.Skip{Pos: pos, End: end, Reason: "move " + label + ": " + strings.Join(refused, "; ")})
		return
	}
	msg := label
	for _, a := range assumed {
		if a != "" {
			msg += a
			break
		}
	}
	p.Report(mutate.Site{Pos: pos, End: end, Message: msg, Choices: choices})
}

func startOf(s msl.Stmt) int {
	p, _ := s.Span()
	return p
}

func endOf(s msl.Stmt) int {
	_, e := s.Span()
	return e
}

// touches reports whether a footprint touches threadgroup or device
// memory at all.
func touches(fp *msl.Footprints) bool {
	for _, sf := range fp.Scenarios {
		for _, ts := range sf.Touches {
			if len(ts) > 0 {
				return true
			}
		}
	}
	return false
}

// describe names a statement for messages: its first line, shortened.
func describe(f *msl.File, st msl.Stmt) string {
	pos, end := st.Span()
	line := f.Position(pos).Line
	last := pos
	for _, tok := range f.SigTokens(pos, end) {
		if f.Position(tok.Pos).Line != line {
			break
		}
		last = tok.End
	}
	t := strings.Join(strings.Fields(f.Text(pos, last)), " ")
	if len(t) > 48 {
		t = t[:45] + "..."
	}
	return t
}

// movable returns why st cannot move at all, or "".
func movable(sc *msl.Scope, st msl.Stmt, e *msl.Effects) string {
	if len(e.Barriers) > 0 {
		return "it holds a barrier"
	}
	if len(e.Jumps) > 0 {
		return "it holds a " + e.Jumps[0].Kind
	}
	if len(e.Unknown) > 0 {
		return e.Unknown[0].Why
	}
	if len(e.Calls) > 0 {
		return "it calls a function of the file"
	}
	return ""
}

// check returns why st may not jump the statements jumped and barrier b
// into interval k of ivs (up: to the end of interval k; down: to its
// start), or "". An interval k that reaches the start (up) or end of blk
// goes on outside it when blk is a branch of if statements
// (elidebarrier.Outward). reach is set to the statements the proof read
// on the other side, the barrier that bounds them included.
func check(sc *msl.Scope, parents map[msl.Stmt]msl.Stmt, blk *msl.Block, st msl.Stmt, jumped []msl.Stmt, b msl.Stmt, k int, ivs []msl.Interval, up bool, assumed *[]string, reach *[]msl.Stmt) string {
	f := sc.File
	if _, ok := b.(*msl.Barrier); !ok {
		return "the barrier is hidden behind a macro"
	}
	// Program order with the jumped statements.
	es := sc.Effects(st)
	ej := sc.Effects(jumped...)
	if len(ej.Unknown) > 0 || len(ej.Calls) > 0 {
		return "the statements it would jump hold what the facts cannot follow"
	}
	if len(ej.Jumps) > 0 {
		return "the statements it would jump hold a " + ej.Jumps[0].Kind
	}
	for _, v := range msl.SortedVars(es.Reads) {
		if ej.Writes[v] && !v.IsArray() {
			return fmt.Sprintf("it reads %s, which the statements it would jump write", v.Name)
		}
	}
	for _, v := range msl.SortedVars(es.Writes) {
		if (ej.Reads[v] || ej.Writes[v]) && !v.IsArray() {
			return fmt.Sprintf("it writes %s, which the statements it would jump use", v.Name)
		}
	}
	for _, a := range es.Accesses {
		for _, c := range ej.Accesses {
			// Program order in one thread: the same variable, or two that
			// may alias (a pointer into an array, a cast pointer), of one
			// address space.
			if (a.Write || c.Write) && (a.Var == c.Var || a.Space == c.Space && sc.MayAlias(a.Var, c.Var)) {
				return fmt.Sprintf("it and the statements it would jump both touch %s, one writing", a.Var.Name)
			}
		}
	}
	// Names it declares that the jumped statements use.
	if d, ok := st.(*msl.Decl); ok {
		for _, n := range d.Names {
			for _, js := range jumped {
				p, e := js.Span()
				for _, t := range f.SigTokens(p, e) {
					if t.Kind == msl.Ident && t.Text == n.Name {
						return "the statements it would jump name " + n.Name
					}
				}
			}
		}
	}
	// The interval it joins.
	if k < 0 || k >= len(ivs) {
		return "no interval on the other side"
	}
	join := ivs[k]
	// Neither what it jumps nor the interval it joins may hold a
	// preprocessor conditional: the proof would rest on one configuration's
	// statements, and the move could change the configuration it is in.
	lo, hi := startOf(st), endOf(st)
	for _, x := range append(append([]msl.Stmt{b}, jumped...), join.Stmts...) {
		p, e := x.Span()
		lo, hi = min(lo, p), max(hi, e)
	}
	if c := mutate.Conditional(f, lo, hi); c != "" {
		return "the statements between it and where it would go hold " + c
	}
	joined, bound := join.Stmts, join.Before
	if !up {
		bound = join.After
	}
	branches := ""
	if bound == nil {
		out, outer, ifs, why := elidebarrier.Outward(sc, parents, blk, up)
		if why != "" {
			return why
		}
		if up {
			joined = append(append([]msl.Stmt{}, out...), joined...)
		} else {
			joined = append(append([]msl.Stmt{}, joined...), out...)
		}
		bound, branches = outer, elidebarrier.Branches(f, ifs)
		lo, hi := startOf(st), endOf(st)
		for _, x := range joined {
			p, e := x.Span()
			lo, hi = min(lo, p), max(hi, e)
		}
		if c := mutate.Conditional(f, lo, hi); c != "" {
			return "the statements between it and where it would go hold " + c
		}
	}
	if bound == nil {
		edge, which := "start", "before the barrier above"
		if !up {
			edge, which = "end", "after the barrier below"
		}
		if why := elidebarrier.OutsideCall(sc, which, edge); why != "" {
			return why
		}
	}
	*reach = joined
	if bound != nil {
		if up {
			*reach = append([]msl.Stmt{bound}, joined...)
		} else {
			*reach = append(append([]msl.Stmt{}, joined...), bound)
		}
	}
	fs := sc.Footprints([]msl.Stmt{st})
	if w := fs.Why(); w == "" && !touches(fs) {
		return "" // it touches no shared memory: nothing to protect
	}
	for _, x := range joined {
		if msl.ContainsBarrier(x) {
			return "the interval on the other side holds a statement with barriers of its own; not analysed"
		}
	}
	fj := sc.Footprints(joined)
	for _, fp := range []*msl.Footprints{fs, fj} {
		if w := fp.Why(); w != "" {
			return fmt.Sprintf("cannot follow every thread: %s at %s", w, f.At(fp.Unknown[0].Pos)) + elidebarrier.AssumingWith(branches, fs, fj)
		}
	}
	if cs := msl.Conflicts(fs, fj); len(cs) > 0 {
		return "the barrier protects it: " + elidebarrier.Describe(f, cs[0]) + elidebarrier.AssumingWith(branches, fs, fj)
	}
	*assumed = append(*assumed, elidebarrier.AssumingWith(branches, fs, fj))
	return ""
}
