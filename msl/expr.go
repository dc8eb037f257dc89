package msl

import (
	"fmt"
	"strings"
)

// This file parses the expressions of function bodies into small trees, so
// that the loop facts (def/use, memory accesses, invariance, thread-space
// evaluation) can reason about them. The statement parser keeps
// expressions as byte ranges; ParseExpr turns such a range into an Expr
// whose nodes still carry byte offsets into File.Src, so that operators
// can edit exactly the text they reason about.

// An Expr is a parsed expression. Every node has a byte range in the
// source.
type Expr interface {
	Node
	expr()
}

// A NameExpr is a name, possibly qualified (metal::max, mem_flags::mem_none).
type NameExpr struct {
	Pos, End int
	Name     string

	sc *Scope // the scope v was resolved in
	v  *Var

	constDone bool // constVal holds the name's constant value, if constOK
	constVal  int64
	constOK   bool
}

// A LitExpr is a numeric, character or string literal.
type LitExpr struct {
	Pos, End int
	Kind     Kind // Int, Float, Char or String
	Text     string

	parsed bool // val and cls hold the integer literal's value
	val    int64
	ok     bool
}

// A ParenExpr is a parenthesised expression.
type ParenExpr struct {
	Pos, End int
	X        Expr
}

// A UnaryExpr is a prefix (- + ! ~ * & ++ --) or postfix (++ --) operation.
type UnaryExpr struct {
	Pos, End int
	Op       string
	X        Expr
	Postfix  bool
}

// A BinaryExpr is an infix operation, assignments and the comma operator
// included.
type BinaryExpr struct {
	Pos, End int
	OpPos    int
	Op       string
	X, Y     Expr
}

// A CondExpr is c ? x : y.
type CondExpr struct {
	Pos, End int
	C, X, Y  Expr
}

// An IndexExpr is x[i].
type IndexExpr struct {
	Pos, End       int
	X, I           Expr
	Lbrack, Rbrack int
}

// A MemberExpr is x.name or x->name.
type MemberExpr struct {
	Pos, End int
	X        Expr
	Arrow    bool
	Name     string
	NamePos  int
}

// A CallExpr is f(args), f<targs>(args), or a functional cast T(x).
type CallExpr struct {
	Pos, End       int
	Fun            Expr   // an *NameExpr for named calls
	TArgs          string // template argument text without the angle brackets, or ""
	Args           []Expr
	Lparen, Rparen int
}

// A CastExpr is a C-style cast (T)x.
type CastExpr struct {
	Pos, End int
	Type     string // type text, whitespace-normalised
	X        Expr
}

// An OpaqueExpr is a construct the facts do not model (braced initialisers,
// lambdas, sizeof of a type); anything reasoning about it must assume the
// worst.
type OpaqueExpr struct {
	Pos, End int
}

func (e *NameExpr) Span() (int, int)   { return e.Pos, e.End }
func (e *LitExpr) Span() (int, int)    { return e.Pos, e.End }
func (e *ParenExpr) Span() (int, int)  { return e.Pos, e.End }
func (e *UnaryExpr) Span() (int, int)  { return e.Pos, e.End }
func (e *BinaryExpr) Span() (int, int) { return e.Pos, e.End }
func (e *CondExpr) Span() (int, int)   { return e.Pos, e.End }
func (e *IndexExpr) Span() (int, int)  { return e.Pos, e.End }
func (e *MemberExpr) Span() (int, int) { return e.Pos, e.End }
func (e *CallExpr) Span() (int, int)   { return e.Pos, e.End }
func (e *CastExpr) Span() (int, int)   { return e.Pos, e.End }
func (e *OpaqueExpr) Span() (int, int) { return e.Pos, e.End }

func (*NameExpr) expr()   {}
func (*LitExpr) expr()    {}
func (*ParenExpr) expr()  {}
func (*UnaryExpr) expr()  {}
func (*BinaryExpr) expr() {}
func (*CondExpr) expr()   {}
func (*IndexExpr) expr()  {}
func (*MemberExpr) expr() {}
func (*CallExpr) expr()   {}
func (*CastExpr) expr()   {}
func (*OpaqueExpr) expr() {}

