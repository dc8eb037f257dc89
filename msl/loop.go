package msl

import (
	"fmt"
	"strings"
)

// A Loop is a counted for loop: `for (T i = A; i OP B; STEP)` whose start,
// bound and step are constants and whose body never assigns the induction
// variable, so that the values the variable takes are known.
type Loop struct {
	For      *For
	Var      string // the induction variable
	VarType  string // its declared type, "uint"; "" when declared outside the loop and its type is unknown
	Declared bool   // declared in the loop's init (its scope ends with the loop)
	Signed   bool   // the variable's type is a signed integer type
	Start    int64
	Bound    int64
	Op       string // the comparison, with the variable on the left: < <= > >= !=
	Step     int64  // the additive step (negative counts down); 0 for a geometric loop
	Geo      string // the geometric update (*= /= <<= >>=) with factor GeoBy; "" for an additive loop
	GeoBy    int64
	Trips    int64   // iterations
	Values   []int64 // the variable's value in each iteration; nil when Trips > MaxLoopValues
	InitOnly bool    // the init only assigns (i = A) a variable declared before the loop
}

// MaxLoopValues bounds the iteration values a Loop lists.
const MaxLoopValues = 4096

// CountLoop returns the counted-loop facts of s, or nil and the reason it
// is not a counted loop (the reason names what is not constant or not of
// the recognised form). It never guesses: start, bound and step come from
// the constant evaluator, and a loop whose body (or whose pointers) may
// write the induction variable is not counted.
func CountLoop(f *File, fn *Func, s *For) (*Loop, string) {
	return ScopeOf(f, fn).CountLoop(s)
}

// CountLoop is the package-level CountLoop for a loop of the scope's
// function, memoised.
func (sc *Scope) CountLoop(s *For) (*Loop, string) {
	if m, ok := sc.loops[s]; ok {
		return m.l, m.why
	}
	l, why := sc.countLoop1(s)
	if sc.loops == nil {
		sc.loops = map[*For]loopMemo{}
	}
	sc.loops[s] = loopMemo{l, why}
	return l, why
}

type loopMemo struct {
	l   *Loop
	why string
}

