package directive

import "strings"

// A Def is the syntax of one #define: the macro's name, its parameters
// when it is function-like, and its replacement text.
type Def struct {
	Name     string
	FuncLike bool
	Params   []string // function-like: as written, trimmed ("..." and "args..." kept)
	Body     string   // the replacement text, splices joined, blanks trimmed; comments kept
	// BodyOff is the offset in the raw operand (rest) of the body's first
	// byte, or -1 when the body is empty or cannot be found there (a
	// splice inside its first word).
	BodyOff int
}

// ParseDefine parses the operand of a #define, the directive's text after
// its name (rest, raw: splices and comments as written). It returns a
// message instead for a malformed one.
func ParseDefine(rest string) (Def, string) {
	r := strings.TrimLeft(Join(rest), " \t")
	k := 0
	for k < len(r) && isIdentChar(r[k]) {
		k++
	}
	if k == 0 || !isIdentStart(r[0]) {
		return Def{}, "#define without a macro name"
	}
	d := Def{Name: r[:k], BodyOff: -1}
	body := r[k:]
	if strings.HasPrefix(body, "(") {
		c := strings.IndexByte(body, ')')
		if c < 0 {
			return Def{}, "unterminated macro parameter list"
		}
		d.FuncLike = true
		d.Params = []string{}
		if ps := strings.TrimSpace(body[1:c]); ps != "" {
			for _, x := range strings.Split(ps, ",") {
				d.Params = append(d.Params, strings.TrimSpace(x))
			}
		}
		body = body[c+1:]
	}
	d.Body = strings.TrimSpace(body)
	if d.Body != "" {
		d.BodyOff = bodyOffset(rest, d)
	}
	return d, ""
}

// bodyOffset finds where d's body starts in the raw operand rest, or -1.
func bodyOffset(rest string, d Def) int {
	j := 0
	skip := func() {
		for j < len(rest) && (isSpace(rest[j]) || rest[j] == '\\') {
			j++
		}
	}
	skip()
	for j < len(rest) && isIdentChar(rest[j]) {
		j++
	}
	if d.FuncLike {
		for j < len(rest) && rest[j] != ')' {
			j++
		}
		j++
	}
	skip()
	first := d.Body
	if i := strings.IndexAny(first, " \t\\"); i > 0 {
		first = first[:i]
	}
	if j < len(rest) && strings.HasPrefix(rest[j:], first) {
		return j
	}
	return -1
}

// UndefName returns the name an #undef's operand (rest, raw) names, and
// whether it is one identifier.
func UndefName(rest string) (string, bool) {
	n := Operand(rest)
	return n, IsIdent(n)
}

// Include parses the operand of an #include (rest, raw): the name between
// quotes or angle brackets, and angle for <name>; ok is false for a
// computed include (a macro) or an unterminated name.
func Include(rest string) (name string, angle, ok bool) {
	r := Operand(rest)
	switch {
	case strings.HasPrefix(r, `"`):
		if k := strings.IndexByte(r[1:], '"'); k >= 0 {
			return r[1 : 1+k], false, true
		}
	case strings.HasPrefix(r, "<"):
		if k := strings.IndexByte(r, '>'); k >= 0 {
			return r[1:k], true, true
		}
	}
	return "", false, false
}
