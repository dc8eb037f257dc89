package msl

import (
	"strconv"
	"strings"

	"metalab/internal/directive"
)

// An Env is the context in which Eval and Layout resolve names: the file's
// macros, constants, enumerators and structs, the local constants of Func,
// command-line defines and bound template parameters.
type Env struct {
	File         *File
	Func         *Func             // optional; its const locals and parameters are in scope
	Defines      map[string]string // -D NAME=VALUE; these win over the file's #defines
	TemplateArgs map[string]string // template parameter name → argument text
	At           int               // optional byte offset: locals declared after it are out of scope (0: whole function)

	st *Struct // the struct whose members are in scope (a dependent member's initialiser), or nil

	budget *int // name resolutions left in the current Eval or Layout call
}

// evalBudget bounds the name resolutions of one Eval or Layout call, so that
// chains of constants defined in terms of several others fail quickly
// instead of taking exponential time.
const evalBudget = 20000

// withBudget returns e when it carries a resolution budget, else a copy of
// e that does.
func (e *Env) withBudget() *Env {
	if e.budget != nil {
		return e
	}
	b := &budgeted{env: *e, budget: evalBudget}
	b.env.budget = &b.budget
	return &b.env
}

// A budgeted is an Env copy and the budget it carries, allocated together.
type budgeted struct {
	env    Env
	budget int
}

// spend uses one unit of the budget and reports whether any was left.
func (e *Env) spend() bool {
	if e.budget == nil {
		return true
	}
	*e.budget--
	return *e.budget >= 0
}

// Eval evaluates an integer constant expression. It reports false when any
// part of the expression is not a known integer constant: it never guesses.
// Arithmetic is done in int64; casts are treated as value-preserving.
func (e *Env) Eval(expr string) (int64, bool) {
	if isDigits(expr) {
		return parseIntLit(expr)
	}
	fr := &evalFrame{}
	env := e
	if e.budget == nil {
		fr.env = *e
		fr.budget = evalBudget
		fr.env.budget = &fr.budget
		env = &fr.env
	}
	fr.ev = evaluator{env: env, active: fr.active[:0]}
	return fr.ev.evalText(expr, 0)
}

// An evalFrame is what one Eval call needs, allocated at once: the budgeted
// copy of the Env, its budget and the evaluator with room for the names
// being expanded.
type evalFrame struct {
	env    Env
	budget int
	ev     evaluator
	active [8]string
}

// isDigits reports whether s is a non-empty run of decimal digits, a
// literal that evaluates without lexing.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isPlainIdent reports whether s is a single identifier that names a
// constant rather than starting a special form.
func isPlainIdent(s string) bool {
	if !directive.IsIdent(s) {
		return false
	}
	switch s {
	case "sizeof", "defined", "static_cast", "reinterpret_cast", "const_cast":
		return false
	}
	return true
}

// maxDepth bounds macro and constant expansion, so that recursive macros
// fail instead of looping.
const maxDepth = 64

