package directive

import (
	"math"
	"strconv"
	"strings"
)

// A Tri is a three-valued truth: what a condition or a macro's definedness
// is known to be.
type Tri int8

const (
	Unknown Tri = iota
	Yes
	No
)

// Not negates t; Unknown stays Unknown.
func (t Tri) Not() Tri {
	switch t {
	case Yes:
		return No
	case No:
		return Yes
	}
	return Unknown
}

// A Macro is what a caller knows of one name at a point of the source.
type Macro struct {
	Defined  Tri
	FuncLike bool   // with Defined Yes: a function-like macro
	Body     string // with Defined Yes, object-like: the replacement text
	// Opaque, with Defined Unknown, says the name may expand to more than
	// one operand (1 || 1), so that no condition using it is decided.
	Opaque bool
}

// A Lookup says what is known of a name where a condition is evaluated.
// A name whose Defined is Unknown and not Opaque is taken to expand to one
// operand of unknown value (a number, as the compiler's own predefined
// macros do).
type Lookup func(name string) Macro

// Cond decides the condition of a conditional directive: kind is its name
// (if, ifdef, ifndef, elif, elifdef or elifndef) and rest its raw text
// after the name.
func Cond(kind, rest string, lookup Lookup) Tri {
	switch kind {
	case "ifdef", "ifndef", "elifdef", "elifndef":
		name := Operand(rest)
		if !IsIdent(name) {
			return Unknown // the compiler diagnoses it
		}
		d := lookup(name).Defined
		if kind == "ifndef" || kind == "elifndef" {
			d = d.Not()
		}
		return d
	}
	v, ok := Eval(Join(rest), lookup)
	switch {
	case !ok:
		return Unknown
	case v.V != 0:
		return Yes
	}
	return No
}

// A Value is the value of an #if expression: V holds its bits, Unsigned
// says it is a uintmax_t (else an intmax_t).
type Value struct {
	V        int64
	Unsigned bool
}

// Bounds of one evaluation's macro substitution.
const (
	maxSteps  = 4096
	maxTokens = 1 << 16
	maxNest   = 256
)

// Eval evaluates the #if expression expr (splices joined; comments are
// blanks) with the macros lookup describes. It reports false when the
// value is unknown or the compiler would reject the expression.
func Eval(expr string, lookup Lookup) (Value, bool) {
	toks, ok := lexExpr(expr)
	if !ok {
		return Value{}, false
	}
	toks, ok = substitute(toks, lookup)
	if !ok || len(toks) == 0 {
		return Value{}, false
	}
	p := &parser{toks: toks}
	v := p.ternary(live)
	if p.bad || p.i != len(p.toks) || !v.known {
		return Value{}, false
	}
	return Value{V: v.v, Unsigned: v.u}, true
}

// Token kinds of an #if expression.
const (
	kIdent = iota
	kNumber
	kChar
	kPunct
	kValue // the value of a defined operator or of a name a Lookup does not know
	kBad   // a string literal, a stray byte: the compiler rejects the expression
)

type etok struct {
	kind int
	text string
	val  val
	hide []string // the macros whose expansion produced the token
}

// lexExpr splits an #if expression into preprocessing tokens; comments
// are blanks. It reports false for an unterminated comment.
func lexExpr(s string) ([]etok, bool) {
	var out []etok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			return out, true
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			e, ok := BlockCommentEnd(s, i)
			if !ok {
				return nil, false
			}
			i = e
			continue
		}
		j := i + 1
		kind := kPunct
		switch {
		case isIdentStart(c):
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			kind = kIdent
			if j < len(s) && (s[j] == '\'' || s[j] == '"') {
				switch s[i:j] {
				case "L", "u", "U", "u8":
					j, kind = QuoteEnd(s, j), kBad // wide and UTF character literals: left to the compiler
				}
			}
		case '0' <= c && c <= '9' || c == '.' && j < len(s) && '0' <= s[j] && s[j] <= '9':
			for j < len(s) {
				d := s[j]
				switch {
				case isIdentChar(d) || d == '.':
					j++
				case (d == '+' || d == '-') && strings.ContainsRune("eEpP", rune(s[j-1])):
					j++
				case d == '\'' && j+1 < len(s) && isIdentChar(s[j+1]):
					j++
				default:
					goto num
				}
			}
		num:
			kind = kNumber
		case c == '\'':
			j, kind = QuoteEnd(s, i), kChar
		case c == '"':
			j, kind = QuoteEnd(s, i), kBad
		default:
			j = i + punctLen(s[i:])
			if j == i {
				j, kind = i+1, kBad
			}
		}
		out = append(out, etok{kind: kind, text: s[i:j]})
		i = j
	}
	return out, true
}

