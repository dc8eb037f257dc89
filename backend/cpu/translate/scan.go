package translate

import (
	"strconv"
	"strings"

	"metalab/msl"
)

// fnKind says what a function definition is.
type fnKind int

const (
	helperFn fnKind = iota
	kernelFn
	stageFn // vertex or fragment function: dropped, the cpu backend runs compute only
)

// A fn is one function definition found in the token stream. Indices are
// significant-token indices.
type fn struct {
	name, ns, owner string
	kind            fnKind
	start, nameK    int
	lparen, rparen  int
	lbrace, rbrace  int
	attrs           []attr
	tmpl            *tmplHeader
	params          []*param
	slots           []*slot
	callees         []string   // names called in the body, first occurrence order
	aliases         []string   // namespace-scope aliases of its threadgroup slots
	bufs            []bufParam // buffer parameters, set by wrapper for kernels
}

// qualName is the function's name as seen from the global namespace.
func (f *fn) qualName() string {
	if f.ns == "" {
		return f.name
	}
	return f.ns + "::" + f.name
}

// A tmplHeader is a template parameter list without default arguments.
type tmplHeader struct {
	params []string // each parameter's declaration, e.g. "typename T", "int N"
	names  []string // each parameter's name
}

func (h *tmplHeader) String() string { return "template<" + strings.Join(h.params, ", ") + ">" }

// An attr is one attribute of a [[...]] list.
type attr struct {
	name string
	args []string
}

// A param is one parameter of a function.
type param struct {
	name        string
	first, last int    // significant-token range, inclusive
	space       string // "device", "constant", "threadgroup", "thread" or ""
	typ         string // C++ type text after address-space rewriting
	attrs       []attr
}

// A slot is one static threadgroup declaration.
type slot struct {
	id        int
	fn        *fn
	name      string
	typ, dims string
	k         int
}

// An inst is an explicit template instantiation with a host_name.
type inst struct {
	host, fn string
	args     []string
	k        int
}

// match returns the index of the token closing the bracket at k, or -1.
// Pairs are computed once, per bracket kind, so scanning stays linear even
// on badly unbalanced input.
func (t *tr) match(k int) int {
	if t.pairs == nil {
		t.pairs = make([]int, len(t.sig))
		stacks := map[string][]int{}
		closes := map[string]string{")": "(", "]": "[", "}": "{"}
		for j := range t.sig {
			t.pairs[j] = -1
			switch tx := t.text(j); tx {
			case "(", "[", "{":
				stacks[tx] = append(stacks[tx], j)
			case ")", "]", "}":
				st := stacks[closes[tx]]
				if len(st) > 0 {
					t.pairs[st[len(st)-1]] = j
					stacks[closes[tx]] = st[:len(st)-1]
				}
			}
		}
	}
	if k < 0 || k >= len(t.pairs) {
		return -1
	}
	return t.pairs[k]
}

// matchAngle returns the index of the '>' closing the '<' at k, or -1.
func (t *tr) matchAngle(k int) int {
	depth := 0
	for j := k; j < len(t.sig); j++ {
		switch t.text(j) {
		case "<":
			depth++
		case ">":
			depth--
		case ">>":
			depth -= 2
		case "(", "[":
			if m := t.match(j); m > 0 {
				j = m
			}
		case ";", "{", "}":
			return -1
		}
		if depth <= 0 {
			if depth < 0 {
				return -1
			}
			return j
		}
	}
	return -1
}

// skipStmt returns the index after the ';' that ends the statement at k.
func (t *tr) skipStmt(k, b int) int {
	for j := k; j < b; j++ {
		switch t.text(j) {
		case "(", "[", "{":
			if m := t.match(j); m > 0 {
				j = m
			}
		case ";":
			return j + 1
		}
	}
	return b
}

// scanScope finds the declarations of a namespace or struct body.
func (t *tr) scanScope(a, b int, ns, owner string) {
	for k := a; k < b; {
		n := t.scanDecl(k, b, ns, owner)
		if n <= k {
			n = k + 1
		}
		k = n
	}
}