// ident resolves one identifier (possibly qualified, a::b) to a value.
func (e *Env) ident(name string, depth int, ev *evaluator) (int64, bool) {
	if ev.isActive(name) || depth > maxDepth || !e.spend() {
		return 0, false
	}
	ev.push(name)
	defer ev.pop()
	switch name {
	case "true":
		return 1, true
	case "false":
		return 0, true
	}
	if v, ok := e.Defines[name]; ok {
		if v == "" {
			v = "1"
		}
		return ev.evalText(v, depth+1)
	}
	// The file's own unconditional #define wins over -D, as with the
	// compiler (the lexer warns); one in an undecided #if branch may not
	// be in effect, so -D wins over it.
	var fd *Define
	if e.File != nil {
		fd = e.File.lookupDefine(name, e.At)
	}
	if fd == nil || fd.uncertain {
		if v, ok := e.File.cmdDefine(name); ok {
			if v == "" {
				v = "1"
			}
			return ev.evalText(v, depth+1)
		}
	}
	if fd != nil {
		if fd.FuncLike {
			return 0, false
		}
		return ev.evalText(fd.Body, depth+1)
	}
	if v, ok := e.TemplateArgs[name]; ok {
		return ev.evalText(v, depth+1)
	}
	if e.Func != nil && e.File != nil {
		for _, p := range e.Func.Params {
			if p.Name == name {
				return 0, false
			}
		}
		if e.Func.Body != nil {
			if init, found := e.local(name); found {
				if init == "" {
					return 0, false
				}
				return ev.evalText(init, depth+1)
			}
		}
	}
	if e.File == nil {
		return 0, false
	}
	if e.st != nil {
		// Another static member of the same struct: blockM in
		// tgp_mem_size = BM * blockM.
		for _, d := range e.st.Fields {
			for _, n := range d.Names {
				if n.Name == name {
					init := constInitIn(e.File.structOwner(e.st), d, n)
					if init == "" {
						return 0, false
					}
					return ev.evalText(init, depth+1)
				}
			}
		}
	}
	if init, found := e.global(name); found {
		if init == "" {
			return 0, false
		}
		return ev.evalText(init, depth+1)
	}
	if v, ok := e.File.enumValue(name); ok {
		return v, true
	}
	if i := strings.LastIndex(name, "::"); i > 0 && !strings.HasPrefix(name, "metal::") {
		// A static constant member of a struct, dependent or not:
		// K::BM, gemm_kernel::tgp_mem_size_a, Params<4>::N.
		if st, targs := e.structInst(name[:i], depth+1); st != nil {
			for _, d := range st.Fields {
				for _, n := range d.Names {
					if n.Name != name[i+2:] {
						continue
					}
					init := constInitIn(e.File.structOwner(st), d, n)
					if init == "" {
						return 0, false
					}
					sub := e.inStruct(st, targs)
					sev := evaluator{env: sub, active: ev.active}
					return sev.evalText(init, depth+1)
				}
			}
		}
	}
	if i := strings.LastIndex(name, "::"); i >= 0 {
		short := name[i+2:]
		if v, ok := e.File.enumValue(short); ok && !strings.HasPrefix(name, "metal::") {
			return v, true
		}
		if strings.HasPrefix(name, "metal::") {
			return e.ident(short, depth+1, ev)
		}
	}
	return 0, false
}

// local finds the initialiser text of a local declaration of name in Func
// before At. found is true when a local of that name exists; init is empty
// when it is not a constant.
func (e *Env) local(name string) (init string, found bool) {
	var cands []string
	Walk(e.Func.Body, func(s Stmt) bool {
		d, ok := s.(*Decl)
		if !ok || (e.At > 0 && d.Pos >= e.At) {
			return true
		}
		for _, n := range d.Names {
			if n.Name == name {
				cands = append(cands, e.constInit(d, n))
			}
		}
		return true
	})
	if len(cands) == 0 {
		return "", false
	}
	if e.At > 0 {
		return cands[len(cands)-1], true
	}
	for _, c := range cands[1:] {
		if c != cands[0] {
			return "", true
		}
	}
	return cands[0], true
}

// global finds the initialiser of a file-scope constant.
func (e *Env) global(name string) (init string, found bool) {
	r := e.File.globalRef(name)
	if r.d == nil {
		return "", false
	}
	return constInitIn(r.file, r.d, r.n), true
}

// constInit returns the initialiser text of declarator n when d declares a
// constant scalar, else "".
func (e *Env) constInit(d *Decl, n *Declarator) string {
	return constInitIn(e.File, d, n)
}

// constInitIn is constInit for a declaration in file f.
func constInitIn(f *File, d *Decl, n *Declarator) string {
	if len(n.Dims) > 0 || n.Init.End <= n.Init.Pos {
		return ""
	}
	isConst := d.AddrSpace == Constant
	for _, q := range d.Qualifiers {
		if q == "const" || q == "constexpr" {
			isConst = true
		}
	}
	if !isConst {
		return ""
	}
	init := strings.TrimSpace(f.text(n.Init.Pos, n.Init.End))
	if strings.HasPrefix(init, "{") && strings.HasSuffix(init, "}") {
		init = strings.TrimSpace(init[1 : len(init)-1])
	}
	if init == "" {
		return ""
	}
	return init
}

// lookupDefine returns the #define of name in effect at offset at (the last
// one before it, nil when an #undef follows it; with at == 0, the last one in
// the file, #undefs aside, as files often #undef their helper macros at the
// end).
func (f *File) lookupDefine(name string, at int) *Define {
	var ds []*Define
	if f.defs != nil {
		ds = f.defs[name]
	} else {
		for _, d := range f.Defines {
			if d.Name == name {
				ds = append(ds, d)
			}
		}
	}
	i, undefined := directive.InEffect(len(ds), func(i int) int { return ds[i].Pos }, func(i int) bool { return ds[i].undef }, at)
	switch {
	case undefined:
		return nil
	case i >= 0:
		return ds[i]
	}
	// Not defined here (before at): a header sees what its includer
	// defined before the #include, and an expansion what the file
	// defined before the macro use.
	if d := f.outer[name]; d != nil {
		return d
	}
	if f.parent != nil {
		return f.parent.lookupDefine(name, f.parentAt)
	}
	return nil
}