func (sc *Scope) countLoop1(s *For) (*Loop, string) {
	f, fn := sc.File, sc.Func
	env := &Env{File: f, Func: fn, At: s.Pos, TemplateArgs: sc.TemplateArgs()}
	init := f.SigTokens(s.Init.Pos, s.Init.End)
	cond := f.SigTokens(s.Cond.Pos, s.Cond.End)
	post := f.SigTokens(s.Post.Pos, s.Post.End)
	if len(init) == 0 {
		return nil, "no init"
	}

	// Init: [type...] i = A, a single declarator; or i = A.
	eq := -1
	for i, t := range init {
		if t.Text == "=" {
			eq = i
			break
		}
		if t.Text == "," || t.Text == ":" {
			return nil, "init is not a single variable"
		}
	}
	if eq < 1 || init[eq-1].Kind != Ident {
		return nil, "init is not `i = start`"
	}
	depth := 0
	for _, t := range init[eq+1:] {
		switch t.Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",":
			if depth == 0 {
				return nil, "init declares several variables"
			}
		}
	}
	l := &Loop{For: s, Var: init[eq-1].Text, Declared: eq > 1}
	if l.Declared {
		var typ []string
		for _, t := range init[:eq-1] {
			if !declQualifiers[t.Text] {
				typ = append(typ, t.Text)
			}
		}
		l.VarType = strings.Join(typ, " ")
	} else {
		l.InitOnly = true
		if v := sc.Lookup(l.Var, s.Pos); v != nil && v.Ptr == 0 && !v.Ref && !v.IsArray() {
			l.VarType = v.Elem
		}
	}
	l.Signed = signedType(l.VarType)
	v := l.Var
	a, ok := evalToks(env, init[eq+1:])
	if !ok {
		return nil, fmt.Sprintf("start %q is not a constant", toksText(f, init[eq+1:]))
	}
	l.Start = a

	// Post: ++i, i++, --i, i--, i += K, i -= K; or geometric: i *= K,
	// i /= K, i <<= K, i >>= K.
	switch {
	case len(post) >= 3 && post[0].Text == v && (post[1].Text == "*=" || post[1].Text == "/=" || post[1].Text == "<<=" || post[1].Text == ">>="):
		k, ok := evalToks(env, post[2:])
		if !ok || k <= 0 || k > 62 && (post[1].Text == "<<=" || post[1].Text == ">>=") {
			return nil, fmt.Sprintf("step %q is not a positive constant", toksText(f, post[2:]))
		}
		l.Geo, l.GeoBy = post[1].Text, k
	case len(post) == 2 && post[0].Text == "++" && post[1].Text == v,
		len(post) == 2 && post[0].Text == v && post[1].Text == "++":
		l.Step = 1
	case len(post) == 2 && post[0].Text == "--" && post[1].Text == v,
		len(post) == 2 && post[0].Text == v && post[1].Text == "--":
		l.Step = -1
	case len(post) >= 3 && post[0].Text == v && (post[1].Text == "+=" || post[1].Text == "-="):
		k, ok := evalToks(env, post[2:])
		if !ok || k <= 0 {
			return nil, fmt.Sprintf("step %q is not a positive constant", toksText(f, post[2:]))
		}
		l.Step = k
		if post[1].Text == "-=" {
			l.Step = -k
		}
	default:
		return nil, fmt.Sprintf("step %q is not ++, --, +=, -= or a geometric update of %s", toksText(f, post), v)
	}

	// Cond: i OP B, or B OP i (mirrored).
	if len(cond) < 3 {
		return nil, "condition is not `i OP bound`"
	}
	var b int64
	switch {
	case cond[0].Text == v && isCompareOp(cond[1].Text):
		l.Op = cond[1].Text
		b, ok = evalToks(env, cond[2:])
	case cond[len(cond)-1].Text == v && isCompareOp(cond[len(cond)-2].Text):
		l.Op = mirrorOp[cond[len(cond)-2].Text]
		b, ok = evalToks(env, cond[:len(cond)-2])
	default:
		return nil, fmt.Sprintf("condition %q is not `%s OP bound`", toksText(f, cond), v)
	}
	if !ok {
		return nil, fmt.Sprintf("bound in %q is not a constant", toksText(f, cond))
	}
	l.Bound = b
	if why := sc.inductionWritten(s, v); why != "" {
		return nil, why
	}
	if !l.count() {
		return nil, fmt.Sprintf("%s never reaches the bound the way the loop is written (start %d, bound %d)", v, l.Start, l.Bound)
	}
	return l, ""
}

// count computes Trips and Values; false when the loop does not end in a
// known number of iterations.
func (l *Loop) count() bool {
	unsigned := !l.Signed
	if l.Geo != "" {
		n, vals, ok := simulateLoop(l.Start, l.Bound, l.Op, l.Geo, l.GeoBy, unsigned)
		l.Trips, l.Values = n, vals
		return ok
	}
	ceil := func(n, d int64) int64 {
		if n <= 0 {
			return 0
		}
		return (n + d - 1) / d
	}
	a, b, step := l.Start, l.Bound, l.Step
	switch {
	case step > 0 && l.Op == "<":
		l.Trips = ceil(b-a, step)
	case step > 0 && l.Op == "<=":
		l.Trips = ceil(b-a+1, step)
	case step < 0 && l.Op == ">":
		l.Trips = ceil(a-b, -step)
	case step < 0 && l.Op == ">=" && (b > 0 || l.Signed):
		// i >= 0 never fails for an unsigned i.
		l.Trips = ceil(a-b+1, -step)
	case l.Op == "!=" && step > 0 && b >= a && (b-a)%step == 0:
		l.Trips = (b - a) / step
	case l.Op == "!=" && step < 0 && a >= b && (a-b)%(-step) == 0:
		l.Trips = (a - b) / -step
	default:
		return false
	}
	if unsigned && (a < 0 || a+step*(l.Trips-1) < 0) && l.Trips > 0 {
		return false
	}
	if l.Trips <= MaxLoopValues {
		l.Values = make([]int64, l.Trips)
		for k := range l.Values {
			l.Values[k] = a + int64(k)*step
		}
	}
	return true
}

