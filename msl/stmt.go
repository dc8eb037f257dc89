package msl

import (
	"fmt"
	"sort"
	"strings"
)

// block parses the block whose '{' is token lb.
func (p *parser) block(lb, end int) *Block {
	rb := p.matchOf(lb)
	b := &Block{Lbrace: p.t[lb].Pos}
	if rb < 0 || rb > end {
		rb = end
		b.Rbrace = p.t[end-1].End - 1
	} else {
		b.Rbrace = p.t[rb].Pos
	}
	b.Stmts = p.stmts(lb+1, rb)
	return b
}

// stmts parses the statements in tokens [i, end).
func (p *parser) stmts(i, end int) []Stmt {
	// Statements collect on a stack shared by nested blocks and are copied
	// out at the exact length, rather than growing a slice per block.
	mark := len(p.stmtStack)
	defer func() { p.stmtStack = p.stmtStack[:mark] }()
	for i < end {
		s, next, prags := p.stmt(i, end)
		for _, mu := range p.prefixes {
			p.stmtStack = append(p.stmtStack, mu)
		}
		p.prefixes = nil
		if _, loop := s.(interface{ loop() }); !loop {
			for _, pr := range prags {
				if pr.Text != "" && (pr.Macro != "" || strings.HasPrefix(p.text(pr.Pos, pr.End), "_Pragma")) {
					p.stmtStack = append(p.stmtStack, &ExprStmt{Pos: pr.Pos, End: pr.End})
				}
			}
		}
		if s != nil {
			p.stmtStack = append(p.stmtStack, s)
		}
		if next <= i {
			next = i + 1
		}
		i = next
	}
	if len(p.stmtStack) == mark {
		return nil
	}
	out := make([]Stmt, len(p.stmtStack)-mark)
	copy(out, p.stmtStack[mark:])
	clear(p.stmtStack[mark:])
	return out
}

func (*For) loop()   {}
func (*While) loop() {}
func (*Do) loop()    {}

// pragmaStmt recognises a pragma at token i: _Pragma("...") or a use of a
// macro that expands to a pragma. It returns the pragma and the index after it.
func (p *parser) pragmaStmt(i, end int) (*Pragma, int) {
	t := p.t[i]
	if t.Kind != Ident {
		return nil, i
	}
	if t.Text == "_Pragma" && p.is(i+1, end, "(") {
		j := p.after(i + 1)
		pr := &Pragma{Pos: t.Pos, End: p.t[j-1].End}
		if i+2 < end && p.t[i+2].Kind == String {
			pr.Text = unquote(p.t[i+2].Text)
		}
		return pr, j
	}
	text := p.macroPragma(t.Text)
	if text == nil {
		return nil, i
	}
	d := p.def(t.Text, t.Pos)
	j := i + 1
	if d != nil && d.FuncLike {
		if !p.is(i+1, end, "(") {
			return nil, i
		}
		j = p.after(i + 1)
	}
	return &Pragma{Pos: t.Pos, End: p.t[j-1].End, Text: *text, Macro: t.Text}, j
}

// macroPragma returns the pragma text of a macro whose body is a pragma,
// or nil.
func (p *parser) macroPragma(name string) *string {
	if s, ok := p.pragmas[name]; ok {
		return s
	}
	p.pragmas[name] = nil
	d := p.def(name, 0)
	if d == nil {
		return nil
	}
	body := d.Body
	var text string
	switch {
	case strings.HasPrefix(body, "_Pragma"):
		toks := lexExpr(body)
		if len(toks) < 3 || toks[1].Text != "(" || groupEnd(toks, 1) != len(toks)-1 {
			return nil // a pragma followed by more code, such as a loop header
		}
		text = body
		if toks[2].Kind == String && len(toks) == 4 {
			text = unquote(toks[2].Text)
		}
	case strings.HasPrefix(body, "#pragma") || strings.HasPrefix(body, "# pragma"):
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(body, "#"), " "), "pragma"))
	default:
		toks := lexExpr(body)
		if len(toks) == 1 && toks[0].Kind == Ident && toks[0].Text != name {
			if s := p.macroPragma(toks[0].Text); s != nil {
				p.pragmas[name] = s
				return s
			}
		}
		return nil
	}
	p.pragmas[name] = &text
	return &text
}