// punctLen returns the length of the operator at the start of s, or 0.
func punctLen(s string) int {
	for _, op := range [...]string{"<=>", "<<=", ">>=", "...", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "##",
		"++", "--", "->", "::", ".*", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="} {
		if strings.HasPrefix(s, op) {
			return len(op)
		}
	}
	if strings.IndexByte("()+-*/%<>&|^!~?:,#=[]{};.", s[0]) >= 0 {
		return 1
	}
	return 0
}

// substitute performs the #if expansion of toks: each defined operator
// becomes its value, each object-like macro its body (rescanned, the
// macro hidden there), true and false 1 and 0, each name the lookup does
// not know an unknown value and each other name 0. It reports false when
// a function-like macro would be expanded or a bound is exceeded.
func substitute(toks []etok, lookup Lookup) ([]etok, bool) {
	out := make([]etok, 0, len(toks))
	steps := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != kIdent {
			out = append(out, t)
			continue
		}
		switch t.text {
		case "defined":
			j := i + 1
			paren := j < len(toks) && toks[j].text == "("
			if paren {
				j++
			}
			if j >= len(toks) || toks[j].kind != kIdent {
				return nil, false
			}
			name := toks[j].text
			if paren {
				if j+1 >= len(toks) || toks[j+1].text != ")" {
					return nil, false
				}
				j++
			}
			v := val{typed: true}
			switch lookup(name).Defined {
			case Yes:
				v.known, v.v = true, 1
			case No:
				v.known = true
			}
			out = append(out, etok{kind: kValue, val: v})
			i = j
			continue
		case "true":
			out = append(out, etok{kind: kValue, val: val{v: 1, known: true, typed: true}})
			continue
		case "false":
			out = append(out, etok{kind: kValue, val: val{known: true, typed: true}})
			continue
		}
		if hidden(t.hide, t.text) {
			out = append(out, etok{kind: kValue, val: val{known: true, typed: true}})
			continue
		}
		m := lookup(t.text)
		switch m.Defined {
		case No:
			out = append(out, etok{kind: kValue, val: val{known: true, typed: true}})
			continue
		case Unknown:
			if m.Opaque {
				return nil, false
			}
			out = append(out, etok{kind: kValue, val: val{}})
			continue
		}
		if m.FuncLike {
			if i+1 < len(toks) && toks[i+1].text == "(" {
				return nil, false // a function-like macro's expansion: not evaluated here
			}
			out = append(out, etok{kind: kValue, val: val{known: true, typed: true}})
			continue
		}
		if steps++; steps > maxSteps {
			return nil, false
		}
		body, ok := lexExpr(m.Body)
		if !ok {
			return nil, false
		}
		hide := append(t.hide[:len(t.hide):len(t.hide)], t.text)
		for k := range body {
			body[k].hide = hide
		}
		rest := append(body, toks[i+1:]...)
		if len(rest) > maxTokens {
			return nil, false
		}
		toks, i = rest, -1
	}
	return out, true
}

func hidden(hide []string, name string) bool {
	for _, h := range hide {
		if h == name {
			return true
		}
	}
	return false
}

// A val is an operand: known, its bits in v and its type in u; unknown,
// its type may still be known (typed), as a comparison's is.
type val struct {
	v     int64
	u     bool
	known bool
	typed bool
}

func known(v int64, u bool) val { return val{v: v, u: u, known: true, typed: true} }

func boolVal(b bool) val {
	if b {
		return known(1, false)
	}
	return known(0, false)
}

// An evaluation context: live operands are certainly evaluated, so that an
// error there (division by zero) is the compiler's error; others may be
// skipped by && || or ?:.
type ctx bool

const live ctx = true

type parser struct {
	toks []etok
	i    int
	nest int
	bad  bool
}

func (p *parser) peek() string {
	if p.i < len(p.toks) && p.toks[p.i].kind == kPunct {
		return p.toks[p.i].text
	}
	return ""
}

