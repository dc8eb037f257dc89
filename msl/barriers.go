package msl

// An Interval is a run of statements of one block between two of its
// top-level barriers: threads only meet at its ends.
type Interval struct {
	Block  *Block
	From   int // index of its first statement in Block.Stmts
	Stmts  []Stmt
	Before Stmt // the barrier that opens it; nil at the start of the block
	After  Stmt // the barrier that closes it; nil at the end of the block
}

// IsBarrierStmt reports whether s is a threadgroup or simdgroup barrier,
// or a macro use hiding one.
func IsBarrierStmt(s Stmt) bool {
	switch s := s.(type) {
	case *Barrier:
		return true
	case *MacroUse:
		return s.Hides == "barrier"
	}
	return false
}

// Intervals splits b's statements at its top-level barrier statements.
// There is one more interval than there are such barriers; an interval may
// be empty (two barriers in a row). Barriers nested in a statement (in a
// loop, say) do not split: that statement stays in one interval.
func Intervals(b *Block) []Interval {
	var out []Interval
	cur := Interval{Block: b}
	for i, s := range b.Stmts {
		if IsBarrierStmt(s) {
			cur.After = s
			out = append(out, cur)
			cur = Interval{Block: b, From: i + 1, Before: s}
			continue
		}
		if len(cur.Stmts) == 0 {
			cur.From = i
		}
		cur.Stmts = append(cur.Stmts, s)
	}
	return append(out, cur)
}

// Footprints is ThreadFootprints, memoised by the statements' range.
func (sc *Scope) Footprints(stmts []Stmt) *Footprints {
	if len(stmts) == 0 {
		return sc.ThreadFootprints(nil)
	}
	p, _ := stmts[0].Span()
	_, e := stmts[len(stmts)-1].Span()
	k := [2]int{p, e}
	if fp, ok := sc.footprints[k]; ok {
		return fp
	}
	fp := sc.ThreadFootprints(stmts)
	if sc.footprints == nil {
		sc.footprints = map[[2]int]*Footprints{}
	}
	sc.footprints[k] = fp
	return fp
}
