package directive

// A Group is one open #if group as a walk through the directives in order
// knows it: which of its branches were taken, and what the current one is.
type Group struct {
	Pos     int  // offset of the #if (or #ifdef, #ifndef) directive
	Taken   bool // a branch so far is certainly compiled
	Unknown bool // a branch so far was undecided
	Branch  Tri  // the current branch: Yes compiled, No skipped, Unknown undecided
}

// Enter starts a branch whose condition is c: the group's first (#if) or,
// through Elif, a later one.
func (g *Group) Enter(c Tri) {
	g.Branch = c
	switch c {
	case Yes:
		g.Taken = true
	case Unknown:
		g.Unknown = true
	}
}

// Elif starts an #elif branch (or #elifdef, #elifndef): skipped after a
// taken branch, undecided after an undecided one, else as cond says;
// cond is called only when the condition matters.
func (g *Group) Elif(cond func() Tri) Tri {
	switch {
	case g.Taken:
		g.Enter(No)
	case g.Unknown:
		g.Enter(Unknown)
	default:
		g.Enter(cond())
	}
	return g.Branch
}

// Else starts the #else branch.
func (g *Group) Else() Tri {
	return g.Elif(func() Tri { return Yes })
}

// Region says whether code under the open groups (outermost first) is
// certainly compiled (Yes), certainly skipped (No) or undecided.
func Region(open []*Group) Tri {
	r := Yes
	for _, g := range open {
		switch g.Branch {
		case No:
			return No
		case Unknown:
			r = Unknown
		}
	}
	return r
}