// An evaluator evaluates the integer constant expressions of code (#if
// conditions are package directive's) with pluggable name resolution.
type evaluator struct {
	env    *Env // when set, resolves names and sizes, and ident and sizeof are unused
	ident  func(name string, depth int, ev *evaluator) (int64, bool)
	sizeof func(typ string) (int64, bool)
	active []string // names being expanded, innermost last
}

// isActive reports whether name is being expanded, so that a recursive
// definition fails instead of looping.
func (ev *evaluator) isActive(name string) bool {
	for _, a := range ev.active {
		if a == name {
			return true
		}
	}
	return false
}

// push marks name as being expanded; pop ends the innermost expansion.
func (ev *evaluator) push(name string) { ev.active = append(ev.active, name) }

func (ev *evaluator) pop() { ev.active = ev.active[:len(ev.active)-1] }

// resolve evaluates the name of a constant.
func (ev *evaluator) resolve(name string, depth int) (int64, bool) {
	if ev.env != nil {
		return ev.env.ident(name, depth, ev)
	}
	if ev.ident == nil {
		return 0, false
	}
	return ev.ident(name, depth, ev)
}

// sizeOf returns the size of a type; has is false when the evaluator
// cannot size types at all.
func (ev *evaluator) sizeOf(typ string) (size int64, ok, has bool) {
	if ev.env != nil {
		s, _, ok := ev.env.layout(typ, 0)
		return s, ok, true
	}
	if ev.sizeof == nil {
		return 0, false, false
	}
	s, ok := ev.sizeof(typ)
	return s, ok, true
}

// lexExpr lexes an expression string without reporting errors, dropping
// comments.
func lexExpr(s string) []Token {
	l := &lexer{str: s, quiet: true, toks: make([]Token, 0, len(s)/2+1)}
	l.run()
	out := l.toks[:0]
	for _, t := range l.toks {
		if t.Kind != Comment {
			out = append(out, t)
		}
	}
	return out
}

func (ev *evaluator) evalText(s string, depth int) (int64, bool) {
	if depth > maxDepth {
		return 0, false
	}
	// The commonest expressions, a literal or a name, need no lexing.
	switch {
	case isDigits(s):
		return parseIntLit(s)
	case isPlainIdent(s):
		return ev.resolve(s, depth)
	}
	p := &exprParser{ev: ev, toks: lexExpr(s), depth: depth}
	if len(p.toks) == 0 {
		return 0, false
	}
	v := p.cond()
	if p.bad || p.i != len(p.toks) || !v.ok {
		return 0, false
	}
	return v.v, true
}

// A val is a possibly unknown value; unknown values still parse, so that
// `0 && X` is 0 even when X is unknown.
type val struct {
	v  int64
	ok bool
}

type exprParser struct {
	ev    *evaluator
	toks  []Token
	i     int
	depth int
	nest  int  // recursion depth of cond and unary, bounded by maxNesting
	bad   bool // syntax error
}

func (p *exprParser) peek() string {
	if p.i < len(p.toks) {
		t := p.toks[p.i]
		if t.Kind == Punct || t.Kind == Ident {
			return t.Text
		}
		return "\x00"
	}
	return ""
}

func (p *exprParser) accept(s string) bool {
	if p.peek() == s {
		p.i++
		return true
	}
	return false
}

func (p *exprParser) expect(s string) {
	if !p.accept(s) {
		p.bad = true
	}
}

func (p *exprParser) cond() val {
	if p.nest++; p.nest > maxNesting {
		p.bad = true
		return val{}
	}
	defer func() { p.nest-- }()
	c := p.binary(0)
	if !p.accept("?") {
		return c
	}
	a := p.cond()
	p.expect(":")
	b := p.cond()
	if !c.ok {
		if a.ok && b.ok && a.v == b.v {
			return a
		}
		return val{}
	}
	if c.v != 0 {
		return a
	}
	return b
}

