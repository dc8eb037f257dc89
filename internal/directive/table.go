package directive

// A Table is what a walk through the directives, in order, knows of each
// macro: the knowledge at the current point. A definition or #undef that
// may not take effect (in a branch whose condition is unknown) leaves the
// name unknown.
type Table struct {
	m map[string]Macro
	// Default says what is known of a name the table holds nothing of;
	// nil: unknown.
	Default func(name string) Macro
}

// Define records a #define; sure says it certainly takes effect. An
// unsure one leaves the name unknown, and opaque when this body or an
// earlier possible one is more than one operand.
func (t *Table) Define(d Def, sure bool) {
	if !sure {
		t.Set(d.Name, Macro{Defined: Unknown, Opaque: t.opaque(t.Lookup(d.Name)) || !d.FuncLike && !oneOperand(d.Body)})
		return
	}
	m := Macro{Defined: Yes, FuncLike: d.FuncLike}
	if !d.FuncLike {
		m.Body = d.Body
	}
	t.Set(d.Name, m)
}

// Undef records an #undef of name; sure says it certainly takes effect.
func (t *Table) Undef(name string, sure bool) {
	if old := t.Lookup(name); !sure && old.Defined != No {
		t.Set(name, Macro{Defined: Unknown, Opaque: t.opaque(old)})
		return
	}
	t.Set(name, Macro{Defined: No})
}

// Set records what is known of name from here on.
func (t *Table) Set(name string, m Macro) {
	if t.m == nil {
		t.m = map[string]Macro{}
	}
	t.m[name] = m
}

// Get returns what the table holds of name, and whether it holds anything.
func (t *Table) Get(name string) (Macro, bool) {
	m, ok := t.m[name]
	return m, ok
}

// Lookup returns what is known of name here; it is a Lookup.
func (t *Table) Lookup(name string) Macro {
	if m, ok := t.m[name]; ok {
		return m
	}
	if t.Default != nil {
		return t.Default(name)
	}
	return Macro{}
}

// InEffect says which of the n #define and #undef directives of one name
// (in source order, the i-th at offset pos(i), an #undef where undef(i))
// is in effect at offset at: the index of the last one before at, or
// undefined when that one is an #undef; -1 and false when none precedes
// at (what was defined before the text began is in effect). With at <= 0
// it is the last #define of all, the #undefs after it aside (a file's
// #undefs of its helper macros at its end).
func InEffect(n int, pos func(i int) int, undef func(i int) bool, at int) (i int, undefined bool) {
	for i := n - 1; i >= 0; i-- {
		if at <= 0 {
			if !undef(i) {
				return i, false
			}
			continue
		}
		if pos(i) < at {
			if undef(i) {
				return -1, true
			}
			return i, false
		}
	}
	return -1, false
}

// opaque reports whether what m says a name may be is more than one
// operand.
func (t *Table) opaque(m Macro) bool {
	return m.Opaque || m.Defined == Yes && !m.FuncLike && !oneOperand(m.Body)
}

// oneOperand reports whether a replacement text is one operand: a single
// identifier or number, or nothing but comments and blanks around one.
func oneOperand(body string) bool {
	toks, ok := lexExpr(body)
	return ok && len(toks) == 1 && (toks[0].kind == kIdent || toks[0].kind == kNumber || toks[0].kind == kChar)
}