// groupEnd returns the index of the ')' matching the '(' at toks[i], or -1.
func groupEnd(toks []Token, i int) int {
	depth := 0
	for k := i; k < len(toks); k++ {
		switch toks[k].Text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// loopHeaderMacro reports whether a function-like macro's body ends with a
// loop header (`for (...)` or `while (...)`) that the statement after the
// macro use is the body of.
func (p *parser) loopHeaderMacro(name string) bool {
	return memo(&p.loopMacros, name, p.loopHeader)
}

// loopHeader computes loopHeaderMacro.
func (p *parser) loopHeader(name string) bool {
	d := p.def(name, 0)
	if d == nil {
		return false
	}
	toks := lexExpr(d.Body)
	n := len(toks)
	if n < 3 || toks[n-1].Text != ")" {
		return false
	}
	depth := 0
	for k := n - 1; k >= 0; k-- {
		switch toks[k].Text {
		case ")":
			depth++
		case "(":
			depth--
			if depth == 0 {
				return k > 0 && (toks[k-1].Text == "for" || toks[k-1].Text == "while")
			}
		}
	}
	return false
}

// directivePragmas returns the #pragma directives in the byte range [a, b).
func (p *parser) directivePragmas(a, b int) []*Pragma {
	k := sort.Search(len(p.dirs), func(k int) bool { return p.dirs[k].Pos >= a })
	var out []*Pragma
	for ; k < len(p.dirs) && p.dirs[k].Pos < b; k++ {
		d := p.dirs[k]
		name, rest := directiveName(d.Text)
		if name == "pragma" {
			out = append(out, &Pragma{Pos: d.Pos, End: d.End, Text: strings.TrimSpace(stripComments(joinLines(rest)))})
		}
	}
	return out
}

// stmt parses one statement at token i, with the pragmas before it.
func (p *parser) stmt(i, end int) (Stmt, int, []*Pragma) {
	if p.depth >= maxNesting {
		p.errorf(p.t[i].Pos, fmt.Sprintf("statements nested more than %d deep", maxNesting))
		s, next := p.recover(i, end)
		return s, next, nil
	}
	p.depth++
	defer func() { p.depth-- }()
	first := i
	var prags []*Pragma
	var prefix *MacroUse
	var prefixes []*MacroUse
	for i < end {
		if pr, next := p.pragmaStmt(i, end); pr != nil {
			prags = append(prags, pr)
			i = next
			continue
		}
		if mu, next := p.macroPrefix(i, end); mu != nil {
			if prefix == nil || mu.Unknown && !prefix.Unknown {
				prefix = mu
			}
			prefixes = append(prefixes, mu)
			i = next
			continue
		}
		break
	}
	if i >= end {
		p.prefixes = prefixes
		return nil, end, prags
	}
	s, next := p.stmt1(i, end)
	p.prefixes = prefixes
	if prefix != nil && prefix.Unknown && s != nil {
		pos, _ := s.Span()
		if p.f.unknownAt == nil {
			p.f.unknownAt = map[int]string{}
		}
		p.f.unknownAt[pos] = prefix.Name
		p.noteUnknown(prefix.Name, prefix.Pos, "before "+stmtWhat(s))
	}
	var attach *[]*Pragma
	switch s := s.(type) {
	case *For:
		attach = &s.Pragmas
	case *While:
		attach = &s.Pragmas
	case *Do:
		attach = &s.Pragmas
	}
	if attach != nil {
		from := 0
		if first > 0 {
			from = p.t[first-1].End
		}
		all := append(p.directivePragmas(from, p.t[i].Pos), prags...)
		sort.SliceStable(all, func(a, b int) bool { return all[a].Pos < all[b].Pos })
		*attach = all
	}
	return s, next, prags
}

// stmtKeywords start statements that are never declarations.
var stmtKeywords = map[string]bool{
	"return": true, "break": true, "continue": true, "goto": true, "case": true, "default": true,
	"else": true, "throw": true, "delete": true, "new": true, "using": true, "typedef": true,
	"static_assert": true, "co_return": true, "co_yield": true, "co_await": true, "this": true,
}

// stmt1 parses one statement at token i (no pragmas).
func (p *parser) stmt1(i, end int) (Stmt, int) {
	t := p.t[i]
	if t.Kind == Punct {
		switch t.Text {
		case "{":
			b := p.block(i, end)
			if m := p.matchOf(i); m < 0 || m >= end {
				return b, end // unclosed: the block takes the rest
			}
			return b, p.after(i)
		case ";":
			return &ExprStmt{Pos: t.Pos, End: t.End}, i + 1
		}
		return p.exprStmt(i, end)
	}
	if t.Kind != Ident {
		return p.exprStmt(i, end)
	}
	switch t.Text {
	case "using", "typedef":
		// A function-local alias, in scope for the sizes of the
		// declarations after it.
		if k := p.semi(i, end); k < end && p.curFunc != nil {
			if name, typ, ok := p.aliasAt(i, k); ok {
				if p.curFunc.Types == nil {
					p.curFunc.Types = map[string]string{}
				}
				p.curFunc.Types[name] = typ
			}
		}
	case "for":
		return p.forStmt(i, end)
	case "while":
		cond, rp, ok := p.parenCond(i, end)
		if !ok {
			return p.recover(i, end)
		}
		body, next, ok := p.body(i, rp+1, end)
		if !ok {
			return p.recover(i, end)
		}
		return &While{Pos: t.Pos, End: p.endOf(body), Cond: cond, Body: body}, next
	case "do":
		body, next, ok := p.body(i, i+1, end)
		if !ok || !p.is(next, end, "while") {
			p.errorf(t.Pos, "expected 'while' after do body")
			return p.recover(i, end)
		}
		cond, rp, ok := p.parenCond(next, end)
		if !ok {
			return p.recover(i, end)
		}
		d := &Do{Pos: t.Pos, Body: body, Cond: cond, End: p.t[rp].End}
		next = rp + 1
		if p.is(next, end, ";") {
			d.End = p.t[next].End
			next++
		}
		return d, next
	case "if":
		j := i
		if p.is(i+1, end, "constexpr") {
			j = i + 1
		}
		cond, rp, ok := p.parenCond(j, end)
		if !ok {
			return p.recover(i, end)
		}
		then, next, ok := p.body(i, rp+1, end)
		if !ok {
			return p.recover(i, end)
		}
		s := &If{Pos: t.Pos, Cond: cond, Then: then, End: p.endOf(then)}
		if p.is(next, end, "else") {
			els, n2, ok := p.body(next, next+1, end)
			if !ok {
				return p.recover(i, end)
			}
			s.Else, s.End, next = els, p.endOf(els), n2
		}
		return s, next
	case "switch":
		cond, rp, ok := p.parenCond(i, end)
		if !ok {
			return p.recover(i, end)
		}
		body, next, ok := p.body(i, rp+1, end)
		if !ok {
			return p.recover(i, end)
		}
		return &Switch{Pos: t.Pos, Cond: cond, Body: body, End: p.endOf(body)}, next
	case "case", "default":
		for j := i + 1; j < end; j++ {
			if p.t[j].Text == ":" {
				return &ExprStmt{Pos: t.Pos, End: p.t[j].End}, j + 1
			}
			if p.t[j].Text == ";" || p.t[j].Text == "{" {
				break
			}
		}
		return p.exprStmt(i, end)
	case "threadgroup_barrier", "simdgroup_barrier":
		if s, next, ok := p.barrier(i, i, end); ok {
			return s, next
		}
	case "metal":
		if p.is(i+1, end, "::") && i+2 < end && (p.t[i+2].Text == "threadgroup_barrier" || p.t[i+2].Text == "simdgroup_barrier") {
			if s, next, ok := p.barrier(i, i+2, end); ok {
				return s, next
			}
		}
	}
	if p.is(i+1, end, ":") && !stmtKeywords[t.Text] {
		return &ExprStmt{Pos: t.Pos, End: p.t[i+1].End}, i + 2 // a label
	}
	if p.is(i+1, end, "(") {
		// An unknown macro used as a loop header: FOR_UNROLL(...) { ... }.
		if j := p.after(i + 1); j > i+2 && p.is(j, end, "{") && p.unknownName(t.Text, t.Pos) {
			body, next, ok := p.body(i, j, end)
			if !ok {
				return p.recover(i, end)
			}
			p.noteUnknown(t.Text, t.Pos, "before a block, as a loop header")
			return &MacroUse{Pos: t.Pos, End: p.endOf(body), Name: t.Text, Hides: "loop", Body: body, Unknown: true}, next
		}
	}
	if p.is(i+1, end, "(") {
		if d := p.def(t.Text, t.Pos); d != nil && d.FuncLike {
			j := p.after(i + 1)
			stEnd := p.t[min(j, end)-1].End
			if p.is(j, end, ";") {
				stEnd = p.t[j].End
				j++
			}
			if h := p.macroHides(t.Text, 0); h != "" {
				mu := &MacroUse{Pos: t.Pos, End: stEnd, Name: t.Text, Hides: h}
				if !p.is(j-1, end, ";") && j < end && p.loopHeaderMacro(t.Text) {
					body, next, ok := p.body(i, j, end)
					if !ok {
						return p.recover(i, end)
					}
					mu.Body, mu.End = body, p.endOf(body)
					return mu, next
				}
				return mu, min(j, end)
			}
			return &ExprStmt{Pos: t.Pos, End: stEnd, Calls: p.calls(i, min(j, end))}, min(j, end)
		}
	}
	if t.Kind == Ident {
		if s, next, ok := p.objectMacroUse(i, end); ok {
			return s, next
		}
		if p.is(i+1, end, "{") && macroLike(t.Text) && p.unknownName(t.Text, t.Pos) {
			// An unknown macro used as a loop header: EACH4 { ... }.
			body, next, ok := p.body(i, i+1, end)
			if !ok {
				return p.recover(i, end)
			}
			p.noteUnknown(t.Text, t.Pos, "before a block, as a loop header")
			return &MacroUse{Pos: t.Pos, End: p.endOf(body), Name: t.Text, Hides: "loop", Body: body, Unknown: true}, next
		}
	}
	if !stmtKeywords[t.Text] && p.looksLikeDecl(i, end) {
		k := p.semi(i, end)
		if d := p.decl(i, k); d != nil {
			next := k + 1
			if k >= end {
				next = end
			}
			return d, next
		}
	}
	return p.exprStmt(i, end)
}

// objectMacroUse parses a use of an object-like macro at i whose expansion
// hides a loop or a barrier (`#define SYNC threadgroup_barrier(...)`, then
// `SYNC;`), as a MacroUse; a macro that expands to a loop header
// (`#define EACH4 for (int i = 0; i < 4; ++i)`) takes the statement after
// it as its body. Any other use is left to the caller.
func (p *parser) objectMacroUse(i, end int) (Stmt, int, bool) {
	t := p.t[i]
	d := p.def(t.Text, t.Pos)
	if d == nil || d.FuncLike {
		return nil, 0, false
	}
	h := p.macroHides(t.Text, 0)
	if h == "" {
		return nil, 0, false
	}
	mu := &MacroUse{Pos: t.Pos, End: t.End, Name: t.Text, Hides: h}
	switch {
	case p.is(i+1, end, ";"):
		mu.End = p.t[i+1].End
		return mu, i + 2, true
	case i+1 < end && p.loopHeaderMacro(t.Text):
		body, next, ok := p.body(i, i+1, end)
		if !ok {
			s, next := p.recover(i, end)
			return s, next, true
		}
		mu.Body, mu.End = body, p.endOf(body)
		return mu, next, true
	}
	return nil, 0, false
}

// recover skips the rest of the enclosing block after a syntax error.
func (p *parser) recover(i, end int) (Stmt, int) {
	return &ExprStmt{Pos: p.t[i].Pos, End: p.t[end-1].End}, end
}

// endOf returns a statement's end offset.
func (p *parser) endOf(s Stmt) int {
	_, e := s.Span()
	return e
}

// parenCond parses `kw ( cond )` with the keyword at i and returns the
// condition span and the index of ')'.
func (p *parser) parenCond(i, end int) (Span, int, bool) {
	if !p.is(i+1, end, "(") || p.matchOf(i+1) < 0 || p.matchOf(i+1) >= end {
		p.errorf(p.t[i].Pos, "expected '(' after "+p.t[i].Text)
		return Span{}, 0, false
	}
	rp := p.matchOf(i + 1)
	return p.span(i+2, rp), rp, true
}

// span returns the byte range of tokens [a, b), or an empty span at the
// start of token b when there are none.
func (p *parser) span(a, b int) Span {
	if a >= b {
		if b >= len(p.t) {
			e := p.t[len(p.t)-1].End
			return Span{e, e}
		}
		return Span{p.t[b].Pos, p.t[b].Pos}
	}
	return Span{p.t[a].Pos, p.t[b-1].End}
}

// body parses the statement that is the body of the construct at kw,
// starting at token i.
func (p *parser) body(kw, i, end int) (Stmt, int, bool) {
	if i >= end {
		p.errorf(p.t[kw].Pos, "missing body after "+p.t[kw].Text)
		return nil, end, false
	}
	s, next, _ := p.stmt(i, end)
	if s == nil {
		p.errorf(p.t[kw].Pos, "missing body after "+p.t[kw].Text)
		return nil, end, false
	}
	return s, next, true
}

func (p *parser) forStmt(i, end int) (Stmt, int) {
	t := p.t[i]
	if !p.is(i+1, end, "(") || p.matchOf(i+1) < 0 || p.matchOf(i+1) >= end {
		p.errorf(t.Pos, "expected '(' after for")
		return p.recover(i, end)
	}
	lp, rp := i+1, p.matchOf(i+1)
	s := &For{Pos: t.Pos, Lparen: p.t[lp].Pos, Rparen: p.t[rp].Pos}
	var semis []int
	colon := false
	for j := lp + 1; j < rp; j++ {
		switch p.t[j].Text {
		case "(", "[", "{":
			j = p.after(j) - 1
		case ";":
			semis = append(semis, j)
		case ":":
			colon = true
		}
	}
	if len(semis) == 0 && !colon {
		semis = append(semis, -1) // neither a counted nor a range-based loop
	}
	switch len(semis) {
	case 2:
		s.Init = p.span(lp+1, semis[0])
		s.Cond = p.span(semis[0]+1, semis[1])
		s.Post = p.span(semis[1]+1, rp)
	case 0:
		// A range-based for: the whole header is Init.
		s.Init = p.span(lp+1, rp)
		s.Cond = Span{p.t[rp].Pos, p.t[rp].Pos}
		s.Post = s.Cond
	default:
		p.errorf(p.t[lp].Pos, "malformed for header")
		return p.recover(i, end)
	}
	body, next, ok := p.body(i, rp+1, end)
	if !ok {
		return p.recover(i, end)
	}
	s.Body = body
	s.End = p.endOf(body)
	return s, next
}

// barrier parses a barrier call whose name is at token n.
func (p *parser) barrier(i, n, end int) (Stmt, int, bool) {
	if !p.is(n+1, end, "(") || p.matchOf(n+1) < 0 || p.matchOf(n+1) >= end {
		return nil, 0, false
	}
	rp := p.matchOf(n + 1)
	if !p.is(rp+1, end, ";") {
		return nil, 0, false
	}
	return &Barrier{Pos: p.t[i].Pos, End: p.t[rp+1].End, Name: p.t[n].Text, Args: p.span(n+2, rp)}, rp + 2, true
}

// exprStmt parses any other statement, through its ';'.
func (p *parser) exprStmt(i, end int) (Stmt, int) {
	k := p.semi(i, end)
	s := &ExprStmt{Pos: p.t[i].Pos, Calls: p.calls(i, k)}
	if k < end {
		s.End = p.t[k].End
		return s, k + 1
	}
	s.End = p.t[end-1].End
	return s, end
}

// callKeywords are identifiers followed by '(' that are not calls.
var callKeywords = map[string]bool{
	"sizeof": true, "alignof": true, "decltype": true, "if": true, "for": true, "while": true,
	"switch": true, "return": true, "alignas": true, "noexcept": true, "_Pragma": true,
	"static_assert": true, "catch": true,
}

// calls lists the identifiers in tokens [i, k) that are called: followed by
// '(' or by template arguments and '('.
func (p *parser) calls(i, k int) []string {
	var out []string
	for j := i; j < k; j++ {
		t := p.t[j]
		if t.Kind != Ident || callKeywords[t.Text] {
			continue
		}
		if p.is(j+1, k, "(") || p.templateCall(j, k) > 0 {
			out = append(out, t.Text)
		}
	}
	return out
}

// templateCall returns the index of '(' when ident j is followed by template
// arguments and a call, else 0.
func (p *parser) templateCall(j, k int) int {
	if !p.is(j+1, k, "<") {
		return 0
	}
	depth := 0
	for m := j + 1; m < k && m < j+24; m++ {
		switch p.t[m].Text {
		case "<":
			depth++
		case ">", ">>":
			depth--
			if p.t[m].Text == ">>" {
				depth--
			}
			if depth <= 0 {
				if depth == 0 && p.is(m+1, k, "(") {
					return m + 1
				}
				return 0
			}
		case ";", "{", "}", "&&", "||":
			return 0
		case "(", "[":
			m = p.after(m) - 1
		}
	}
	return 0
}

// macroHides reports what a function-like macro's expansion hides: "barrier"
// when it (or a macro it uses) contains a barrier call, else "loop" when it
// contains a loop, else "". A hidden barrier wins because anything reasoning
// about synchronisation must treat the statement as a barrier.
func (p *parser) macroHides(name string, depth int) string {
	if h, ok := p.hides[name]; ok {
		return h
	}
	if depth > maxDepth {
		return ""
	}
	p.hides[name] = "" // recursion guard
	d := p.def(name, 0)
	if d == nil {
		return ""
	}
	h := ""
	for _, t := range lexExpr(d.Body) {
		if t.Kind != Ident {
			continue
		}
		switch t.Text {
		case "threadgroup_barrier", "simdgroup_barrier":
			h = "barrier"
		case "for", "while", "do":
			if h == "" {
				h = "loop"
			}
		default:
			if t.Text != name && p.def(t.Text, 0) != nil {
				switch p.macroHides(t.Text, depth+1) {
				case "barrier":
					h = "barrier"
				case "loop":
					if h == "" {
						h = "loop"
					}
				}
			}
		}
	}
	p.hides[name] = h
	return h
}

// stmtStarters are words that begin a statement and can never continue a
// declaration or an expression, so a name directly before one is a macro.
var stmtStarters = map[string]bool{
	"for": true, "while": true, "do": true, "if": true, "switch": true, "return": true,
	"break": true, "continue": true, "goto": true, "threadgroup_barrier": true, "simdgroup_barrier": true,
	"_Pragma": true,
}

// startsStmt reports whether token k begins a statement that nothing
// before it on the same statement could belong to.
func (p *parser) startsStmt(k, end int) bool {
	if k >= end || p.t[k].Kind != Ident {
		return false
	}
	if stmtStarters[p.t[k].Text] {
		return true
	}
	if p.t[k].Text == "metal" && p.is(k+1, end, "::") && k+2 < end && stmtStarters[p.t[k+2].Text] {
		return true
	}
	// A macro known to be a pragma or to hide a loop or barrier.
	return p.macroPragma(p.t[k].Text) != nil || p.macroHides(p.t[k].Text, 0) != ""
}

// macroPrefix recognises at i a macro used on its own before a statement,
// with no ';' of its own, such as MLX_MTL_PRAGMA_UNROLL before a for loop
// when the header that defines it was not read: a name (or a name and its
// parenthesised arguments) directly followed by a word that begins a
// statement, or written alone on its line (in capitals) before the next.
// It returns the use and the index after it, or nil. A known macro that
// hides nothing is returned too, so that it never swallows the statement.
func (p *parser) macroPrefix(i, end int) (*MacroUse, int) {
	t := p.t[i]
	if t.Kind != Ident || stmtKeywords[t.Text] || stmtStarters[t.Text] || declQualifiers[t.Text] ||
		addrSpaces[t.Text] != NoSpace || specifiers[t.Text] || t.Text == "else" || t.Text == "metal" {
		return nil, i
	}
	next := i + 1
	if p.is(i+1, end, "(") {
		if m := p.matchOf(i + 1); m > i && m < end {
			next = m + 1
		} else {
			return nil, i
		}
	}
	if next >= end {
		return nil, i
	}
	starts := p.startsStmt(next, end)
	alone := !starts && macroLike(t.Text) && p.t[next].Kind == Ident && p.line(next) > p.line(next-1) && p.line(i) > p.prevLine(i)
	if !starts && !alone {
		return nil, i
	}
	d := p.def(t.Text, t.Pos)
	unknown := d == nil && p.unknownName(t.Text, t.Pos)
	if d == nil && !unknown || d != nil && alone {
		// Alone on its line, MACRO then a statement on the next line, is
		// read as a macro only when nothing says what the name is.
		return nil, i
	}
	if d != nil && d.FuncLike != (next > i+1) {
		return nil, i // an object-like macro before parentheses, or a function-like one without: a value
	}
	mu := &MacroUse{Pos: t.Pos, End: p.t[next-1].End, Name: t.Text, Unknown: unknown}
	if d != nil {
		mu.Hides = p.macroHides(t.Text, 0)
	}
	return mu, next
}

// line returns the line of token k.
func (p *parser) line(k int) int { return p.f.TokFile.Line(p.f.TokFile.Pos(p.t[k].Pos)) }

// prevLine returns the line of the token before k, or 0.
func (p *parser) prevLine(k int) int {
	if k == 0 {
		return 0
	}
	return p.line(k - 1)
}

// macroLike reports whether name is written like a macro: capitals,
// digits and underscores, at least two characters.
func macroLike(name string) bool {
	if len(name) < 2 {
		return false
	}
	letter := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			letter = true
		case c == '_' || isDigit(c):
		default:
			return false
		}
	}
	return letter
}