// binary operator precedence levels, loosest first.
var binLevels = [][]string{
	{"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">="},
	{"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
}

// binLevel maps each binary operator to its index in binLevels.
var binLevel = func() map[string]int {
	m := map[string]int{}
	for i, ops := range binLevels {
		for _, o := range ops {
			m[o] = i
		}
	}
	return m
}()

// binary parses operators of binLevels[level] and tighter, left to right,
// by precedence climbing: the same tree as one recursive call per level,
// without descending through every level for each operand.
func (p *exprParser) binary(level int) val {
	x := p.unary()
	for {
		if p.bad {
			return x
		}
		op := p.peek()
		l, ok := binLevel[op]
		if !ok || l < level {
			return x
		}
		p.i++
		y := p.binary(l + 1)
		x = apply(op, x, y)
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func apply(op string, x, y val) val {
	switch op {
	case "&&":
		if x.ok && x.v == 0 || y.ok && y.v == 0 {
			return val{0, true}
		}
	case "||":
		if x.ok && x.v != 0 || y.ok && y.v != 0 {
			return val{1, true}
		}
	}
	if !x.ok || !y.ok {
		return val{}
	}
	a, b := x.v, y.v
	var r int64
	switch op {
	case "&&":
		r = b2i(a != 0 && b != 0)
	case "||":
		r = b2i(a != 0 || b != 0)
	case "|":
		r = a | b
	case "^":
		r = a ^ b
	case "&":
		r = a & b
	case "==":
		r = b2i(a == b)
	case "!=":
		r = b2i(a != b)
	case "<":
		r = b2i(a < b)
	case ">":
		r = b2i(a > b)
	case "<=":
		r = b2i(a <= b)
	case ">=":
		r = b2i(a >= b)
	case "<<":
		if b < 0 || b > 63 {
			return val{}
		}
		r = a << uint(b)
	case ">>":
		if b < 0 || b > 63 {
			return val{}
		}
		r = a >> uint(b)
	case "+":
		r = a + b
	case "-":
		r = a - b
	case "*":
		r = a * b
	case "/", "%":
		if b == 0 || (a == -1<<63 && b == -1) {
			return val{}
		}
		if op == "/" {
			r = a / b
		} else {
			r = a % b
		}
	}
	return val{r, true}
}

func (p *exprParser) unary() val {
	if p.nest++; p.nest > maxNesting {
		p.bad = true
		return val{}
	}
	defer func() { p.nest-- }()
	switch p.peek() {
	case "+", "-", "!", "~":
		op := p.peek()
		p.i++
		x := p.unary()
		if !x.ok {
			return x
		}
		switch op {
		case "-":
			x.v = -x.v
		case "!":
			x.v = b2i(x.v == 0)
		case "~":
			x.v = ^x.v
		}
		return x
	case "(":
		if n := p.castLen(p.i + 1); n > 0 && p.i+1+n < len(p.toks) && p.toks[p.i+1+n].Text == ")" {
			p.i += n + 2
			return p.unary()
		}
	}
	return p.primary()
}

// scalarTypeWords are the words a value-preserving cast may consist of.
var scalarTypeWords = map[string]bool{
	"int": true, "uint": true, "short": true, "ushort": true, "long": true, "ulong": true,
	"char": true, "uchar": true, "unsigned": true, "signed": true, "const": true, "bool": true,
	"size_t": true, "ptrdiff_t": true, "int8_t": true, "uint8_t": true, "int16_t": true,
	"uint16_t": true, "int32_t": true, "uint32_t": true, "int64_t": true, "uint64_t": true,
}

// castLen returns how many tokens from i form a scalar type name, or 0.
func (p *exprParser) castLen(i int) int {
	n := 0
	for i+n < len(p.toks) {
		t := p.toks[i+n]
		if t.Kind == Ident && scalarTypeWords[t.Text] {
			n++
			continue
		}
		if t.Kind == Ident && t.Text == "metal" && i+n+1 < len(p.toks) && p.toks[i+n+1].Text == "::" {
			n += 2
			continue
		}
		break
	}
	return n
}

func (p *exprParser) primary() val {
	if p.i >= len(p.toks) {
		p.bad = true
		return val{}
	}
	t := p.toks[p.i]
	switch t.Kind {
	case Int:
		p.i++
		v, ok := parseIntLit(t.Text)
		return val{v, ok}
	case Char:
		p.i++
		v, ok := parseCharLit(t.Text)
		return val{v, ok}
	case Float, String:
		p.i++
		return val{}
	case Punct:
		if t.Text == "(" {
			p.i++
			v := p.cond()
			p.expect(")")
			return v
		}
		p.bad = true
		return val{}
	case Ident:
	default:
		p.bad = true
		return val{}
	}
	// Functional casts: uint(x), metal::uint(x).
	if n := p.castLen(p.i); n > 0 && p.i+n < len(p.toks) && p.toks[p.i+n].Text == "(" {
		p.i += n + 1
		v := p.cond()
		p.expect(")")
		return v
	}
	switch t.Text {
	case "sizeof":
		p.i++
		typ, ok := p.group()
		if !ok {
			return val{}
		}
		v, ok, has := p.ev.sizeOf(typ)
		if !has {
			return val{}
		}
		return val{v, ok}
	case "static_cast", "reinterpret_cast", "const_cast":
		p.i++
		if !p.skipAngles() {
			p.bad = true
			return val{}
		}
		p.expect("(")
		v := p.cond()
		p.expect(")")
		return v
	}
	// A possibly qualified name.
	name := t.Text
	p.i++
	for p.peek() == "::" && p.i+1 < len(p.toks) && p.toks[p.i+1].Kind == Ident {
		name += "::" + p.toks[p.i+1].Text
		p.i += 2
	}
	if p.peek() == "(" {
		// A call: never a constant we know.
		p.group()
		return val{}
	}
	v, ok := p.ev.resolve(name, p.depth)
	return val{v, ok}
}

// group consumes a parenthesised group and returns its inner text.
func (p *exprParser) group() (string, bool) {
	if !p.accept("(") {
		p.bad = true
		return "", false
	}
	start := p.i
	depth := 1
	for p.i < len(p.toks) {
		switch p.toks[p.i].Text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				inner := joinTokens(p.toks[start:p.i])
				p.i++
				return inner, true
			}
		}
		p.i++
	}
	p.bad = true
	return "", false
}

func (p *exprParser) skipAngles() bool {
	if !p.accept("<") {
		return false
	}
	depth := 1
	for p.i < len(p.toks) {
		switch p.toks[p.i].Text {
		case "<":
			depth++
		case ">":
			depth--
		case ">>":
			depth -= 2
		}
		p.i++
		if depth <= 0 {
			return depth == 0
		}
	}
	return false
}

// parseIntLit parses a C integer literal with optional u/U/l/L suffixes,
// hex, octal or binary base and digit separators.
func parseIntLit(s string) (int64, bool) {
	s = strings.TrimRight(s, "uUlLzZ")
	if strings.Contains(s, "'") {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] != '\'' {
				b.WriteByte(s[i])
			}
		}
		s = b.String()
	}
	base := 10
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) > 2 && (s[:2] == "0b" || s[:2] == "0B"):
		base, s = 2, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	u, err := strconv.ParseUint(s, base, 64)
	if err != nil || u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// parseCharLit parses a plain one-character literal such as 'a' or '\n'.