// SigTokens returns the significant tokens of f inside [pos, end): no
// comments, directives or skipped branches.
func (f *File) SigTokens(pos, end int) []Token {
	i := searchTokens(f.Tokens, pos)
	var out []Token
	for ; i < len(f.Tokens) && f.Tokens[i].End <= end; i++ {
		switch f.Tokens[i].Kind {
		case Comment, Directive, Skipped:
			continue
		}
		out = append(out, f.Tokens[i])
	}
	return out
}

// ParseExpr parses the expression in the byte range [pos, end) of f. An
// empty range yields a nil Expr and no error. A range that is not one
// complete expression is an error; callers must then assume the worst.
func (f *File) ParseExpr(pos, end int) (Expr, error) {
	toks := f.SigTokens(pos, end)
	if len(toks) == 0 {
		return nil, nil
	}
	p := &exprParse{f: f, toks: toks}
	e := p.comma()
	if p.err == nil && p.i < len(toks) {
		p.fail(fmt.Sprintf("unexpected %q", toks[p.i].Text))
	}
	if p.err != nil {
		return nil, p.err
	}
	return e, nil
}

// An exprParse is the state of one ParseExpr call.
type exprParse struct {
	f    *File
	toks []Token
	i    int
	err  error

	local     map[string]bool // localTypes of the function around the expression, found when first needed
	localDone bool
}

// isLocalType reports whether name is a type template parameter or a
// body alias of the function the expression is in: (device const T *) p
// is a cast in a template over T.
func (p *exprParse) isLocalType(name string) bool {
	if !p.localDone {
		p.localDone = true
		if len(p.toks) > 0 {
			p.local = p.f.localTypes(p.f.funcAt(p.toks[0].Pos))
		}
	}
	return p.local[name]
}

func (p *exprParse) fail(msg string) {
	if p.err != nil {
		return
	}
	off := 0
	if p.i < len(p.toks) {
		off = p.toks[p.i].Pos
	} else if len(p.toks) > 0 {
		off = p.toks[len(p.toks)-1].End
	}
	p.err = &Error{Pos: p.f.Position(off), Msg: "expression: " + msg}
}

func (p *exprParse) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i].Text
	}
	return ""
}

func (p *exprParse) peekAt(k int) Token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return Token{}
}

// end returns the end offset of the last consumed token.
func (p *exprParse) end() int {
	if p.i == 0 {
		return 0
	}
	return p.toks[p.i-1].End
}

// bad returns an opaque node covering the rest and records an error.
func (p *exprParse) bad(msg string) Expr {
	p.fail(msg)
	pos := 0
	if p.i < len(p.toks) {
		pos = p.toks[p.i].Pos
	}
	return &OpaqueExpr{Pos: pos, End: pos}
}

func (p *exprParse) comma() Expr {
	x := p.assign()
	for p.err == nil && p.peek() == "," {
		op := p.toks[p.i]
		p.i++
		y := p.assign()
		x = &BinaryExpr{Pos: startOf(x), End: p.end(), OpPos: op.Pos, Op: ",", X: x, Y: y}
	}
	return x
}

// assignOps are the assignment operators.
var assignOps = map[string]bool{
	"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true,
	"<<=": true, ">>=": true, "&=": true, "|=": true, "^=": true,
}

// IsAssignOp reports whether op is an assignment operator (= or a compound
// assignment).
func IsAssignOp(op string) bool { return assignOps[op] }

func (p *exprParse) assign() Expr {
	x := p.cond()
	if p.err != nil {
		return x
	}
	if op := p.peek(); assignOps[op] && p.toks[p.i].Kind == Punct {
		t := p.toks[p.i]
		p.i++
		y := p.assign()
		return &BinaryExpr{Pos: startOf(x), End: p.end(), OpPos: t.Pos, Op: op, X: x, Y: y}
	}
	return x
}

func (p *exprParse) cond() Expr {
	c := p.binary(0)
	if p.err != nil || p.peek() != "?" {
		return c
	}
	p.i++
	x := p.comma()
	if p.peek() != ":" {
		return p.bad("expected ':' in conditional expression")
	}
	p.i++
	y := p.assign()
	return &CondExpr{Pos: startOf(c), End: p.end(), C: c, X: x, Y: y}
}