// fail records an error in an operand that is certainly evaluated and
// returns an unknown value of the operation's type (u).
func (p *parser) fail(c ctx, u bool) val {
	if c {
		p.bad = true
	}
	return val{u: u, typed: true}
}

func (p *parser) ternary(c ctx) val {
	if p.nest++; p.nest > maxNest {
		p.bad = true
		return val{}
	}
	defer func() { p.nest-- }()
	cond := p.binary(0, c)
	if p.peek() != "?" {
		return cond
	}
	p.i++
	ca, cb := ctx(false), ctx(false)
	if cond.known {
		ca, cb = c && cond.v != 0, c && cond.v == 0
	}
	a := p.ternary(ca)
	if p.peek() != ":" {
		p.bad = true
		return val{}
	}
	p.i++
	b := p.ternary(cb)
	if !a.typed || !b.typed {
		return val{}
	}
	u := a.u || b.u
	var r val
	switch {
	case !cond.known:
		if !a.known || !b.known || a.v != b.v {
			return val{u: u, typed: true}
		}
		r = a
	case cond.v != 0:
		r = a
	default:
		r = b
	}
	r.u = u
	return r
}

// Binary operators by precedence, loosest first.
var levels = map[string]int{
	"||": 0, "&&": 1, "|": 2, "^": 3, "&": 4, "==": 5, "!=": 5,
	"<": 6, ">": 6, "<=": 6, ">=": 6, "<<": 7, ">>": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9,
}

func (p *parser) binary(level int, c ctx) val {
	x := p.unary(c)
	for !p.bad {
		op := p.peek()
		l, ok := levels[op]
		if !ok || l < level {
			return x
		}
		p.i++
		yc := c
		switch {
		case op == "&&" && (!x.known || x.v == 0), op == "||" && (!x.known || x.v != 0):
			yc = false
		}
		y := p.binary(l+1, yc)
		x = p.apply(op, x, y, c)
	}
	return x
}

func (p *parser) apply(op string, x, y val, c ctx) val {
	switch op {
	case "&&":
		switch {
		case x.known && x.v == 0, y.known && y.v == 0:
			return boolVal(false)
		case x.known && y.known:
			return boolVal(true)
		}
		return val{typed: true}
	case "||":
		switch {
		case x.known && x.v != 0, y.known && y.v != 0:
			return boolVal(true)
		case x.known && y.known:
			return boolVal(false)
		}
		return val{typed: true}
	}
	if !x.known || !y.known {
		switch op {
		case "==", "!=", "<", ">", "<=", ">=":
			return val{typed: true}
		case "<<", ">>":
			return val{u: x.u, typed: x.typed}
		}
		return val{u: x.u || y.u, typed: x.typed && y.typed}
	}
	if op == "<<" || op == ">>" {
		return p.shift(op, x, y, c)
	}
	u := x.u || y.u
	a, b := x.v, y.v
	ua, ub := uint64(a), uint64(b)
	switch op {
	case "==":
		return boolVal(a == b)
	case "!=":
		return boolVal(a != b)
	case "<":
		if u {
			return boolVal(ua < ub)
		}
		return boolVal(a < b)
	case ">":
		if u {
			return boolVal(ua > ub)
		}
		return boolVal(a > b)
	case "<=":
		if u {
			return boolVal(ua <= ub)
		}
		return boolVal(a <= b)
	case ">=":
		if u {
			return boolVal(ua >= ub)
		}
		return boolVal(a >= b)
	case "|":
		return known(a|b, u)
	case "^":
		return known(a^b, u)
	case "&":
		return known(a&b, u)
	case "+": // signed overflow wraps, as in clang and gcc (which warn)
		return known(a+b, u)
	case "-":
		return known(a-b, u)
	case "*":
		return known(a*b, u)
	case "/", "%":
		if b == 0 || !u && a == math.MinInt64 && b == -1 {
			return p.fail(c, u)
		}
		switch {
		case u && op == "/":
			return known(int64(ua/ub), true)
		case u:
			return known(int64(ua%ub), true)
		case op == "/":
			return known(a/b, false)
		}
		return known(a%b, false)
	}
	p.bad = true
	return val{}
}

