package elidebarrier

import (
	_ "embed"
	"fmt"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

//go:embed doc.go
var doc string

// Mutation is the elide-barrier mutation.
var Mutation = &mutate.Mutation{
	Name: "elide-barrier",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

func run(p *mutate.Pass) error {
	sc := p.Scope()
	parents := msl.Parents(p.Func.Body)
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		switch b := s.(type) {
		case *msl.MacroUse:
			if b.Hides == "barrier" {
				p.Skip(mutate.Skip{Pos: b.Pos, End: b.End, Reason: "barrier hidden behind macro " + b.Name})
			}
		case *msl.Barrier:
			site(p, sc, parents, b)
		}
		return true
	})
	return nil
}

func site(p *mutate.Pass, sc *msl.Scope, parents map[msl.Stmt]msl.Stmt, b *msl.Barrier) {
	f := p.File
	skip := func(why string) { p.Skip(mutate.Skip{Pos: b.Pos, End: b.End, Reason: why}) }
	if b.Name != "threadgroup_barrier" {
		skip("a simdgroup barrier orders only its SIMD group; not analysed")
		return
	}
	blk, ok := parents[b].(*msl.Block)
	if !ok {
		skip("the barrier is not a statement of a block")
		return
	}
	before, after, prev, next, why := Around(sc, blk, b)
	if why != "" {
		skip(why)
		return
	}
	lo, hi := b.Pos, b.End
	if len(before) > 0 {
		lo, _ = before[0].Span()
	}
	if len(after) > 0 {
		_, hi = after[len(after)-1].Span()
	}
	if c := mutate.Conditional(f, lo, hi); c != "" {
		skip("its intervals hold " + c + "; not analysed")
		return
	}
	for _, x := range append(append([]msl.Stmt{}, before...), after...) {
		if msl.ContainsBarrier(x) {
			pos := f.Position(startOf(x))
			skip(fmt.Sprintf("its intervals hold a statement with barriers of its own (at %d:%d); not analysed", pos.Line, pos.Column))
			return
		}
	}
	fa, fb := sc.Footprints(before), sc.Footprints(after)
	for _, fp := range []*msl.Footprints{fa, fb} {
		if w := fp.Why(); w != "" {
			u := fp.Unknown[0]
			pos := f.Position(u.Pos)
			skip(fmt.Sprintf("cannot follow every thread: %s at %d:%d", w, pos.Line, pos.Column) + Assuming(fa, fb))
			return
		}
	}
	if cs := msl.Conflicts(fa, fb); len(cs) > 0 {
		skip("needed: " + Describe(f, cs[0]) + Assuming(fa, fb))
		return
	}
	msg := "orders no access of another thread" + Assuming(fa, fb)
	del := mutate.RemoveStmt(f.Src, b.Pos, b.End, mutate.AfterLabel(f, b.Pos))
	// The proof read both intervals and the barriers that bound them.
	from, to := b.Pos, b.End
	if len(before) > 0 {
		from, _ = before[0].Span()
	}
	if prev != nil {
		from, _ = prev.Span()
	}
	if len(after) > 0 {
		_, to = after[len(after)-1].Span()
	}
	if next != nil {
		_, to = next.Span()
	}
	edits := append([]edit.Edit{del}, mutate.Guards(f.Src, from, to, []edit.Edit{del})...)
	p.Report(mutate.Site{
		Pos:     b.Pos,
		End:     b.End,
		Message: msg,
		Choices: []mutate.Choice{{Name: "elide", Message: "remove the barrier", Edits: edits}},
	})
}

// Assuming returns " (assuming ...)" naming what footprints rest on (one-
// dimensional threadgroups when no geometry was given and the kernel reads
// its thread position; the threads per threadgroup when one was), or "".
func Assuming(fps ...*msl.Footprints) string {
	var as, geos []string
	for _, fp := range fps {
		as = append(as, fp.Assumes...)
		for _, sf := range fp.Scenarios {
			if sf.Geometry != (msl.Dims{}) {
				geos = append(geos, sf.Geometry.String())
			}
		}
	}
	as = dedupe(as)
	if len(geos) > 0 {
		as = append(as, strings.Join(dedupe(geos), ", ")+" threads per threadgroup")
	}
	if len(as) == 0 {
		return ""
	}
	return " (assuming " + strings.Join(as, ", ") + ")"
}

func startOf(s msl.Stmt) int {
	p, _ := s.Span()
	return p
}

func dedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Around returns the statements of the intervals before and after barrier
// b, a statement of block blk, and the barriers that bound them (nil at the
// function body's start or end). It reports why not when an interval
// reaches outside the block: only the function body's intervals may run
// to its start or end.
func Around(sc *msl.Scope, blk *msl.Block, b msl.Stmt) (before, after []msl.Stmt, prev, next msl.Stmt, why string) {
	ivs := sc.Intervals(blk) // memoised: Around is asked of every barrier
	k := -1
	for i, iv := range ivs {
		if iv.After == b {
			k = i
			break
		}
	}
	if k < 0 {
		return nil, nil, nil, nil, "the barrier is not a statement of its block"
	}
	body := blk == sc.Func.Body
	if ivs[k].Before == nil && !body {
		return nil, nil, nil, nil, "no barrier precedes it in its block: the interval before it reaches outside the block (a loop's previous iteration or the code before)"
	}
	if ivs[k+1].After == nil && !body {
		return nil, nil, nil, nil, "no barrier follows it in its block: the interval after it reaches outside the block (a loop's next iteration or the code after)"
	}
	if ivs[k].Before == nil {
		if why := OutsideCall(sc, "before it", "start"); why != "" {
			return nil, nil, nil, nil, why
		}
	}
	if ivs[k+1].After == nil {
		if why := OutsideCall(sc, "after it", "end"); why != "" {
			return nil, nil, nil, nil, why
		}
	}
	return ivs[k].Stmts, ivs[k+1].Stmts, ivs[k].Before, ivs[k+1].After, ""
}

// Describe explains a conflict with positions.
func Describe(f *msl.File, c msl.Conflict) string {
	a, b := f.Position(c.A.Pos), f.Position(c.B.Pos)
	return fmt.Sprintf("%s (%d:%d and %d:%d)", c.String(), a.Line, a.Column, b.Line, b.Column)
}

// OutsideCall returns why an interval (the one before or after a barrier)
// that reaches the start or end of the function body cannot be judged
// inside the function: only a kernel's body starts and ends where nothing
// of its threads runs. A helper's interval runs on into its callers' code,
// on every path of every call (a helper called twice runs the second
// call's code after the first call's last barrier). It returns "" for a
// kernel.
func OutsideCall(sc *msl.Scope, which, edge string) string {
	if sc.Func.Kind == msl.Kernel {
		return ""
	}
	return fmt.Sprintf("the interval %s reaches the %s of %s, which is not a kernel: it runs on in its callers' code, on every path of every call, and a proof inside %s cannot see that code (%s)", which, edge, sc.Func.Name, sc.Func.Name, sc.File.CallContext(sc.Func))
}