// binaryLevels lists the infix operators from the loosest binding to the
// tightest.
var binaryLevels = [][]string{
	{"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", "<=", ">", ">="},
	{"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
}

func (p *exprParse) binary(level int) Expr {
	if level == len(binaryLevels) {
		return p.unary()
	}
	x := p.binary(level + 1)
	for p.err == nil && p.i < len(p.toks) && p.toks[p.i].Kind == Punct && contains(binaryLevels[level], p.peek()) {
		t := p.toks[p.i]
		p.i++
		y := p.binary(level + 1)
		x = &BinaryExpr{Pos: startOf(x), End: p.end(), OpPos: t.Pos, Op: t.Text, X: x, Y: y}
	}
	return x
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *exprParse) unary() Expr {
	if p.i >= len(p.toks) {
		return p.bad("expected an expression")
	}
	t := p.toks[p.i]
	if t.Kind == Punct {
		switch t.Text {
		case "-", "+", "!", "~", "*", "&", "++", "--":
			p.i++
			x := p.unary()
			return &UnaryExpr{Pos: t.Pos, End: p.end(), Op: t.Text, X: x}
		case "(":
			if n := p.castLen(); n > 0 {
				typ := joinTokens(p.toks[p.i+1 : p.i+n-1])
				p.i += n
				x := p.unary()
				return &CastExpr{Pos: t.Pos, End: p.end(), Type: typ, X: x}
			}
		}
	}
	if t.Kind == Ident && (t.Text == "sizeof" || t.Text == "alignof") {
		p.i++
		if p.peek() == "(" {
			close := p.closeOf(p.i)
			if close < 0 {
				return p.bad("unbalanced parentheses")
			}
			p.i = close + 1
			return &OpaqueExpr{Pos: t.Pos, End: p.end()}
		}
		x := p.unary()
		return &OpaqueExpr{Pos: t.Pos, End: endOf(x)}
	}
	return p.postfix(p.primary())
}

// closeOf returns the index of the bracket closing the one at i, or -1.
func (p *exprParse) closeOf(i int) int {
	depth := 0
	for k := i; k < len(p.toks); k++ {
		if p.toks[k].Kind != Punct {
			continue
		}
		switch p.toks[k].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// castLen returns the number of tokens of a C-style cast prefix "(T)" at
// the current '(' when its contents are a type, else 0.
func (p *exprParse) castLen() int {
	close := p.closeOf(p.i)
	if close < 0 || close == p.i+1 || close+1 >= len(p.toks) {
		return 0
	}
	if !p.f.isTypeTokens(p.toks[p.i+1:close], p.isLocalType) {
		return 0
	}
	// What follows must start an operand, not continue an expression:
	// (a) - b is a subtraction when a is a variable, but a is a type here.
	nt := p.toks[close+1]
	switch {
	case nt.Kind == Ident, nt.Kind == Int, nt.Kind == Float, nt.Kind == Char, nt.Kind == String:
	case nt.Kind == Punct && contains([]string{"(", "-", "+", "!", "~", "*", "&", "++", "--"}, nt.Text):
	default:
		return 0
	}
	return close - p.i + 1
}

// templateCallees are names that take template arguments before a call.
var templateCallees = map[string]bool{
	"as_type": true, "static_cast": true, "reinterpret_cast": true, "const_cast": true,
	"vec": true, "array": true, "numeric_limits": true,
}

func (p *exprParse) primary() Expr {
	t := p.toks[p.i]
	switch t.Kind {
	case Int, Float, Char:
		p.i++
		return &LitExpr{Pos: t.Pos, End: t.End, Kind: t.Kind, Text: t.Text}
	case String:
		p.i++
		for p.i < len(p.toks) && p.toks[p.i].Kind == String {
			p.i++
		}
		return &LitExpr{Pos: t.Pos, End: p.end(), Kind: String, Text: p.f.Text(t.Pos, p.end())}
	case Ident:
		return p.name()
	case Punct:
		switch t.Text {
		case "(":
			p.i++
			x := p.comma()
			if p.peek() != ")" {
				return p.bad("expected ')'")
			}
			p.i++
			return &ParenExpr{Pos: t.Pos, End: p.end(), X: x}
		case "{", "[":
			close := p.closeOf(p.i)
			if close < 0 {
				return p.bad("unbalanced brackets")
			}
			p.i = close + 1
			if t.Text == "[" && p.peek() == "(" { // a lambda
				for p.i < len(p.toks) && p.peek() != "{" {
					p.i++
				}
				if c := p.closeOf(p.i); c >= 0 {
					p.i = c + 1
				}
			}
			return &OpaqueExpr{Pos: t.Pos, End: p.end()}
		case "::":
			p.i++
			if p.i < len(p.toks) && p.toks[p.i].Kind == Ident {
				x := p.name()
				if id, ok := x.(*NameExpr); ok {
					id.Pos = t.Pos
					id.Name = "::" + id.Name
				}
				return x
			}
		}
	}
	return p.bad(fmt.Sprintf("unexpected %q", t.Text))
}

// name parses an identifier, possibly qualified, with template arguments
// when a call follows them.
func (p *exprParse) name() Expr {
	t := p.toks[p.i]
	id := &NameExpr{Pos: t.Pos, End: t.End, Name: t.Text}
	p.i++
	for p.peek() == "::" && p.peekAt(1).Kind == Ident {
		id.Name += "::" + p.peekAt(1).Text
		id.End = p.peekAt(1).End
		p.i += 2
	}
	if p.peek() == "<" && (templateCallees[lastPart(id.Name)] || p.f.isTemplateFunc(lastPart(id.Name))) {
		if close := p.angleClose(p.i); close > 0 && close+1 < len(p.toks) && p.toks[close+1].Text == "(" {
			targs := joinTokens(p.toks[p.i+1 : close])
			p.i = close + 1
			c := p.call(id)
			if call, ok := c.(*CallExpr); ok {
				call.TArgs = targs
			}
			return c
		}
	}
	return id
}

// lastPart returns the name after the last "::".
func lastPart(name string) string {
	if i := strings.LastIndex(name, "::"); i >= 0 {
		return name[i+2:]
	}
	return name
}

// angleClose returns the index of the '>' closing the '<' at i, or -1.
func (p *exprParse) angleClose(i int) int {
	depth := 0
	for k := i; k < len(p.toks); k++ {
		switch p.toks[k].Text {
		case "<":
			depth++
		case ">":
			depth--
		case ">>":
			depth -= 2
		case "(", "[":
			c := p.closeOf(k)
			if c < 0 {
				return -1
			}
			k = c
			continue
		case ";", "{", "}", "&&", "||":
			return -1
		}
		if depth == 0 {
			return k
		}
		if depth < 0 {
			return -1
		}
	}
	return -1
}

// call parses the argument list of a call of fun at the current '('.
func (p *exprParse) call(fun Expr) Expr {
	lp := p.toks[p.i]
	p.i++
	c := &CallExpr{Pos: startOf(fun), Fun: fun, Lparen: lp.Pos}
	if p.peek() != ")" {
		for {
			c.Args = append(c.Args, p.assign())
			if p.err != nil {
				return c
			}
			if p.peek() == "," {
				p.i++
				continue
			}
			break
		}
	}
	if p.peek() != ")" {
		return p.bad("expected ')' after arguments")
	}
	c.Rparen = p.toks[p.i].Pos
	p.i++
	c.End = p.end()
	return c
}

func (p *exprParse) postfix(x Expr) Expr {
	for p.err == nil && p.i < len(p.toks) {
		t := p.toks[p.i]
		if t.Kind != Punct {
			return x
		}
		switch t.Text {
		case "(":
			x = p.call(x)
		case "[":
			p.i++
			i := p.comma()
			if p.peek() != "]" {
				return p.bad("expected ']'")
			}
			rb := p.toks[p.i].Pos
			p.i++
			x = &IndexExpr{Pos: startOf(x), End: p.end(), X: x, I: i, Lbrack: t.Pos, Rbrack: rb}
		case ".", "->":
			p.i++
			if p.i >= len(p.toks) || p.toks[p.i].Kind != Ident {
				return p.bad("expected a member name")
			}
			n := p.toks[p.i]
			p.i++
			x = &MemberExpr{Pos: startOf(x), End: n.End, X: x, Arrow: t.Text == "->", Name: n.Text, NamePos: n.Pos}
		case "++", "--":
			p.i++
			x = &UnaryExpr{Pos: startOf(x), End: t.End, Op: t.Text, X: x, Postfix: true}
		default:
			return x
		}
	}
	return x
}

func startOf(e Expr) int {
	if e == nil {
		return 0
	}
	p, _ := e.Span()
	return p
}

func endOf(e Expr) int {
	if e == nil {
		return 0
	}
	_, end := e.Span()
	return end
}

// isTemplateFunc reports whether the file defines a function template
// named name.
func (f *File) isTemplateFunc(name string) bool {
	for _, fn := range f.Funcs {
		if fn.Name == name && fn.Template != nil {
			return true
		}
	}
	return false
}

// builtinTypeWords are words that make up builtin type names.
var builtinTypeWords = map[string]bool{
	"unsigned": true, "signed": true, "long": true, "short": true, "int": true, "char": true,
	"void": true, "auto": true, "const": true, "volatile": true,
	"device": true, "constant": true, "threadgroup": true, "thread": true,
}

// IsTypeName reports whether name names a type: a Metal scalar, vector or
// matrix type, a struct, typedef or template type parameter of the file.
func (f *File) IsTypeName(name string) bool {
	name = lastPart(name)
	if _, ok := scalarSizes[name]; ok {
		return true
	}
	if builtinTypeWords[name] {
		return true
	}
	if _, _, ok := vectorLayout(name); ok {
		return true
	}
	switch name {
	case "float", "half", "bfloat", "bool", "size_t", "ptrdiff_t", "uintptr_t", "intptr_t":
		return true
	}
	if _, ok := f.Types[name]; ok {
		return true
	}
	if f.structNamed(name) != nil {
		return true
	}
	return false
}

// isTypeTokens reports whether toks spell a type: type words, names of
// types, pointer and reference marks and template arguments.
func (f *File) isTypeTokens(toks []Token, local func(string) bool) bool {
	sawType := false
	depth := 0
	for _, t := range toks {
		switch {
		case depth > 0:
			switch t.Text {
			case "<":
				depth++
			case ">":
				depth--
			case ">>":
				depth -= 2
			}
		case t.Text == "<" && sawType:
			depth++
		case t.Text == "*" || t.Text == "&" || t.Text == "::":
			if !sawType && t.Text != "::" {
				return false
			}
		case t.Kind == Ident && (f.IsTypeName(t.Text) || t.Text == "metal" || t.Text == "typename" || t.Text == "struct" || !sawType && local != nil && local(t.Text)):
			if local != nil && !f.IsTypeName(t.Text) && local(t.Text) {
				sawType = true
				continue
			}
			if !builtinTypeWords[t.Text] || t.Text == "int" || t.Text == "char" || t.Text == "long" || t.Text == "short" || t.Text == "unsigned" || t.Text == "signed" || t.Text == "void" {
				sawType = true
			}
		default:
			return false
		}
	}
	return sawType && depth == 0
}

// InspectExpr calls visit for e and every expression nested in it, in
// preorder; when visit returns false the children of that node are
// skipped.
func InspectExpr(e Expr, visit func(Expr) bool) {
	if e == nil || !visit(e) {
		return
	}
	switch e := e.(type) {
	case *ParenExpr:
		InspectExpr(e.X, visit)
	case *UnaryExpr:
		InspectExpr(e.X, visit)
	case *BinaryExpr:
		InspectExpr(e.X, visit)
		InspectExpr(e.Y, visit)
	case *CondExpr:
		InspectExpr(e.C, visit)
		InspectExpr(e.X, visit)
		InspectExpr(e.Y, visit)
	case *IndexExpr:
		InspectExpr(e.X, visit)
		InspectExpr(e.I, visit)
	case *MemberExpr:
		InspectExpr(e.X, visit)
	case *CallExpr:
		InspectExpr(e.Fun, visit)
		for _, a := range e.Args {
			InspectExpr(a, visit)
		}
	case *CastExpr:
		InspectExpr(e.X, visit)
	}
}

// Unparen strips parentheses around e.
func Unparen(e Expr) Expr {
	for {
		p, ok := e.(*ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}