// simulateLoop counts the iterations of a loop whose induction variable
// starts at a, is updated by `i geo= k` and runs while `i op b`. It
// reports false if the loop does not end within MaxLoopValues iterations
// or, for an unsigned variable, goes negative or overflows.
func simulateLoop(a, b int64, op, geo string, k int64, unsigned bool) (int64, []int64, bool) {
	cond := func(i int64) bool {
		switch op {
		case "<":
			return i < b
		case "<=":
			return i <= b
		case ">":
			return i > b
		case ">=":
			return i >= b
		}
		return i != b
	}
	i := a
	var vals []int64
	for n := int64(0); n <= MaxLoopValues; n++ {
		if unsigned && i < 0 || i > 1<<40 || i < -1<<40 {
			return 0, nil, false
		}
		if !cond(i) {
			return n, vals, true
		}
		vals = append(vals, i)
		switch geo {
		case "*=":
			i *= k
		case "/=":
			i /= k
		case "<<=":
			i <<= k
		case ">>=":
			i >>= k
		}
	}
	return 0, nil, false
}

// signedType reports whether a declared type text is a signed integer
// type.
func signedType(typ string) bool {
	s := false
	for _, w := range strings.Fields(typ) {
		switch w {
		case "int", "short", "long", "char", "int8_t", "int16_t", "int32_t", "int64_t", "signed", "ptrdiff_t":
			s = true
		case "unsigned":
			return false
		}
	}
	return s
}

var mirrorOp = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}

func isCompareOp(s string) bool { _, ok := mirrorOp[s]; return ok }

// evalToks evaluates the constant expression spelled by toks.
func evalToks(env *Env, toks []Token) (int64, bool) {
	if len(toks) == 0 {
		return 0, false
	}
	return env.Eval(joinTokens(toks))
}

// inductionWritten returns why the body of s may write the induction
// variable named v, or "": an assignment, increment or address taken in
// the body (of that variable, not of another one of the same name), or a
// macro the body uses that mentions the name.
func (sc *Scope) inductionWritten(s *For, v string) string {
	if s.Body == nil {
		return ""
	}
	f := sc.File
	iv := sc.Lookup(v, s.Cond.Pos)
	if iv == nil {
		return "induction variable " + v + " is not declared"
	}
	e := sc.Effects(s.Body)
	if e.AddrTaken[iv] {
		return fmt.Sprintf("the body writes %s (&%s)", v, v)
	}
	if e.Writes[iv] {
		return fmt.Sprintf("the body writes %s", v)
	}
	for _, u := range e.Unknown {
		for _, t := range f.SigTokens(u.Pos, u.End) {
			if t.Kind == Ident && t.Text == v && sc.Lookup(v, t.Pos) == iv {
				return fmt.Sprintf("the body uses %s in a construct the facts do not model (%s)", v, u.Why)
			}
		}
	}
	pos, end := s.Body.Span()
	for _, t := range f.SigTokens(pos, end) {
		if t.Kind != Ident || t.Text == v {
			continue
		}
		if d := f.lookupDefine(t.Text, t.Pos); d != nil && macroMentions(f, d, v, 0) {
			return fmt.Sprintf("the body uses macro %s, which mentions %s", t.Text, v)
		}
	}
	return ""
}

// macroMentions reports whether macro d's body, or a macro it uses,
// mentions the identifier name.
func macroMentions(f *File, d *Define, name string, depth int) bool {
	if depth > 8 {
		return true
	}
	for _, t := range lexExpr(d.Body) {
		if t.Kind != Ident {
			continue
		}
		if t.Text == name {
			return true
		}
		if t.Text != d.Name {
			if d2 := f.lookupDefine(t.Text, 0); d2 != nil && macroMentions(f, d2, name, depth+1) {
				return true
			}
		}
	}
	return false
}

// toksText returns the source text spanning toks, blanks collapsed.
func toksText(f *File, toks []Token) string {
	if len(toks) == 0 {
		return ""
	}
	return strings.Join(strings.Fields(f.Text(toks[0].Pos, toks[len(toks)-1].End)), " ")
}