// scanDecl scans the declaration at k (a namespace, template, struct,
// function or variable) and returns the index after it.
func (t *tr) scanDecl(k, b int, ns, owner string) int {
	switch t.text(k) {
	case ";":
		return k + 1
	case "namespace":
		j := k + 1
		var name strings.Builder
		for j < b && t.text(j) != "{" && t.text(j) != ";" && t.text(j) != "=" {
			name.WriteString(t.text(j))
			j++
		}
		if t.text(j) != "{" {
			return t.skipStmt(k, b)
		}
		e := t.match(j)
		if e < 0 {
			t.errorf(j, "unbalanced braces")
			return b
		}
		sub := name.String()
		if ns != "" && sub != "" {
			sub = ns + "::" + sub
		} else if sub == "" {
			sub = ns
		}
		t.scanScope(j+1, e, sub, owner)
		return e + 1
	case "using", "typedef", "static_assert":
		return t.skipStmt(k, b)
	case "template":
		if t.text(k+1) == "<" {
			e := t.matchAngle(k + 1)
			if e < 0 {
				t.errorf(k, "malformed template header")
				return t.skipStmt(k, b)
			}
			h := t.templateHeader(k+1, e)
			return t.scanItem(k, e+1, b, ns, owner, h)
		}
		return t.scanInstantiation(k, b)
	}
	return t.scanItem(k, k, b, ns, owner, nil)
}

// templateHeader parses the template parameter list between the angle
// brackets at a and e.
func (t *tr) templateHeader(a, e int) *tmplHeader {
	h := &tmplHeader{}
	for _, r := range t.splitCommas(a+1, e) {
		end := r[1]
		for j := r[0]; j <= r[1]; j++ {
			if t.text(j) == "=" {
				end = j - 1
				break
			}
		}
		var words []string
		name := ""
		for j := r[0]; j <= end; j++ {
			words = append(words, t.rewriteTypeTok(j))
			if t.kind(j) == msl.Ident {
				name = t.text(j)
			}
		}
		h.params = append(h.params, joinWords(words))
		h.names = append(h.names, name)
	}
	return h
}

// splitCommas splits [a, e) at commas outside brackets and angle brackets,
// returning inclusive ranges of non-empty parts.
func (t *tr) splitCommas(a, e int) [][2]int {
	var out [][2]int
	start := a
	angle := 0
	for j := a; j < e; j++ {
		switch t.text(j) {
		case "(", "[", "{":
			if m := t.match(j); m > 0 && m < e {
				j = m
			}
		case "<":
			angle++
		case ">":
			angle--
		case ">>":
			angle -= 2
		case ",":
			if angle <= 0 {
				if j > start {
					out = append(out, [2]int{start, j - 1})
				}
				start = j + 1
			}
		}
	}
	if e > start {
		out = append(out, [2]int{start, e - 1})
	}
	return out
}

// scanItem scans one declaration or definition starting at k (start is the
// template header's first token when there is one).
func (t *tr) scanItem(start, k, b int, ns, owner string, h *tmplHeader) int {
	switch t.text(k) {
	case "struct", "class", "union":
		for j := k + 1; j < b; j++ {
			switch t.text(j) {
			case ";":
				return j + 1
			case "(":
				j = b // a function returning a struct type
			case "{":
				e := t.match(j)
				if e < 0 {
					t.errorf(j, "unbalanced braces")
					return b
				}
				name := ""
				for q := k + 1; q < j; q++ {
					if t.kind(q) == msl.Ident && name == "" {
						name = t.text(q)
					}
				}
				t.structFields(j+1, e)
				t.scanScope(j+1, e, ns, name)
				return t.skipStmt(e+1, b)
			}
		}
	case "enum":
		return t.skipStmt(k, b)
	}
	firstParen, sawEq := -1, false
	for j := k; j < b; j++ {
		switch t.text(j) {
		case "(":
			prev := t.text(j - 1)
			if firstParen < 0 && !sawEq && j > k && (t.kind(j-1) == msl.Ident || prev == ">") &&
				prev != "decltype" && prev != "alignas" && prev != "sizeof" && prev != "alignof" && prev != "__attribute__" {
				firstParen = j
			}
			if m := t.match(j); m > 0 {
				j = m
			}
		case "[":
			if m := t.match(j); m > 0 {
				j = m
			}
		case "=":
			sawEq = true
		case "{":
			e := t.match(j)
			if e < 0 {
				t.errorf(j, "unbalanced braces")
				return b
			}
			if firstParen >= 0 && !sawEq {
				t.addFunc(start, k, firstParen, j, e, ns, owner, h)
				return e + 1
			}
			j = e
		case ";":
			if firstParen < 0 || sawEq {
				t.globalDecl(k, j, owner)
			}
			return j + 1
		case "}":
			return j + 1
		}
	}
	return b
}