// unknownName reports whether name, used as a statement at offset at, is
// defined nowhere the front end sees: not a macro (of the file, its
// headers or -D), keyword, type or function it knows.
func (p *parser) unknownName(name string, at int) bool {
	if p.def(name, at) != nil || stmtKeywords[name] || stmtStarters[name] || declQualifiers[name] || specifiers[name] {
		return false
	}
	if _, ok := scalarSizes[name]; ok {
		return false
	}
	if _, _, ok := vectorLayout(name); ok {
		return false
	}
	if _, ok := p.f.Types[name]; ok {
		return false
	}
	if p.f.structNamed(name) != nil || callKeywords[name] {
		return false
	}
	if p.funcNames[name] {
		return false
	}
	for _, in := range p.f.Includes {
		if in.File != nil && in.File.funcs[name] != nil {
			return false
		}
	}
	return true
}

// An unknownUse is the first use of a macro defined nowhere the front end
// sees, and how many uses there were.
type unknownUse struct {
	name  string
	pos   int
	what  string
	count int
}

// noteUnknown records a use of the unknown macro name at pos.
func (p *parser) noteUnknown(name string, pos int, what string) {
	for _, u := range p.unknown {
		if u.name == name {
			u.count++
			return
		}
	}
	p.unknown = append(p.unknown, &unknownUse{name: name, pos: pos, what: what, count: 1})
}

