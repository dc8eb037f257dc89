package msl

// Parents returns the statement directly containing each statement of
// body (body itself has none).
func Parents(body *Block) map[Stmt]Stmt {
	m := map[Stmt]Stmt{}
	var walk func(s Stmt)
	walk = func(s Stmt) {
		kids := Children(s)
		for _, k := range kids {
			if k == nil || isNilStmt(k) {
				continue
			}
			m[k] = s
			walk(k)
		}
	}
	if body != nil {
		walk(body)
	}
	return m
}

// Children returns the statements directly nested in s, in source order.
func Children(s Stmt) []Stmt {
	switch s := s.(type) {
	case *Block:
		if s == nil {
			return nil
		}
		return s.Stmts
	case *For:
		return []Stmt{s.Body}
	case *While:
		return []Stmt{s.Body}
	case *Do:
		return []Stmt{s.Body}
	case *If:
		if s.Else != nil {
			return []Stmt{s.Then, s.Else}
		}
		return []Stmt{s.Then}
	case *Switch:
		return []Stmt{s.Body}
	case *MacroUse:
		if s.Body != nil {
			return []Stmt{s.Body}
		}
	}
	return nil
}

// Index returns the position of s among the statements of block b, or -1.
func (b *Block) Index(s Stmt) int {
	for i, c := range b.Stmts {
		if c == s {
			return i
		}
	}
	return -1
}

// ContainsBarrier reports whether s is or contains a barrier statement or
// a macro use hiding one.
func ContainsBarrier(s Stmt) bool {
	found := false
	Walk(s, func(x Stmt) bool {
		switch x := x.(type) {
		case *Barrier:
			found = true
		case *MacroUse:
			if x.Hides == "barrier" {
				found = true
			}
		}
		return !found
	})
	return found
}
