package elidebarrier

import (
	_ "embed"
	"fmt"
	"slices"
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
	before, after, prev, next, branches, why := Around(sc, parents, blk, b)
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
			skip(fmt.Sprintf("its intervals hold a statement with barriers of its own (at %s); not analysed", f.At(startOf(x))))
			return
		}
	}
	fa, fb := sc.Footprints(before), sc.Footprints(after)
	for _, fp := range []*msl.Footprints{fa, fb} {
		if w := fp.Why(); w != "" {
			u := fp.Unknown[0]
			skip(fmt.Sprintf("cannot follow every thread: %s at %s", w, f.At(u.Pos)) + AssumingWith(branches, fa, fb))
			return
		}
	}
	if cs := msl.Conflicts(fa, fb); len(cs) > 0 {
		skip("needed: " + Describe(f, cs[0]) + AssumingWith(branches, fa, fb))
		return
	}
	msg := "orders no access of another thread" + AssumingWith(branches, fa, fb)
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
func Assuming(fps ...*msl.Footprints) string { return AssumingWith("", fps...) }

// AssumingWith is Assuming with a further assumption first (Branches'),
// when it is not "".
func AssumingWith(extra string, fps ...*msl.Footprints) string {
	var as, geos []string
	if extra != "" {
		as = append(as, extra)
	}
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
// function body's start or end), with what the intervals rest on (" ("
// assuming ...)" or ""). An interval that reaches the start or end of blk
// goes on outside it (Outward) when blk is a branch of an if statement:
// every thread takes the branch that holds a barrier, which Metal requires
// of a barrier, so the branch's statements run straight after the code
// before the if and before the code after it. It reports why not when an
// interval reaches outside a loop body or another statement, or the start
// or end of a function that is not a kernel.
func Around(sc *msl.Scope, parents map[msl.Stmt]msl.Stmt, blk *msl.Block, b msl.Stmt) (before, after []msl.Stmt, prev, next msl.Stmt, assumed string, why string) {
	ivs := sc.Intervals(blk) // memoised: Around is asked of every barrier
	k := -1
	for i, iv := range ivs {
		if iv.After == b {
			k = i
			break
		}
	}
	if k < 0 {
		return nil, nil, nil, nil, "", "the barrier is not a statement of its block"
	}
	before, after = ivs[k].Stmts, ivs[k+1].Stmts
	prev, next = ivs[k].Before, ivs[k+1].After
	var ifs []*msl.If
	if prev == nil {
		out, bound, through, why := Outward(sc, parents, blk, true)
		if why != "" {
			return nil, nil, nil, nil, "", "no barrier precedes it in its block: " + why
		}
		before, prev, ifs = append(append([]msl.Stmt{}, out...), before...), bound, append(ifs, through...)
		if prev == nil {
			if why := OutsideCall(sc, "before it", "start"); why != "" {
				return nil, nil, nil, nil, "", why
			}
		}
	}
	if next == nil {
		out, bound, through, why := Outward(sc, parents, blk, false)
		if why != "" {
			return nil, nil, nil, nil, "", "no barrier follows it in its block: " + why
		}
		after, next = append(append([]msl.Stmt{}, after...), out...), bound
		for _, s := range through {
			if !slices.Contains(ifs, s) {
				ifs = append(ifs, s)
			}
		}
		if next == nil {
			if why := OutsideCall(sc, "after it", "end"); why != "" {
				return nil, nil, nil, nil, "", why
			}
		}
	}
	return before, after, prev, next, Branches(sc.File, ifs), ""
}

// Branches names the if statements whose branch an interval was followed
// through, as an assumption (" every thread takes the branch of the if at
// 12:5, as its barrier requires"), or "".
func Branches(f *msl.File, ifs []*msl.If) string {
	if len(ifs) == 0 {
		return ""
	}
	var at []string
	for _, s := range ifs {
		at = append(at, fmt.Sprintf("%s", f.At(s.Pos)))
	}
	w := "the if"
	if len(at) > 1 {
		w = "the ifs"
	}
	return fmt.Sprintf("every thread takes the branch of %s at %s, as its barrier requires", w, strings.Join(at, ", "))
}

// Outward returns the statements that run in every thread right before
// the start (up) or right after the end (!up) of block blk, up to the
// nearest barrier (bound; nil when they reach the function body's start
// or end), when blk is a branch of if statements whose conditions touch
// no memory and have no effects: a thread that runs a barrier in the
// branch has run the code before the if (back to that code's barrier) and
// runs the code after it (on to the next barrier), and every thread runs
// the barrier. The ifs followed through are returned; why says what
// stops it (a loop body, whose interval takes in another iteration; a
// condition with effects; another statement).
func Outward(sc *msl.Scope, parents map[msl.Stmt]msl.Stmt, blk *msl.Block, up bool) (stmts []msl.Stmt, bound msl.Stmt, ifs []*msl.If, why string) {
	f := sc.File
	var cur msl.Stmt = blk
	for cur != msl.Stmt(sc.Func.Body) {
		switch p := parents[cur].(type) {
		case *msl.If:
			e := sc.SpanEffects(p.Cond.Pos, p.Cond.End, p)
			if len(e.Accesses) > 0 || len(e.Writes) > 0 || len(e.Calls) > 0 || len(e.Unknown) > 0 || len(e.AddrTaken) > 0 {
				return nil, nil, nil, fmt.Sprintf("the interval reaches outside the branch of the if at %s, whose condition touches memory or has effects", f.At(p.Pos))
			}
			ifs = append(ifs, p)
			cur = p
		case *msl.Block:
			idx := p.Index(cur)
			if idx < 0 {
				return nil, nil, nil, "the interval reaches outside the block"
			}
			for _, iv := range sc.Intervals(p) {
				if idx < iv.From || idx >= iv.From+len(iv.Stmts) {
					continue
				}
				j := idx - iv.From
				if up {
					stmts = append(append([]msl.Stmt{}, iv.Stmts[:j]...), stmts...)
					if iv.Before != nil {
						return stmts, iv.Before, ifs, ""
					}
				} else {
					stmts = append(stmts, iv.Stmts[j+1:]...)
					if iv.After != nil {
						return stmts, iv.After, ifs, ""
					}
				}
				break
			}
			cur = p
		default:
			return nil, nil, nil, "the interval before or after it reaches outside the block (a loop's previous or next iteration, or the code around another statement)"
		}
	}
	return stmts, nil, ifs, ""
}

// Describe explains a conflict with positions.
func Describe(f *msl.File, c msl.Conflict) string {
	return fmt.Sprintf("%s (%s and %s)", c.String(), f.At(c.A.Pos), f.At(c.B.Pos))
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
	name := msl.QualifiedName(sc.Func)
	return fmt.Sprintf("the interval %s reaches the %s of %s, which is not a kernel: it runs on in its callers' code, on every path of every call, and a proof inside %s cannot see that code (%s)", which, edge, name, name, sc.File.CallContext(sc.Func))
}