// shift applies << or >>: the result has the left operand's type; a count
// out of [0, 63] is left to the compiler (clang and gcc differ), a signed
// shift that overflows wraps.
func (p *parser) shift(op string, x, y val, c ctx) val {
	if !y.u && y.v < 0 || uint64(y.v) > 63 {
		return p.fail(c, x.u)
	}
	n := uint(y.v)
	if x.u {
		if op == "<<" {
			return known(int64(uint64(x.v)<<n), true)
		}
		return known(int64(uint64(x.v)>>n), true)
	}
	if op == ">>" {
		return known(x.v>>n, false)
	}
	return known(x.v<<n, false)
}

func (p *parser) unary(c ctx) val {
	if p.nest++; p.nest > maxNest {
		p.bad = true
		return val{}
	}
	defer func() { p.nest-- }()
	switch op := p.peek(); op {
	case "+", "-", "!", "~":
		p.i++
		x := p.unary(c)
		if op == "!" {
			if !x.known {
				return val{typed: true}
			}
			return boolVal(x.v == 0)
		}
		if !x.known {
			return x
		}
		switch op {
		case "-":
			x.v = -x.v
		case "~":
			x.v = ^x.v
		}
		return x
	case "(":
		p.i++
		x := p.ternary(c)
		if p.peek() != ")" {
			p.bad = true
			return val{}
		}
		p.i++
		return x
	}
	if p.i >= len(p.toks) {
		p.bad = true
		return val{}
	}
	t := p.toks[p.i]
	p.i++
	switch t.kind {
	case kValue:
		return t.val
	case kIdent:
		return known(0, false)
	case kNumber:
		v, u, ok := intLit(t.text)
		if !ok {
			p.bad = true // a floating literal or a bad suffix: the compiler rejects it
			return val{}
		}
		return known(v, u)
	case kChar:
		v, ok := charLit(t.text)
		if !ok {
			p.bad = true
			return val{}
		}
		return known(v, false)
	}
	p.bad = true
	return val{}
}

// intLit parses an integer literal of an #if expression: its bits and
// whether it is unsigned (a u suffix, or a value above intmax_t's range).
func intLit(s string) (int64, bool, bool) {
	s = strings.ReplaceAll(s, "'", "")
	k := len(s)
	for k > 0 && strings.IndexByte("uUlL", s[k-1]) >= 0 {
		k--
	}
	digits, suffix := s[:k], strings.ToLower(s[k:])
	u := false
	switch suffix {
	case "", "l", "ll":
	case "u", "ul", "lu", "ull", "llu":
		u = true
	default:
		return 0, false, false
	}
	if strings.Contains(s[k:], "lL") || strings.Contains(s[k:], "Ll") {
		return 0, false, false
	}
	base := 10
	switch {
	case len(digits) > 2 && (digits[:2] == "0x" || digits[:2] == "0X"):
		base, digits = 16, digits[2:]
	case len(digits) > 2 && (digits[:2] == "0b" || digits[:2] == "0B"):
		base, digits = 2, digits[2:]
	case len(digits) > 1 && digits[0] == '0':
		base, digits = 8, digits[1:]
	}
	if digits == "" || digits[0] == '+' || digits[0] == '-' {
		return 0, false, false
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, false, false
	}
	if n > math.MaxInt64 {
		u = true
	}
	return int64(n), u, true
}

// charLit parses a plain character literal of one ASCII character or a
// simple, octal or hexadecimal escape below 0x80; others are unknown.
func charLit(s string) (int64, bool) {
	if len(s) < 3 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return 0, false
	}
	in := s[1 : len(s)-1]
	if len(in) == 1 && in[0] != '\\' && in[0] < 0x80 {
		return int64(in[0]), true
	}
	if len(in) < 2 || in[0] != '\\' {
		return 0, false
	}
	if len(in) == 2 {
		if i := strings.IndexByte(`ntrabfv0\'"?`, in[1]); i >= 0 {
			return int64("\n\t\r\a\b\f\v\x00\\'\"?"[i]), true
		}
	}
	var n uint64
	var err error
	switch {
	case in[1] == 'x' && len(in) > 2:
		n, err = strconv.ParseUint(in[2:], 16, 64)
	case in[1] >= '0' && in[1] <= '7' && len(in) <= 4:
		n, err = strconv.ParseUint(in[1:], 8, 64)
	default:
		return 0, false
	}
	if err != nil || n >= 0x80 {
		return 0, false
	}
	return int64(n), true
}