// structFields records the field names of a struct body [a, e).
func (t *tr) structFields(a, e int) {
	for j := a; j < e; j++ {
		switch t.text(j) {
		case "(", "[", "{":
			if m := t.match(j); m > 0 && m < e {
				if t.text(j) == "[" && t.kind(j-1) == msl.Ident {
					t.fields[t.text(j-1)] = true
				}
				j = m
			}
			continue
		}
		if t.kind(j) == msl.Ident {
			switch t.text(j + 1) {
			case ";", ",", "=", ":":
				t.fields[t.text(j)] = true
			}
		}
	}
}

// addFunc records a function definition and scans its body.
func (t *tr) addFunc(start, k, lparen, lbrace, rbrace int, ns, owner string, h *tmplHeader) {
	nameK := lparen - 1
	if t.text(nameK) == ">" {
		// explicit specialisation f<...>(: walk back to the name.
		depth := 0
		for nameK >= k {
			switch t.text(nameK) {
			case ">":
				depth++
			case "<":
				depth--
			}
			nameK--
			if depth == 0 {
				break
			}
		}
	}
	f := &fn{name: t.text(nameK), ns: ns, owner: owner, start: start, nameK: nameK, lparen: lparen,
		rparen: t.match(lparen), lbrace: lbrace, rbrace: rbrace, tmpl: h}
	for j := start; j < lbrace; j++ {
		if j > lparen && j < f.rparen {
			continue
		}
		switch {
		case t.kind(j) == msl.Attribute:
			f.attrs = append(f.attrs, parseAttrs(t.text(j))...)
		case j < nameK && (t.text(j) == "kernel"):
			f.kind = kernelFn
		case j < nameK && (t.text(j) == "vertex" || t.text(j) == "fragment"):
			f.kind = stageFn
		}
	}
	for _, a := range f.attrs {
		switch a.name {
		case "kernel":
			f.kind = kernelFn
		case "vertex", "fragment":
			f.kind = stageFn
		}
	}
	if f.kind == stageFn {
		t.replaceRange(start, rbrace, "")
		return
	}
	for _, r := range t.splitCommas(lparen+1, f.rparen) {
		f.params = append(f.params, t.parseParam(r[0], r[1]))
	}
	t.scanBody(f)
	t.funcs = append(t.funcs, f)
}

// parseParam parses the parameter in [a, e].
func (t *tr) parseParam(a, e int) *param {
	p := &param{first: a, last: e}
	var words []string
	nameAt := -1
	for j := e; j >= a; j-- {
		if t.kind(j) == msl.Ident {
			nameAt = j
			break
		}
		if t.kind(j) != msl.Attribute && t.text(j) != "]" {
			break
		}
	}
	for j := a; j <= e; j++ {
		switch {
		case t.kind(j) == msl.Attribute:
			p.attrs = append(p.attrs, parseAttrs(t.text(j))...)
			continue
		case j == nameAt:
			p.name = t.text(j)
			continue
		}
		switch t.text(j) {
		case "device", "constant", "threadgroup", "thread":
			if p.space == "" {
				p.space = t.text(j)
			}
		}
		if w := t.rewriteTypeTok(j); w != "" {
			words = append(words, w)
		}
	}
	p.typ = joinWords(words)
	return p
}

// rewriteTypeTok is the text of token k inside a type after the address
// space rules: device/thread/threadgroup vanish, constant becomes const
// unless const or constexpr is adjacent.
func (t *tr) rewriteTypeTok(k int) string {
	switch t.text(k) {
	case "device", "thread", "threadgroup":
		return ""
	case "constant":
		if adjacentConst(t.text(k-1), t.text(k+1)) {
			return ""
		}
		return "const"
	}
	if r := t.rep[t.sig[k]]; r != nil {
		return *r
	}
	if half, ok := literal(t.toks[t.sig[k]].Token); ok {
		return half
	}
	return t.text(k)
}

// adjacentConst reports whether a constant qualifier between prev and next
// is already expressed by a neighbouring const or constexpr.
func adjacentConst(prev, next string) bool {
	return prev == "const" || prev == "constexpr" || next == "const" || next == "constexpr"
}