func parseCharLit(s string) (int64, bool) {
	if len(s) < 3 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return 0, false
	}
	in := s[1 : len(s)-1]
	if len(in) == 1 && in[0] != '\\' {
		return int64(in[0]), true
	}
	esc := map[string]int64{`\n`: '\n', `\t`: '\t', `\r`: '\r', `\0`: 0, `\\`: '\\', `\'`: '\'', `\"`: '"'}
	v, ok := esc[in]
	return v, ok
}

// joinTokens joins token texts, separating two word-like tokens by a space,
// so that equal token sequences give equal text regardless of spacing.
func joinTokens(toks []Token) string {
	switch len(toks) {
	case 0:
		return ""
	case 1:
		return toks[0].Text
	}
	n := 0
	for i, t := range toks {
		n += len(t.Text)
		if i > 0 && wordLike(toks[i-1]) && wordLike(t) {
			n++
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i, t := range toks {
		if i > 0 && wordLike(toks[i-1]) && wordLike(t) {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

// joinTokenPtrs is joinTokens for a slice of token pointers.
func joinTokenPtrs(toks []*Token) string {
	switch len(toks) {
	case 0:
		return ""
	case 1:
		return toks[0].Text
	}
	n := 0
	for i, t := range toks {
		n += len(t.Text)
		if i > 0 && wordLike(*toks[i-1]) && wordLike(*t) {
			n++
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i, t := range toks {
		if i > 0 && wordLike(*toks[i-1]) && wordLike(*t) {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

func wordLike(t Token) bool {
	return t.Kind == Ident || t.Kind == Int || t.Kind == Float || t.Kind == String || t.Kind == Char
}

// cmdDefine returns the -D value of name given to f's parse (an expansion
// or header shares its includer's).
func (f *File) cmdDefine(name string) (string, bool) {
	if f == nil {
		return "", false
	}
	v, ok := f.CmdDefines[name]
	return v, ok
}