// reportUnknown turns the unknown macro uses into warnings, one per name.
func (p *parser) reportUnknown() {
	var unread []string
	for _, in := range p.f.Includes {
		if in.File == nil && !in.Metal && !in.System {
			unread = append(unread, "#include "+in.String())
		}
	}
	for _, u := range p.unknown {
		uses := ""
		if u.count > 1 {
			uses = fmt.Sprintf(" (%d uses; the first %s)", u.count, u.what)
		} else {
			uses = " " + u.what
		}
		hint := "pass -I DIR for the header that defines it, or -D " + u.name + "=..."
		if len(unread) > 0 {
			hint = strings.Join(unread, " and ") + " not read: " + hint
		}
		p.f.Warnings.Add(p.f.Position(u.pos), fmt.Sprintf("unknown macro %s%s: sites there are skips; %s", u.name, uses, hint))
	}
}

// stmtWhat names a statement's kind for messages.
func stmtWhat(s Stmt) string {
	switch s.(type) {
	case *For:
		return "a for loop"
	case *While:
		return "a while loop"
	case *Do:
		return "a do loop"
	case *If:
		return "an if statement"
	case *Barrier:
		return "a barrier"
	case *Block:
		return "a block"
	case *Decl:
		return "a declaration"
	case *Switch:
		return "a switch"
	}
	return "a statement"
}