// joinWords joins type words with single spaces, none around "::".
func joinWords(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 && w != "::" && words[i-1] != "::" && w != "," {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// parseAttrs parses a [[...]] token into its attributes.
func parseAttrs(text string) []attr {
	inner := strings.TrimSuffix(strings.TrimPrefix(text, "[["), "]]")
	var out []attr
	for _, part := range splitTop(inner) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a := attr{name: part}
		if i := strings.IndexByte(part, '('); i >= 0 && strings.HasSuffix(part, ")") {
			a.name = strings.TrimSpace(part[:i])
			for _, arg := range splitTop(part[i+1 : len(part)-1]) {
				a.args = append(a.args, strings.TrimSpace(arg))
			}
		}
		if i := strings.LastIndex(a.name, "::"); i >= 0 {
			a.name = a.name[i+2:]
		}
		out = append(out, a)
	}
	return out
}

// splitTop splits s at commas outside parentheses and quotes.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '(' || c == '[' || c == '<':
			depth++
		case c == ')' || c == ']' || c == '>':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// scanBody finds threadgroup storage declarations and calls in f's body.
func (t *tr) scanBody(f *fn) {
	seen := map[string]bool{}
	for j := f.lbrace + 1; j < f.rbrace; j++ {
		if t.isTG(j) {
			switch t.text(j - 1) {
			case "{", "}", ";", ":", "else":
				if e := t.tgDecl(f, j); e > j {
					j = e
					continue
				}
			default:
				if !t.pointerFollows(j) {
					t.errorf(j, "threadgroup declaration not supported here by the cpu translator")
				}
			}
		}
		if t.kind(j) == msl.Ident && (t.text(j+1) == "(" || t.text(j+1) == "<") && t.text(j-1) != "." && t.text(j-1) != "->" {
			if !seen[t.text(j)] {
				seen[t.text(j)] = true
				f.callees = append(f.callees, t.text(j))
			}
		}
	}
}

// isTG reports whether token k is the threadgroup qualifier or an
// object-like macro defined as exactly that.
func (t *tr) isTG(k int) bool {
	return t.kind(k) == msl.Ident && (t.text(k) == "threadgroup" || t.tgMacros[t.text(k)])
}

// pointerFollows reports whether the threadgroup qualifier at k qualifies a
// pointer or reference type (a cast, a pointer variable, a template
// argument), not storage.
func (t *tr) pointerFollows(k int) bool {
	for j := k + 1; j < len(t.sig); j++ {
		switch t.text(j) {
		case "*", "&", "&&":
			return true
		case ";", ",", ")", "=", "{", "}", ">", "[":
			return false
		}
	}
	return false
}

// tgDecl rewrites the threadgroup declaration at k when it declares storage
// (not a pointer or reference) and returns the index of its ';'; it returns
// k when the declaration is not storage.
func (t *tr) tgDecl(f *fn, k int) int {
	end := t.skipStmt(k, f.rbrace) - 1
	if t.text(end) != ";" {
		return k
	}
	// The first declarator name is the identifier before the first of
	// [ = , ; outside angle brackets.
	angle, p := 0, -1
	for j := k + 1; j <= end && p < 0; j++ {
		switch t.text(j) {
		case "<":
			angle++
		case ">":
			angle--
		case ">>":
			angle -= 2
		case "[", "=", ",", ";":
			if angle <= 0 {
				p = j
			}
		case "*", "&", "&&":
			if angle <= 0 {
				return k
			}
		}
	}
	if p < 0 || t.kind(p-1) != msl.Ident || p-1 <= k+0 {
		t.errorf(k, "cannot parse threadgroup declaration")
		return end
	}
	var words []string
	for j := k + 1; j < p-1; j++ {
		if w := t.rewriteTypeTok(j); w != "" {
			words = append(words, w)
		}
	}
	typ := joinWords(words)
	if f.owner != "" {
		t.errorf(k, "threadgroup declaration in member function %s::%s is not supported", f.owner, f.name)
		return end
	}
	var out []string
	j := p - 1
	for j < end {
		if t.kind(j) != msl.Ident {
			t.errorf(j, "cannot parse threadgroup declaration")
			return end
		}
		s := &slot{id: len(t.slots), fn: f, name: t.text(j), typ: typ, k: j}
		j++
		for t.text(j) == "[" {
			m := t.match(j)
			if m < 0 || m > end {
				t.errorf(j, "unbalanced brackets")
				return end
			}
			var dw []string
			for q := j + 1; q < m; q++ {
				dw = append(dw, t.rewriteTypeTok(q))
			}
			s.dims += "[" + joinWords(dw) + "]"
			j = m + 1
		}
		if t.text(j) == "=" {
			q := j + 1
			for ; q < end && t.text(q) != ","; q++ {
				if t.text(q) == "{" {
					if m := t.match(q); m > 0 && m < end {
						for r := q + 1; r < m; r++ {
							if !zeroToken(t.text(r)) {
								t.errorf(r, "threadgroup variable %s has a non-zero initialiser", s.name)
								return end
							}
						}
						q = m
						continue
					}
				}
				if !zeroToken(t.text(q)) {
					t.errorf(q, "threadgroup variable %s has a non-zero initialiser", s.name)
					return end
				}
			}
			j = q
		}
		t.slots = append(t.slots, s)
		f.slots = append(f.slots, s)
		alias := "mtl_tg" + strconv.Itoa(s.id) + "_t"
		use := alias
		// A #line before each alias makes compiler errors in it (a size
		// naming a local constant, say) point at the declaration.
		dtk := t.toks[t.sig[s.k]]
		dline, _ := dtk.f.lineCol(dtk.Pos)
		where := "#line " + strconv.Itoa(dline) + " " + cQuote(dtk.f.name) + "\n"
		if f.tmpl != nil {
			use = alias + "<" + strings.Join(f.tmpl.names, ", ") + ">"
			f.aliases = append(f.aliases, where+f.tmpl.String()+" using "+alias+" = "+typ+s.dims+";")
		} else {
			f.aliases = append(f.aliases, where+"typedef "+typ+" "+alias+s.dims+";")
		}
		out = append(out, use+"& "+s.name+" = *static_cast<"+use+"*>(mtl_rt::tg_slot("+strconv.Itoa(s.id)+"));")
		if t.text(j) == "," {
			j++
			continue
		}
		if j != end {
			t.errorf(j, "cannot parse threadgroup declaration")
			return end
		}
	}
	t.replaceRange(k, end, strings.Join(out, " "))
	return end
}

// zeroToken reports whether tok may appear in a zero-fill initialiser.
func zeroToken(tok string) bool {
	switch tok {
	case "{", "}", ",", "false":
		return true
	}
	if tok == "" || !isDigit(tok[0]) && tok[0] != '.' {
		return false
	}
	body := strings.TrimRight(strings.ToLower(tok), "fhul")
	if strings.HasPrefix(body, "0x") {
		return strings.Trim(body[2:], "0") == ""
	}
	return strings.Trim(body, "0.") == ""
}

// scanInstantiation parses `template [[host_name("x")]] ... f<args>...;`.
func (t *tr) scanInstantiation(k, b int) int {
	end := t.skipStmt(k, b) - 1
	in := &inst{k: k}
	for j := k + 1; j <= end; j++ {
		if t.kind(j) == msl.Attribute {
			for _, a := range parseAttrs(t.text(j)) {
				if a.name == "host_name" && len(a.args) == 1 {
					if s, err := strconv.Unquote(a.args[0]); err == nil {
						in.host = s
					}
				}
			}
			continue
		}
		if in.fn == "" && t.kind(j) == msl.Ident && t.text(j+1) == "<" {
			e := t.matchAngle(j + 1)
			if e > 0 && (t.text(e+1) == "(" || t.text(e+1) == ";") {
				in.fn = t.text(j)
				for _, r := range t.splitCommas(j+2, e) {
					in.args = append(in.args, t.rawText(r[0], r[1]))
				}
			}
		}
	}
	t.replaceRange(k, end, "")
	if in.host == "" {
		return end + 1 // a plain explicit instantiation: nothing to export
	}
	if in.fn == "" {
		t.errorf(k, "cannot find the instantiated template in host_name %q", in.host)
		return end + 1
	}
	t.insts = append(t.insts, in)
	return end + 1
}

// rawText is the source text from token a through token b of one file,
// rewritten token by token for types.
func (t *tr) rawText(a, b int) string {
	var words []string
	for j := a; j <= b; j++ {
		if w := t.rewriteTypeTok(j); w != "" {
			words = append(words, w)
		}
	}
	return joinWords(words)
}

// globalDecl handles a file-scope declaration [k, end].
func (t *tr) globalDecl(k, end int, owner string) {
	if owner != "" {
		return
	}
	fc := -1
	for j := k; j < end; j++ {
		if t.kind(j) == msl.Attribute {
			for _, a := range parseAttrs(t.text(j)) {
				if a.name == "function_constant" {
					fc = j
				}
			}
		}
	}
	if fc >= 0 {
		t.functionConstant(k, fc, end)
		return
	}
	if t.isTG(k) {
		for j := k; j < end; j++ {
			if s := t.text(j); s == "*" || s == "&" {
				return
			}
		}
		t.errorf(k, "threadgroup variable at file scope")
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
