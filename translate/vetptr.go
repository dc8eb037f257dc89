package translate

import (
	"strings"

	"metalab/msl"
)

// This file holds the rules on pointers and functions, which follow the
// Metal Shading Language: a kernel's pointers come from its arguments, its
// variables and arithmetic on them, never from an integer (as_type
// reinterprets only types that are not pointers, and Metal defines no
// integer-to-pointer conversion); and Metal has no function pointers
// outside visible function tables, so a function is only ever called, by
// name. The runner holds the checking mode's hooks in the same process as
// the kernel, so a forged pointer or a function's address is a way to
// switch the checking off, or to read code that differs between the
// checking and the plain build.
//
// The rules work on the expanded token stream without a type checker, so
// they decide with what the source shows: a cast to a pointer type is
// admitted only when its operand is visibly a pointer (a name every
// declaration of which is a pointer or an array, &x, a pointer cast,
// pointer arithmetic on one, nullptr or 0). What the stream cannot show to
// be a pointer is refused.

// An exprKind is what vetting knows of an expression's type.
type exprKind int

const (
	kUnknown exprKind = iota
	kPtr              // a data pointer (or an array, which decays to one)
	kNum              // certainly not a pointer
)

// ptrFacts is what the pointer rules know of the source's names.
type ptrFacts struct {
	ptrDecl    map[string]bool // declared at least once as a pointer, a reference to one or an array
	otherDecl  map[string]bool // declared at least once otherwise (auto included)
	ptrAlias   map[string]bool // typedef or using naming a pointer type
	ptrRet     map[string]bool // a function declared returning a pointer
	funcs      map[string]bool // functions the source declares
	prelude    map[string]bool // functions metal_stdlib declares (some of them types too)
	defined    map[string]bool // functions the source defines (with a body)
	ptrHolders map[string]bool // structs and unions with a pointer or reference member
	ptrField   map[string]bool // a member of some struct, class or union declared as a pointer, a reference or an array
	otherField map[string]bool // a member declared otherwise
	bodyOpen   map[int]bool    // the '{' of every struct, class and union body
	deducible  map[string]bool // template parameters a function parameter may deduce (a pointer type, perhaps)
	typeName   func(string) bool
	decls      map[string][]declRec // every declaration of a name, in order
	block      []int                // for each token, the '{' of the innermost block holding it, or -1
	ends       map[int]int          // blockEnd's results
}

// A declRec is one declaration of a name: where, whether it is a pointer,
// and the tokens it is visible in.
type declRec struct {
	at, lo, hi int
	ptr        bool
	space      string // the address space its declaration names, or ""
	stars      int    // the '*'s of its declarator
	array      bool   // an array
	holder     string // its type (or pointee type) when that holds pointers
	auto       bool   // declared auto (or decltype): its type is not visible
}

// declShape counts the '*'s before the name at ts[k] in its declaration
// and finds a type in it that holds pointers.
func (p *ptrFacts) declShape(ts []vtok, k int) (stars int, holder string) {
	for j := k - 1; j >= 0 && j > k-32; j-- {
		x := ts[j].Text
		if x == ";" || x == "{" || x == "}" || x == "(" || x == "," || x == ")" || x == "=" {
			break
		}
		if x == "*" {
			stars++
		}
		if ts[j].Kind == msl.Ident && (p.ptrHolders[x] || p.ptrAlias[x]) {
			holder = x
		}
	}
	return stars, holder
}

// addressSpaces are Metal's address space keywords.
var addressSpaces = setOf(`device constant thread threadgroup threadgroup_imageblock ray_data object_data`)

// declSpace returns the first address space named in the declaration of
// the name at ts[k], or "".
func declSpace(ts []vtok, k int) string {
	space := ""
	for j := k - 1; j >= 0 && j > k-32; j-- {
		x := ts[j].Text
		if x == ";" || x == "{" || x == "}" || x == "(" || x == "," || x == ")" || x == ">" || x == "=" {
			break
		}
		if addressSpaces[x] {
			space = x
		}
	}
	return space
}

// record notes a declaration of the name at ts[k].
func (p *ptrFacts) record(ts []vtok, k int, ptr bool) {
	name := ts[k].Text
	if ptr {
		p.ptrDecl[name] = true
	} else {
		p.otherDecl[name] = true
	}
	if b := p.block[k]; b >= 0 && p.bodyOpen[b] {
		if ptr {
			p.ptrField[name] = true
		} else {
			p.otherField[name] = true
		}
	}
	p.recordOnly(ts, k, ptr)
}

// recordOnly notes the declaration at ts[k] for lookups in scope only.
func (p *ptrFacts) recordOnly(ts []vtok, k int, ptr bool) {
	name := ts[k].Text
	lo, hi := 0, len(ts)
	if b := p.block[k]; b >= 0 {
		lo, hi = b, p.blockEnd(ts, b)
	}
	// A parameter is visible in the body after its list.
	if insideParens(ts, k) {
		depth := 0
		for j := k - 1; j >= 0 && j > k-4096; j-- {
			if ts[j].Text == ")" {
				depth++
			} else if ts[j].Text == "(" {
				if depth > 0 {
					depth--
					continue
				}
				if cp := closeTok(ts, j); cp > 0 {
					for x := cp + 1; x < len(ts) && x < cp+48; x++ {
						if ts[x].Text == "{" {
							lo, hi = x, p.blockEnd(ts, x)
							break
						}
						if ts[x].Text == ";" || ts[x].Text == "}" {
							break
						}
					}
				}
				break
			}
		}
	}
	stars, holder := p.declShape(ts, k)
	auto := false
	for j := k - 1; j >= 0 && j > k-8; j-- {
		if x := ts[j].Text; x == "auto" || x == "decltype" {
			auto = true
		} else if x == ";" || x == "{" || x == "}" || x == "(" || x == "," {
			break
		}
	}
	p.decls[name] = append(p.decls[name], declRec{at: k, lo: lo, hi: hi, ptr: ptr, space: declSpace(ts, k), stars: stars,
		array: k+1 < len(ts) && ts[k+1].Text == "[", holder: holder, auto: auto})
}

// declAt returns the declaration C++ finds for the name used at ts[k]
// (see nameKindAt), or nil.
func (p *ptrFacts) declAt(name string, k int) *declRec {
	var best *declRec
	for i, d := range p.decls[name] {
		if d.at < k && d.lo <= k && k <= d.hi && (best == nil || d.at > best.at) {
			best = &p.decls[name][i]
		}
	}
	return best
}

// space returns the address space the pointer expression ts[lo:hi] points
// into, when the source shows it: a string literal's (constant), a
// pointer's or an object's declared one, a cast's; "" otherwise.
func (p *ptrFacts) space(ts []vtok, lo, hi int) string {
	for hi-lo >= 2 && ts[lo].Text == "(" && closeTok(ts, lo) == hi-1 {
		lo++
		hi--
	}
	if lo >= hi {
		return ""
	}
	// a + n, a - n: a's space.
	depth := 0
	for j := lo; j < hi; j++ {
		switch ts[j].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "+", "-":
			if depth == 0 && j > lo && operandEnd(ts, j-1) {
				if sp := p.space(ts, lo, j); sp != "" {
					return sp
				}
				if ts[j].Text == "+" {
					return p.space(ts, j+1, hi)
				}
				return ""
			}
		}
	}
	t := ts[lo]
	switch {
	case t.Kind == msl.String && hi == lo+1:
		return "constant"
	case t.Text == "&" && hi == lo+2 && ts[lo+1].Kind == msl.Ident:
		if d := p.declAt(ts[lo+1].Text, lo+1); d != nil && !d.ptr {
			return d.space
		}
	case elementAddress(ts, lo, hi):
		// The space a pointer points into, or an array's own.
		if d := p.declAt(ts[lo+1].Text, lo+1); d != nil && (d.stars == 1 && !d.array || d.stars == 0 && d.array) {
			return d.space
		}
	case t.Kind == msl.Ident && hi == lo+1:
		if d := p.declAt(t.Text, lo); d != nil && d.ptr {
			return d.space
		}
	case t.Text == "(":
		if r := closeTok(ts, lo); r > 0 && r+1 < hi {
			if _, ok := p.castType(ts, lo+1, r); ok {
				for j := lo + 1; j < r; j++ {
					if addressSpaces[ts[j].Text] {
						return ts[j].Text
					}
				}
			}
		}
	}
	return ""
}

// pointerStorage says what the pointer expression ts[lo:hi] points to
// when that is memory holding pointers: the address of a pointer (&p), of
// an object whose type holds pointers, an array of pointers, a pointer to
// pointers; "" otherwise.
func (p *ptrFacts) pointerStorage(ts []vtok, lo, hi int) string {
	for hi-lo >= 2 && ts[lo].Text == "(" && closeTok(ts, lo) == hi-1 {
		lo++
		hi--
	}
	// The base of pointer arithmetic.
	depth := 0
	for j := lo; j < hi; j++ {
		switch ts[j].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "+", "-":
			if depth == 0 && j > lo && operandEnd(ts, j-1) {
				if w := p.pointerStorage(ts, lo, j); w != "" {
					return w
				}
				return p.pointerStorage(ts, j+1, hi)
			}
		}
	}
	if lo >= hi {
		return ""
	}
	t := ts[lo]
	switch {
	case elementAddress(ts, lo, hi):
		// &p[i] is p + (i): an element of what the pointer p points to
		// (of the array p), which holds pointers only where p + (i)
		// would point to pointers: p a pointer to pointers, an array of
		// them, or of a type holding them.
		d := p.declAt(ts[lo+1].Text, lo+1)
		if d == nil {
			return ""
		}
		switch {
		case d.auto:
			return "an element of " + ts[lo+1].Text + ", whose type (auto) vetting cannot see and which may hold pointers"
		case d.stars >= 2 || d.stars >= 1 && d.array:
			return "an element of " + ts[lo+1].Text + ", which holds pointers"
		case d.holder != "":
			return "an element of " + ts[lo+1].Text + ", whose type " + d.holder + " holds pointers"
		}
		return p.pointerStorage(ts, lo+3, hi-1)
	case t.Text == "&" && lo+1 < hi && ts[lo+1].Kind == msl.Ident:
		d := p.declAt(ts[lo+1].Text, lo+1)
		if d == nil {
			return ""
		}
		switch {
		case d.stars > 0 && (hi == lo+2 || !d.array):
			return "the address of the pointer " + ts[lo+1].Text
		case d.holder != "":
			return "the address of " + ts[lo+1].Text + ", whose type " + d.holder + " holds pointers"
		case d.auto:
			return "the address of " + ts[lo+1].Text + ", whose type (auto) vetting cannot see and which may hold pointers (a lambda's captures do)"
		}
	case t.Kind == msl.Ident && hi == lo+1:
		d := p.declAt(t.Text, lo)
		if d == nil {
			return ""
		}
		switch {
		case d.stars >= 2 || d.stars >= 1 && d.array:
			return t.Text + ", which holds pointers"
		case d.holder != "" && (d.stars >= 1 || d.array):
			return t.Text + ", which points to " + d.holder + " (it holds pointers)"
		}
	}
	return ""
}

// elementAddress reports whether ts[lo:hi] is exactly &name[index].
func elementAddress(ts []vtok, lo, hi int) bool {
	return hi-lo >= 5 && ts[lo].Text == "&" && ts[lo+1].Kind == msl.Ident && !cppKeywords[ts[lo+1].Text] &&
		ts[lo+2].Text == "[" && closeTok(ts, lo+2) == hi-1
}

// blockEnd returns the index of the '}' closing the '{' at ts[b] (or the
// end of the tokens), once per block.
func (p *ptrFacts) blockEnd(ts []vtok, b int) int {
	if e, ok := p.ends[b]; ok {
		return e
	}
	e := closeTok(ts, b)
	if e < 0 {
		e = len(ts)
	}
	p.ends[b] = e
	return e
}

// nameKindAt judges the name used at ts[k] by the declaration C++ finds
// there: the last one before it whose scope holds it; by all its
// declarations when none does.
func (p *ptrFacts) nameKindAt(name string, k int) exprKind {
	best := -1
	for i, d := range p.decls[name] {
		if d.at < k && d.lo <= k && k <= d.hi && (best < 0 || d.at > p.decls[name][best].at) {
			best = i
		}
	}
	if best < 0 || p.funcs[name] {
		return p.nameKind(name)
	}
	if p.decls[name][best].ptr {
		return kPtr
	}
	return kUnknown
}

// pointerRules applies the rules of this file to a run of live tokens,
// with the facts gathered from the whole stream.
func (v *vetter) pointerRules(ts []vtok, p *ptrFacts) {
	for k, t := range ts {
		switch t.Kind {
		case msl.Punct:
			v.punctPtrRule(ts, k, p)
		case msl.Ident:
			v.identPtrRule(ts, k, p)
		}
	}
}

// ptrFacts gathers the declarations the rules judge by.
func (v *vetter) ptrFacts(ts []vtok) *ptrFacts {
	p := &ptrFacts{ptrDecl: map[string]bool{}, otherDecl: map[string]bool{}, ptrAlias: map[string]bool{}, ptrRet: map[string]bool{},
		funcs: map[string]bool{}, defined: map[string]bool{}, ptrHolders: map[string]bool{}, deducible: map[string]bool{},
		ptrField: map[string]bool{}, otherField: map[string]bool{}, bodyOpen: map[int]bool{},
		decls: map[string][]declRec{}, block: make([]int, len(ts)), ends: map[int]int{}}
	var stack []int
	for k, t := range ts {
		if t.Kind == msl.Punct && t.Text == "}" && len(stack) > 0 {
			stack = stack[:len(stack)-1]
		}
		p.block[k] = -1
		if len(stack) > 0 {
			p.block[k] = stack[len(stack)-1]
		}
		if t.Kind == msl.Punct && t.Text == "{" {
			stack = append(stack, k)
		}
	}
	p.typeName = func(n string) bool {
		return builtinTypes[n] || v.provided[n]&nType != 0 || v.declared[n]&nType != 0 || p.ptrAlias[n]
	}
	p.prelude = map[string]bool{}
	for n := range metalFuncs() {
		p.prelude[n] = true
	}
	walkScope(ts, 0, len(ts), false, "", 0, func(st *stmt) {
		info := declares(ts, st)
		for _, j := range info.funcs {
			if ts[j].Text == "operator" {
				continue
			}
			p.funcs[ts[j].Text] = true
			if st.body {
				p.defined[ts[j].Text] = true
			}
		}
		if st.body {
			// A specialisation, template<> bool cmp<3>(...) { }, defines cmp.
			for n, j := range st.idx {
				if ts[j].Kind == msl.Ident && n+1 < len(st.idx) && (ts[st.idx[n+1]].Text == "(" || ts[st.idx[n+1]].Text == "<") {
					p.defined[ts[j].Text] = true
				}
			}
		}
	})
	// Aliases: typedef ... *name; using name = ... *;
	for k, t := range ts {
		switch t.Text {
		case "typedef":
			name := typedefName(ts, k)
			end := k
			for end < len(ts) && ts[end].Text != ";" {
				end++
			}
			if name != "" && (hasTopStar(ts, k+1, end) || p.namesAlias(ts, k+1, end)) {
				p.ptrAlias[name] = true
			}
		case "using":
			if k+2 < len(ts) && ts[k+1].Kind == msl.Ident && ts[k+2].Text == "=" {
				end := k + 3
				for end < len(ts) && ts[end].Text != ";" {
					end++
				}
				if hasTopStar(ts, k+3, end) || p.namesAlias(ts, k+3, end) {
					p.ptrAlias[ts[k+1].Text] = true
				}
			}
		}
	}
	p.holders(ts)
	// Declarations of variables, parameters, fields and functions.
	for k, t := range ts {
		if t.Kind != msl.Ident || cppKeywords[t.Text] || metalKeywords[t.Text] || k == 0 || k+1 >= len(ts) {
			continue
		}
		next := ts[k+1]
		switch next.Text {
		case "=", ";", ",", "(", ")", "[", "{", ":":
		default:
			if next.Kind != msl.Attribute {
				continue
			}
		}
		if ts[k-1].Text == "," && next.Text != "(" && next.Text != ")" {
			// A later declarator of a declaration (int a, b = 0;), not an
			// argument of a call (f(a, b, c)).
			if next.Text != "," || !insideParens(ts, k) {
				p.record(ts, k, false)
			}
			continue
		}
		if k >= 2 && ts[k-2].Text == "(" && (ts[k-1].Text == "*" || ts[k-1].Text == "&") && next.Text == ")" {
			p.record(ts, k, true) // (*p)[4], (&a)[4]
			continue
		}
		star, j := false, k-1
		for j >= 0 {
			x := ts[j].Text
			if x == "*" {
				star = true
			} else if x != "&" && x != "&&" && x != "const" && x != "volatile" && !metalKeywords[x] {
				break
			}
			j--
		}
		if j < 0 || j == k-1 && !declPrefix(ts, k-1, p.typeName) {
			continue
		}
		if j < k-1 && !(ts[j].Kind == msl.Ident && !cppKeywords[ts[j].Text] || declSpecifiers[ts[j].Text] || ts[j].Text == ">" || ts[j].Text == ">>") {
			if ts[j].Text == "," && star && next.Text != "(" {
				p.record(ts, k, true) // float *a, *b
			}
			continue
		}
		ptr := star || next.Text == "[" || p.ptrAlias[ts[j].Text]
		if next.Text == "(" {
			if ptr {
				p.ptrRet[t.Text] = true
			}
			// A function, or a variable initialised with (...): its
			// declaration is kept for lookups in scope, but says nothing
			// of the name elsewhere.
			p.recordOnly(ts, k, ptr)
			continue
		}
		p.record(ts, k, ptr)
	}
	// auto [a, b] = ...: structured bindings are not known pointers.
	for k := 0; k+1 < len(ts); k++ {
		if ts[k].Text != "auto" {
			continue
		}
		j := k + 1
		for j < len(ts) && (ts[j].Text == "&" || ts[j].Text == "&&" || ts[j].Text == "const") {
			j++
		}
		if j < len(ts) && ts[j].Text == "[" {
			for j++; j < len(ts) && ts[j].Text != "]"; j++ {
				if ts[j].Kind == msl.Ident {
					p.record(ts, j, false)
				}
			}
		}
	}
	for _, f := range v.files {
		for _, fn := range f.Funcs {
			if fn.Template == nil {
				continue
			}
			for _, tp := range fn.Template {
				for _, prm := range fn.Params {
					if bareType(prm.Type) == tp {
						p.deducible[tp] = true
					}
				}
			}
		}
	}
	return p
}

// insideParens reports whether ts[k] lies inside parentheses of its
// statement.
func insideParens(ts []vtok, k int) bool {
	depth := 0
	for j := k - 1; j >= 0 && j > k-4096; j-- {
		switch ts[j].Text {
		case ")":
			depth++
		case "(":
			if depth == 0 {
				return true
			}
			depth--
		case ";", "{", "}":
			return false
		}
	}
	return false
}

// bareType strips a parameter's type of const, volatile and references.
func bareType(typ string) string {
	var out []string
	for _, w := range strings.Fields(strings.NewReplacer("&", " ", "const", " ", "volatile", " ").Replace(typ)) {
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// namesAlias reports whether ts[lo:hi] names a pointer alias or decltype.
func (p *ptrFacts) namesAlias(ts []vtok, lo, hi int) bool {
	for j := lo; j < hi && j < len(ts); j++ {
		if p.ptrAlias[ts[j].Text] {
			return true
		}
	}
	return false
}

// namesHolder reports whether ts[lo:hi] names a type that holds pointers.
func (p *ptrFacts) namesHolder(ts []vtok, lo, hi int) bool {
	for j := lo; j < hi && j < len(ts); j++ {
		if ts[j].Kind == msl.Ident && p.ptrHolders[ts[j].Text] {
			return true
		}
	}
	return false
}

// hasTopStar reports whether ts[lo:hi] holds a '*' outside template
// arguments and brackets: a pointer declarator.
func hasTopStar(ts []vtok, lo, hi int) bool {
	depth := 0
	for j := lo; j < hi && j < len(ts); j++ {
		switch ts[j].Text {
		case "(", "[", "{", "<":
			depth++
		case ")", "]", "}", ">":
			depth--
		case ">>":
			depth -= 2
		case "*":
			if depth <= 0 {
				return true
			}
			if depth > 0 && j+1 < hi && starEndsType(ts[j+1]) {
				return true // vec<device float*>
			}
		}
	}
	return false
}

// starEndsType reports whether the token after a '*' shows the '*' is a
// pointer declarator rather than a multiplication.
func starEndsType(n vtok) bool {
	switch n.Text {
	case ",", ">", ">>", "*", "&", ")", "const", "volatile", "]":
		return true
	}
	return metalKeywords[n.Text] && n.Text != "kernel"
}

// holders finds the structs and unions with a member that is a pointer or
// a reference, or a struct that has one, and refuses unions that hold any.
func (p *ptrFacts) holders(ts []vtok) {
	type body struct {
		name    string
		union   bool
		lo, hi  int
		at      vtok
		tparams map[string]bool // a template's type parameters: a member of one may be a pointer
	}
	var bodies []body
	for k, t := range ts {
		if t.Text != "struct" && t.Text != "class" && t.Text != "union" {
			continue
		}
		j, name := k+1, ""
		for j < len(ts) && (ts[j].Kind == msl.Attribute || ts[j].Text == "alignas") {
			if ts[j].Text == "alignas" {
				j = closeTok(ts, j+1)
				if j < 0 {
					break
				}
			}
			j++
		}
		if j < 0 || j >= len(ts) {
			continue
		}
		if ts[j].Kind == msl.Ident && !cppKeywords[ts[j].Text] {
			name = ts[j].Text
			j++
		}
		for j < len(ts) && ts[j].Text != "{" && ts[j].Text != ";" && ts[j].Text != "(" && ts[j].Text != ")" && ts[j].Text != "," && ts[j].Text != "=" {
			j++ // final, base clauses
		}
		if j >= len(ts) || ts[j].Text != "{" {
			continue
		}
		e := closeTok(ts, j)
		if e < 0 {
			continue
		}
		var tparams map[string]bool
		if k > 0 && (ts[k-1].Text == ">" || ts[k-1].Text == ">>") {
			if lt := openAngle(ts, k-1); lt > 0 && ts[lt-1].Text == "template" {
				tparams = map[string]bool{}
				for x := lt + 1; x < k-1; x++ {
					if ts[x].Kind == msl.Ident && !cppKeywords[ts[x].Text] && (ts[x+1].Text == "," || ts[x+1].Text == ">" || ts[x+1].Text == "=") {
						tparams[ts[x].Text] = true
					}
				}
			}
		}
		bodies = append(bodies, body{name: name, union: t.Text == "union", lo: j + 1, hi: e, at: t, tparams: tparams})
		p.bodyOpen[j] = true
	}
	direct := func(b body) bool {
		depth := 0
		for j := b.lo; j < b.hi; j++ {
			switch ts[j].Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case "*", "&", "&&":
				if depth == 0 && j+1 < b.hi && ts[j+1].Kind == msl.Ident {
					n := ""
					if j+2 < b.hi {
						n = ts[j+2].Text
					}
					if n == ";" || n == "," || n == "[" || n == "=" || n == ":" || n == "{" || j+2 < b.hi && ts[j+2].Kind == msl.Attribute {
						return true
					}
				}
			}
			if depth == 0 && ts[j].Kind == msl.Ident && p.ptrAlias[ts[j].Text] {
				return true
			}
			// T v; in a template: T may be a pointer type.
			if depth == 0 && b.tparams[ts[j].Text] && j+2 < b.hi && ts[j+1].Kind == msl.Ident && (ts[j+2].Text == ";" || ts[j+2].Text == "," || ts[j+2].Text == "[" || ts[j+2].Text == "=") && (j == b.lo || ts[j-1].Text == ";" || ts[j-1].Text == "{" || ts[j-1].Text == "}" || ts[j-1].Text == ":") {
				return true
			}
		}
		return false
	}
	for _, b := range bodies {
		if b.name != "" && direct(b) {
			p.ptrHolders[b.name] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, b := range bodies {
			if b.name == "" || p.ptrHolders[b.name] {
				continue
			}
			for j := b.lo; j < b.hi; j++ {
				if ts[j].Kind == msl.Ident && p.ptrHolders[ts[j].Text] {
					p.ptrHolders[b.name] = true
					changed = true
					break
				}
			}
		}
	}
}

// punctPtrRule checks the punctuation of the rules: C-style casts,
// function-pointer declarators, pointers to members, label addresses and
// lambdas converted to function pointers.
func (v *vetter) punctPtrRule(ts []vtok, k int, p *ptrFacts) {
	t := ts[k]
	switch t.Text {
	case ".*", "->*":
		v.report(t, "the pointer-to-member operator %s is not available in Metal: Metal has no pointers to members", t.Text)
		return
	case "::":
		if k+1 < len(ts) && ts[k+1].Text == "*" {
			v.report(t, "pointers to members (::*) are not available in Metal")
		}
		return
	case "&&":
		if (unaryContext(ts, k-1) || p.castClose(ts, k-1)) && k+1 < len(ts) && ts[k+1].Kind == msl.Ident {
			v.report(t, "&&%s takes a label's address, which is code: Metal has no such operator", ts[k+1].Text)
		}
		return
	case "+":
		if (unaryContext(ts, k-1) || p.castClose(ts, k-1)) && k+1 < len(ts) && ts[k+1].Text == "[" {
			v.report(t, "unary + on a lambda makes a function pointer: Metal has no function pointers")
		}
		return
	case "(":
	default:
		return
	}
	// ( * name ) (  ( & name ) (  ( * ) (  a function pointer or reference.
	j := k + 1
	if j < len(ts) && (ts[j].Text == "*" || ts[j].Text == "&" || ts[j].Text == "^") {
		j++
		for j < len(ts) && (ts[j].Text == "const" || ts[j].Text == "volatile" || metalKeywords[ts[j].Text]) {
			j++
		}
		if j < len(ts) && ts[j].Kind == msl.Ident && !cppKeywords[ts[j].Text] {
			j++
		}
		if j+1 < len(ts) && ts[j].Text == ")" && ts[j+1].Text == "(" && !inTemplateParams(ts, k) && !operandEnd(ts, k-1) && declPrefixBefore(ts, k, p) {
			what := "function pointer"
			if ts[k+1].Text == "&" {
				what = "function reference"
			}
			v.report(t, "a %s type is not available in Metal: functions are called by name (function pointers exist only in visible function tables, which metalab does not run)", what)
			return
		}
	}
	if k > 0 && ts[k-1].Text == "alignas" {
		// alignas(alignment * sizeof(T)) ReadVector: the specifier's
		// argument, never a cast of what follows (casts inside it are
		// judged at their own '(').
		return
	}
	r := closeTok(ts, k)
	if r < 0 || r+1 >= len(ts) || operandEnd(ts, k-1) && !castAfterOperand(ts, k-1) && !p.castClose(ts, k-1) {
		return
	}
	ptr, ok := p.castType(ts, k+1, r)
	if !ok || !operandStart(ts[r+1]) {
		return
	}
	v.pointeeRule(ts, k, k+1, r, p)
	lo, hi := r+1, castOperandEnd(ts, r+1)
	v.checkCast(ts, k, lo, hi, ptr, p, "cast")
}

// castClose reports whether ts[k] is the ')' closing a C-style cast's
// type, so that what follows is the cast's operand.
func (p *ptrFacts) castClose(ts []vtok, k int) bool {
	if k < 0 || ts[k].Text != ")" {
		return false
	}
	depth := 0
	for j := k; j >= 0 && j > k-256; j-- {
		switch ts[j].Text {
		case ")":
			depth++
		case "(":
			if depth--; depth == 0 {
				if j > 0 && (operandEnd(ts, j-1) || ts[j-1].Text == "sizeof" || ts[j-1].Text == "alignof" || ts[j-1].Text == "decltype") && !castAfterOperand(ts, j-1) {
					return false
				}
				_, ok := p.castType(ts, j+1, k)
				return ok
			}
		}
	}
	return false
}

// castAfterOperand reports whether the token at ts[k], which ends an
// operand, still lets a '(' after it open a cast: a keyword such as return.
func castAfterOperand(ts []vtok, k int) bool {
	switch ts[k].Text {
	case "return", "case", "throw", "sizeof", "co_return":
		return true
	}
	return false
}

// declPrefixBefore reports whether the '(' at ts[k] follows a type, so
// that a declarator starts there (float (*f)(float)), or opens a cast or
// template argument ((float (*)(float)) f, decltype).
func declPrefixBefore(ts []vtok, k int, p *ptrFacts) bool {
	if k == 0 {
		return true
	}
	prev := ts[k-1]
	switch {
	case prev.Kind == msl.Ident && (p.typeName(prev.Text) || declSpecifiers[prev.Text] || !cppKeywords[prev.Text] && !p.funcs[prev.Text]):
		return true
	case prev.Text == ">" || prev.Text == "*" || prev.Text == "&" || prev.Text == "(" || prev.Text == "," || prev.Text == "<":
		return true
	}
	return false
}

// unaryContext reports whether an operator after ts[k] is certainly
// unary: it follows an opening bracket, an assignment, a comma, return or
// another operator that cannot end an operand.
func unaryContext(ts []vtok, k int) bool {
	if k < 0 {
		return true
	}
	switch ts[k].Text {
	case "(", "[", "{", "=", ",", "return", "?", ":", ";", "+", "-", "*", "/", "%", "!", "~", "+=", "-=", "&=", "|=":
		return true
	}
	return false
}

// operandEnd reports whether ts[k] ends an operand, so that an operator
// after it is binary.
func operandEnd(ts []vtok, k int) bool {
	if k < 0 {
		return false
	}
	t := ts[k]
	switch t.Kind {
	case msl.Ident:
		return !cppKeywords[t.Text] || t.Text == "this" || t.Text == "true" || t.Text == "false" || t.Text == "nullptr" || castAfterOperand(ts, k)
	case msl.Int, msl.Float, msl.String, msl.Char:
		return true
	case msl.Punct:
		switch t.Text {
		case ")", "]", "++", "--":
			return true
		}
	}
	return false
}

// operandStart reports whether t may begin the operand of a cast.
func operandStart(t vtok) bool {
	switch t.Kind {
	case msl.Ident:
		return !cppKeywords[t.Text] || t.Text == "this" || t.Text == "nullptr" || t.Text == "sizeof" || t.Text == "true" || t.Text == "false" ||
			strings.HasSuffix(t.Text, "_cast") || t.Text == "decltype" || t.Text == "alignof"
	case msl.Int, msl.Float, msl.String, msl.Char:
		return true
	case msl.Punct:
		switch t.Text {
		case "(", "&", "*", "-", "+", "!", "~", "++", "--", "::", "[":
			return true
		}
	}
	return false
}

// castOperandEnd returns the end (exclusive) of the cast-expression that
// starts at ts[lo]: unary operators, then a postfix expression.
func castOperandEnd(ts []vtok, lo int) int {
	j := lo
	for j < len(ts) {
		switch ts[j].Text {
		case "&", "*", "-", "+", "!", "~", "++", "--":
			if ts[j].Kind == msl.Punct {
				j++
				continue
			}
		}
		break
	}
	if j >= len(ts) {
		return j
	}
	// A nested C-style cast: (T) operand.
	if ts[j].Text == "(" {
		r := closeTok(ts, j)
		if r < 0 {
			return len(ts)
		}
		j = r + 1
		if j < len(ts) && operandStart(ts[j]) && ts[j].Text != "-" && ts[j].Text != "+" && ts[j].Text != "*" && ts[j].Text != "&" && ts[j].Text != "(" && ts[j].Text != "[" && ts[j].Text != "++" && ts[j].Text != "--" {
			return castOperandEnd(ts, j)
		}
	} else if ts[j].Text == "[" { // a lambda
		r := closeTok(ts, j)
		if r < 0 {
			return len(ts)
		}
		j = r + 1
	} else {
		j++
		for j < len(ts) && ts[j].Text == "::" && j+1 < len(ts) {
			j += 2
		}
	}
	for j < len(ts) {
		switch ts[j].Text {
		case "(", "[", "{":
			r := closeTok(ts, j)
			if r < 0 {
				return len(ts)
			}
			j = r + 1
			continue
		case "<":
			if j > 0 && ts[j-1].Kind == msl.Ident {
				if r := closeAngle(ts, j); r > 0 && r+1 < len(ts) && (ts[r+1].Text == "(" || ts[r+1].Text == "::") {
					j = r + 1
					continue
				}
			}
		case ".", "->":
			j += 2
			continue
		case "++", "--":
			j++
			continue
		case "::":
			j += 2
			continue
		}
		break
	}
	if j > len(ts) {
		j = len(ts)
	}
	return j
}

// castType judges the tokens ts[lo:hi] as a cast's type: ok when they are
// a type, ptr when it is (or may be) a pointer type.
func (p *ptrFacts) castType(ts []vtok, lo, hi int) (ptr, ok bool) {
	if lo >= hi {
		return false, false
	}
	j := lo
	for j < hi && (ts[j].Text == "const" || ts[j].Text == "volatile" || metalKeywords[ts[j].Text] || ts[j].Text == "unsigned" || ts[j].Text == "signed" || ts[j].Text == "struct" || ts[j].Text == "typename" || ts[j].Text == "::") {
		j++
	}
	if j >= hi {
		return false, lo < hi && (ts[lo].Text == "unsigned" || ts[lo].Text == "signed")
	}
	first := ts[j]
	switch {
	case first.Text == "decltype":
		return true, true
	case first.Kind != msl.Ident:
		return false, false
	case builtinTypes[first.Text] || p.typeName(first.Text):
	default:
		return false, false
	}
	for x := j; x < hi; x++ {
		t := ts[x]
		if t.Kind == msl.Ident && !cppKeywords[t.Text] && !metalKeywords[t.Text] && !p.typeName(t.Text) && x > j && ts[x-1].Text != "::" && ts[x-1].Text != "<" && ts[x-1].Text != "," {
			return false, false // (T x): not a type-id
		}
		switch t.Text {
		case "=", ";", "{", "}", "+", "-", "/", "%", "?", "!", "~", "|", "^", "&&", "||", "==", "!=":
			return false, false
		}
	}
	return hasTopStar(ts, j, hi) || p.namesAlias(ts, j, hi), true
}

// checkCast checks a cast to a type that may be a pointer: its operand
// ts[lo:hi] must be visibly a pointer.
func (v *vetter) checkCast(ts []vtok, at, lo, hi int, ptr bool, p *ptrFacts, what string) {
	if !ptr || lo >= hi {
		return
	}
	if hi == lo+1 && (ts[lo].Text == "0" || ts[lo].Text == "nullptr") {
		return // the null pointer
	}
	if p.kind(ts, lo, hi) == kPtr {
		if what := p.pointerStorage(ts, lo, hi); what != "" {
			v.report(ts[at], "a cast of %s: writing through it would forge a pointer from an integer's bytes, which Metal does not allow", what)
			return
		}
		to := ""
		for j := at; j < lo && j < len(ts); j++ {
			if addressSpaces[ts[j].Text] {
				to = ts[j].Text
				break
			}
		}
		if from := p.space(ts, lo, hi); to != "" && from != "" && from != to {
			v.report(ts[at], "%s from the %s address space to the %s address space: Metal does not convert pointers between address spaces", what, from, to)
		}
		return
	}
	v.report(ts[at], "%s to a pointer type of an operand that is not visibly a pointer: Metal has no conversion from integers to pointers, and vetting admits a pointer cast only of a pointer it can see", what)
}

// identPtrRule checks named casts, functional casts, as_type, template
// arguments and uses of functions other than calls.
func (v *vetter) identPtrRule(ts []vtok, k int, p *ptrFacts) {
	t := ts[k]
	name := t.Text
	switch name {
	case "reinterpret_cast", "static_cast", "const_cast", "as_type", "bit_cast":
		if k+1 >= len(ts) || ts[k+1].Text != "<" || member(ts, k) && name != "as_type" && name != "bit_cast" {
			return
		}
		gt := closeAngle(ts, k+1)
		if gt < 0 || gt+1 >= len(ts) || ts[gt+1].Text != "(" {
			return
		}
		rp := closeTok(ts, gt+1)
		if rp < 0 {
			return
		}
		ptr := hasTopStar(ts, k+2, gt) || p.namesAlias(ts, k+2, gt) || gt > k+2 && ts[k+2].Text == "decltype"
		if name == "as_type" || name == "bit_cast" {
			if ptr || p.namesHolder(ts, k+2, gt) {
				v.report(t, "%s to a pointer type (or a type holding pointers): Metal's as_type reinterprets only scalar and vector types that are not pointers", name)
				return
			}
			if p.kind(ts, gt+2, rp) == kPtr {
				v.report(t, "%s of a pointer: Metal's as_type reinterprets only scalar and vector types that are not pointers", name)
				return
			}
			return
		}
		if name == "static_cast" || name == "const_cast" {
			return // neither converts an integer to a pointer
		}
		v.pointeeRule(ts, k, k+2, gt, p)
		v.checkCast(ts, k, gt+2, rp, ptr, p, name)
		return
	case "decltype":
		// decltype(x)(e): a functional cast to x's type.
		if k+1 < len(ts) && ts[k+1].Text == "(" {
			if r := closeTok(ts, k+1); r > 0 && r+1 < len(ts) && ts[r+1].Text == "(" && (k == 0 || ts[k-1].Text != "typedef" && ts[k-1].Text != "(") {
				if rp := closeTok(ts, r+1); rp > 0 && p.kind(ts, k+2, r) != kNum {
					v.checkCast(ts, k, r+2, rp, true, p, "functional cast")
				}
			}
		}
		return
	case "union":
		v.unionRule(ts, k, p)
		return
	}
	if t.Kind != msl.Ident || cppKeywords[name] || metalKeywords[name] {
		return
	}
	// A pointer alias or a deducible template parameter used as a
	// functional cast: P(x).
	if p.ptrAlias[name] && k+1 < len(ts) && !member(ts, k) && !declaresAt(ts, k) {
		lp := k + 1
		if ts[lp].Text == "<" { // an alias template: Ptr<float>(n)
			if gt := closeAngle(ts, lp); gt > 0 {
				lp = gt + 1
			}
		}
		if lp < len(ts) && ts[lp].Text == "(" {
			if rp := closeTok(ts, lp); rp > 0 && !literalOperand(ts, lp+1, rp) {
				v.checkCast(ts, k, lp+1, rp, true, p, "functional cast")
			}
		}
	}
	// Pointer types as template arguments.
	if k+1 < len(ts) && ts[k+1].Text == "<" && name != "template" && v.provided[name] == 0 && !qualifiedByMetal(ts, k) {
		if gt := closeAngle(ts, k+1); gt > 0 && !inTemplateParams(ts, k+1) && (k == 0 || ts[k-1].Text != "template") && !specializationHead(ts, k, gt) {
			for j := k + 2; j < gt; j++ {
				if ts[j].Text == "*" && starEndsType(ts[j+1]) || ts[j].Kind == msl.Ident && p.ptrAlias[ts[j].Text] {
					v.report(ts[j], "a pointer type as a template argument of %s: vetting cannot follow what the template does with it, so pointer types may not be template arguments", name)
					break
				}
			}
		}
	}
	v.functionUse(ts, k, p)
}

// specializationHead reports whether ts[k] names the class template a
// partial or explicit specialisation defines, with ts[k+1:gt+1] its
// argument list: template <typename T> struct pointer_element<device T*>
// {...}. The arguments are a pattern that instantiates nothing: the
// specialisation is used only where the template is named with such
// arguments, and that use is judged where it is written; its body is
// judged as any other.
func specializationHead(ts []vtok, k, gt int) bool {
	if k < 2 || gt+1 >= len(ts) || ts[gt+1].Text != "{" && ts[gt+1].Text != ":" {
		return false
	}
	switch ts[k-1].Text {
	case "struct", "class", "union":
	default:
		return false
	}
	if ts[k-2].Text != ">" {
		return false
	}
	lt := openAngle(ts, k-2)
	return lt > 0 && ts[lt-1].Text == "template"
}

// declaresAt reports whether the identifier at ts[k] is a type in a
// declaration (P name ...) rather than an expression.
func declaresAt(ts []vtok, k int) bool {
	return k > 0 && (ts[k-1].Text == "typedef" || ts[k-1].Text == "using")
}

// literalOperand reports whether ts[lo:hi] is one numeric literal.
func literalOperand(ts []vtok, lo, hi int) bool {
	for hi-lo >= 2 && ts[lo].Text == "(" && closeTok(ts, lo) == hi-1 {
		lo++
		hi--
	}
	if hi == lo+2 && ts[lo].Text == "-" {
		lo++
	}
	return hi == lo+1 && (ts[lo].Kind == msl.Int || ts[lo].Kind == msl.Float)
}

// pointeeRule refuses a cast, to the type ts[lo:hi], whose pointee holds
// pointers: reading memory through it would turn stored integers into
// pointers.
func (v *vetter) pointeeRule(ts []vtok, at, lo, hi int, p *ptrFacts) {
	stars, holder := 0, ""
	depth := 0
	for j := lo; j < hi; j++ {
		switch ts[j].Text {
		case "<", "(", "[":
			depth++
		case ">", ")", "]":
			depth--
		case "*", "&":
			if depth == 0 {
				stars++
			}
		}
		if ts[j].Kind == msl.Ident && (p.ptrHolders[ts[j].Text] || p.ptrAlias[ts[j].Text]) {
			holder = ts[j].Text
		}
	}
	if stars >= 2 || stars >= 1 && holder != "" {
		v.report(ts[at], "a cast to a pointer to pointers (or to %s, which holds them): memory read through it would turn stored integers into pointers, and Metal has no conversion from integers to pointers", orWord(holder, "a pointer"))
	}
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// unionRule refuses a union with a pointer or reference member: writing an
// integer member and reading the pointer is an integer-to-pointer cast.
func (v *vetter) unionRule(ts []vtok, k int, p *ptrFacts) {
	j := k + 1
	for j < len(ts) && (ts[j].Kind == msl.Attribute || ts[j].Kind == msl.Ident && !cppKeywords[ts[j].Text]) {
		j++
	}
	if j >= len(ts) || ts[j].Text != "{" {
		return
	}
	e := closeTok(ts, j)
	if e < 0 {
		return
	}
	for x := j + 1; x < e; x++ {
		if ts[x].Kind == msl.Punct && (ts[x].Text == "*" || ts[x].Text == "&") || ts[x].Kind == msl.Ident && (p.ptrHolders[ts[x].Text] || p.ptrAlias[ts[x].Text] || p.deducible[ts[x].Text]) {
			v.report(ts[k], "a union with a pointer member: writing an integer and reading the pointer converts an integer to a pointer, which Metal does not allow")
			return
		}
	}
}

// functionUse refuses a use of a function's name other than a call: its
// address (&f, f decayed, &S::f) is a function pointer or a way to the
// function's code.
func (v *vetter) functionUse(ts []vtok, k int, p *ptrFacts) {
	t := ts[k]
	name := t.Text
	if p.ptrDecl[name] || p.otherDecl[name] || v.declared[name]&(nType|nMacro|nNamespace) != 0 {
		return
	}
	switch {
	case p.funcs[name]:
	case p.prelude[name]:
		// metal_stdlib's names are often types and functions at once
		// (exp, is_same_v): only a plain function's name, or one whose
		// address is taken with &, is judged.
		if v.provided[name] != nFunc && !p.addressTaken(ts, k) {
			return
		}
	default:
		return
	}
	if isCall(ts, k) || k+1 < len(ts) && ts[k+1].Text == "::" {
		return
	}
	if k > 0 {
		switch ts[k-1].Text {
		case ".", "->", "~", "operator", ".*", "->*", "using", "friend", "template":
			return
		case "::":
			// ns::f and S::f: the address of S::f is a member function pointer.
			if k >= 2 && ts[k-2].Kind == msl.Ident && v.declared[ts[k-2].Text]&nType == 0 && ts[k-2].Text != "metal" && v.declared[ts[k-2].Text]&nNamespace == 0 && v.provided[ts[k-2].Text] == 0 {
				return
			}
		}
	}
	if inTemplateArgs(ts, k) || inDecltype(ts, k) || inUsing(ts, k) || explicitInstantiation(ts, k) {
		return
	}
	// A declaration: float f [[attr]] (...), or the name after a type.
	if k+1 < len(ts) && ts[k+1].Kind == msl.Attribute {
		return
	}
	v.report(t, "the address of function %s is taken: Metal has no function pointers (outside visible function tables, which metalab does not run), so a function may only be called", name)
}

// addressTaken reports whether the name at ts[k] follows a unary &,
// qualified or not (&f, &metal::f, &::f).
func (p *ptrFacts) addressTaken(ts []vtok, k int) bool {
	j := k - 1
	for j >= 1 && ts[j].Text == "::" {
		j--
		if ts[j].Kind == msl.Ident {
			j--
		}
	}
	return j >= 0 && ts[j].Text == "&" && (j == 0 || !operandEnd(ts, j-1) || p.castClose(ts, j-1))
}

// inTemplateArgs reports whether ts[k] lies in a template argument list
// (f<a, g>): a function given as a template's non-type argument is bound
// when the template is instantiated, and called directly.
func inTemplateArgs(ts []vtok, k int) bool {
	depth := 0
	for j := k - 1; j >= 0 && j > k-512; j-- {
		switch ts[j].Text {
		case ")", "]":
			if ts[j].Kind == msl.Punct {
				depth++
			}
		case "(", "[":
			if ts[j].Kind == msl.Punct {
				if depth == 0 {
					return false
				}
				depth--
			}
		case ">":
			depth++
		case ">>":
			depth += 2
		case "<":
			if depth > 0 {
				depth--
				continue
			}
			if j > 0 && ts[j-1].Kind == msl.Ident {
				gt := closeAngle(ts, j)
				return gt > k
			}
			return false
		case ";", "{", "}":
			return false
		}
	}
	return false
}

// inTemplateParams reports whether ts[k] lies in a template parameter
// list: template<..., void (*f)(float)>.
func inTemplateParams(ts []vtok, k int) bool {
	depth := 0
	for j := k - 1; j >= 0 && j > k-512; j-- {
		switch ts[j].Text {
		case ">":
			depth++
		case ">>":
			depth += 2
		case "<":
			if depth > 0 {
				depth--
				continue
			}
			if j > 0 && ts[j-1].Text == "template" {
				gt := closeAngle(ts, j)
				return gt > k
			}
		case ";", "{", "}":
			return false
		}
	}
	return false
}

// inDecltype reports whether ts[k] lies inside decltype(...) or sizeof(...).
func inDecltype(ts []vtok, k int) bool {
	depth := 0
	for j := k - 1; j >= 0 && j > k-512; j-- {
		switch ts[j].Text {
		case ")":
			depth++
		case "(":
			if depth > 0 {
				depth--
				continue
			}
			if j > 0 && (ts[j-1].Text == "decltype" || ts[j-1].Text == "sizeof" || ts[j-1].Text == "alignof") {
				return true
			}
		case ";", "{", "}":
			return false
		}
	}
	return false
}

// inUsing reports whether ts[k] is in a using-declaration.
func inUsing(ts []vtok, k int) bool {
	for j := k - 1; j >= 0 && j > k-64; j-- {
		switch ts[j].Text {
		case "using":
			return true
		case ";", "{", "}", "=":
			return false
		}
	}
	return false
}

// kind judges the expression ts[lo:hi].
func (p *ptrFacts) kind(ts []vtok, lo, hi int) exprKind {
	return p.kindDepth(ts, lo, hi, 0)
}

func (p *ptrFacts) kindDepth(ts []vtok, lo, hi, depth int) exprKind {
	if depth > 64 || lo >= hi {
		return kUnknown
	}
	for hi-lo >= 2 && ts[lo].Text == "(" && closeTok(ts, lo) == hi-1 {
		lo++
		hi--
	}
	// The operators at the top level.
	var comma, assign, quest, plus, other, mul = -1, -1, -1, -1, -1, -1
	for j := lo; j < hi; j++ {
		t := ts[j]
		if t.Kind != msl.Punct {
			continue
		}
		switch t.Text {
		case "(", "[", "{":
			r := closeTok(ts, j)
			if r < 0 || r >= hi {
				return kUnknown
			}
			j = r
			continue
		case "<":
			if j > lo && ts[j-1].Kind == msl.Ident {
				if r := closeAngle(ts, j); r > 0 && r < hi {
					j = r
					continue
				}
			}
			other = j
		case ",":
			comma = j
		case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=":
			if assign < 0 {
				assign = j
			}
		case "?":
			if quest < 0 {
				quest = j
			}
		case "+", "-":
			if operandEnd(ts, j-1) && j > lo {
				plus = j
			}
		case "&", "|", "^", "&&", "||", "==", "!=", "<=", ">=", ">", "<<", ">>":
			if operandEnd(ts, j-1) && j > lo {
				other = j
			}
		case "*", "/", "%":
			if operandEnd(ts, j-1) && j > lo {
				mul = j
			}
		}
	}
	switch {
	case comma >= 0:
		return p.kindDepth(ts, comma+1, hi, depth+1)
	case assign >= 0:
		return p.kindDepth(ts, lo, assign, depth+1)
	case quest >= 0:
		colon := -1
		d := 0
		for j := quest + 1; j < hi; j++ {
			switch ts[j].Text {
			case "?":
				d++
			case ":":
				if d == 0 && colon < 0 {
					colon = j
				}
				d--
			}
		}
		if colon < 0 {
			return kUnknown
		}
		a, b := p.kindDepth(ts, quest+1, colon, depth+1), p.kindDepth(ts, colon+1, hi, depth+1)
		if a == b {
			return a
		}
		return kUnknown
	case other >= 0:
		switch ts[other].Text {
		case "==", "!=", "<=", ">=", "<", ">", "&&", "||":
			return kNum
		}
		if p.kindDepth(ts, lo, other, depth+1) == kNum && p.kindDepth(ts, other+1, hi, depth+1) == kNum {
			return kNum
		}
		return kUnknown
	case plus >= 0:
		a, b := p.kindDepth(ts, lo, plus, depth+1), p.kindDepth(ts, plus+1, hi, depth+1)
		switch {
		case ts[plus].Text == "+" && (a == kPtr || b == kPtr):
			return kPtr // the other side cannot be a pointer too
		case ts[plus].Text == "-" && a == kPtr && b == kNum:
			return kPtr
		case a == kNum && b == kNum:
			return kNum
		}
		return kUnknown
	case mul >= 0:
		if p.kindDepth(ts, lo, mul, depth+1) == kNum && p.kindDepth(ts, mul+1, hi, depth+1) == kNum {
			return kNum
		}
		return kUnknown
	}
	return p.unary(ts, lo, hi, depth)
}

// unary judges a unary or postfix expression.
func (p *ptrFacts) unary(ts []vtok, lo, hi, depth int) exprKind {
	t := ts[lo]
	if t.Kind == msl.Punct {
		switch t.Text {
		case "&":
			// &x of an object; &f of a function is refused on its own.
			base := lo + 1
			for base < hi && ts[base].Text == "(" {
				base++
			}
			for base+2 < hi && (ts[base].Text == "::" || ts[base+1].Text == "::") {
				if ts[base].Text == "::" {
					base++
				} else {
					base += 2
				}
			}
			if base < hi && ts[base].Kind == msl.Ident && (p.funcs[ts[base].Text] || p.prelude[ts[base].Text]) && !p.ptrDecl[ts[base].Text] {
				return kUnknown // a function's address, refused on its own
			}
			return kPtr
		case "++", "--":
			return p.kindDepth(ts, lo+1, hi, depth+1)
		case "-", "!", "~":
			return kNum
		case "*", "+":
			return kUnknown
		case "(":
			r := closeTok(ts, lo)
			if r < 0 || r+1 >= hi {
				return kUnknown
			}
			if ptr, ok := p.castType(ts, lo+1, r); ok {
				if ptr {
					return kPtr
				}
				if isArithmeticType(ts, lo+1, r) {
					return kNum
				}
				return kUnknown
			}
			return p.postfix(ts, lo, hi, depth)
		}
		return kUnknown
	}
	return p.postfix(ts, lo, hi, depth)
}

// isArithmeticType reports whether ts[lo:hi] names a builtin scalar or
// vector type.
func isArithmeticType(ts []vtok, lo, hi int) bool {
	for j := lo; j < hi; j++ {
		x := ts[j].Text
		if x == "const" || x == "unsigned" || x == "signed" || x == "volatile" {
			continue
		}
		if j != hi-1 || !(builtinTypes[x] || scalarVector(x)) || x == "auto" {
			return false
		}
	}
	return true
}

// scalarVector reports whether name is one of Metal's scalar or vector
// types (uint, float4, half2, ...).
func scalarVector(name string) bool {
	base := strings.TrimRight(name, "1234")
	switch base {
	case "bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float", "bfloat", "size_t", "ptrdiff_t":
		return true
	}
	return false
}

// postfix judges a primary expression and its postfix operators.
func (p *ptrFacts) postfix(ts []vtok, lo, hi, depth int) exprKind {
	t := ts[lo]
	var k exprKind
	j := lo + 1
	switch {
	case t.Kind == msl.Int || t.Kind == msl.Float || t.Kind == msl.Char:
		k = kNum
	case t.Kind == msl.String:
		k = kPtr
	case t.Text == "nullptr" || t.Text == "this":
		k = kPtr
	case t.Text == "true" || t.Text == "false":
		k = kNum
	case t.Text == "sizeof" || t.Text == "alignof":
		return kNum
	case t.Text == "reinterpret_cast" || t.Text == "static_cast" || t.Text == "const_cast":
		if lo+1 < hi && ts[lo+1].Text == "<" {
			if gt := closeAngle(ts, lo+1); gt > 0 && gt+1 < hi {
				if hasTopStar(ts, lo+2, gt) || p.namesAlias(ts, lo+2, gt) {
					k = kPtr
				} else if isArithmeticType(ts, lo+2, gt) {
					k = kNum
				}
				if r := closeTok(ts, gt+1); r > 0 {
					j = r + 1
				}
			}
		}
	case t.Kind == msl.Ident:
		name := t.Text
		for j+1 < hi && ts[j].Text == "::" && ts[j+1].Kind == msl.Ident {
			name = ts[j+1].Text
			j += 2
		}
		if j == lo+1 {
			k = p.nameKindAt(name, lo)
		} else {
			k = p.nameKind(name)
		}
		if j < hi && ts[j].Text == "<" {
			if gt := closeAngle(ts, j); gt > 0 && gt < hi {
				j = gt + 1
			}
		}
		if j < hi && ts[j].Text == "(" {
			r := closeTok(ts, j)
			if r < 0 || r >= hi {
				return kUnknown
			}
			switch {
			case p.ptrAlias[name]:
				k = kPtr
			case builtinTypes[name] || scalarVector(name):
				k = kNum
			case p.funcs[name] && p.ptrRet[name]:
				k = kPtr
			default:
				k = kUnknown
			}
			j = r + 1
		}
	default:
		return kUnknown
	}
	for j < hi {
		switch ts[j].Text {
		case "[":
			r := closeTok(ts, j)
			if r < 0 || r >= hi {
				return kUnknown
			}
			k = kUnknown
			j = r + 1
		case ".", "->":
			if j+1 >= hi {
				return kUnknown
			}
			k = p.fieldKind(ts[j+1].Text)
			if isSwizzle(ts[j+1].Text) {
				k = kUnknown // a vector's component
			}
			j += 2
			if j < hi && ts[j].Text == "(" {
				r := closeTok(ts, j)
				if r < 0 || r >= hi {
					return kUnknown
				}
				k = kUnknown
				j = r + 1
			}
		case "++", "--":
			j++
		default:
			return kUnknown
		}
	}
	return k
}

// nameKind judges a name by its declarations: a pointer when every one the
// stream shows is a pointer or an array.
func (p *ptrFacts) nameKind(name string) exprKind {
	switch {
	case p.ptrDecl[name] && !p.otherDecl[name] && !p.funcs[name]:
		return kPtr
	case p.otherDecl[name] && !p.ptrDecl[name] && !p.funcs[name]:
		return kUnknown // a struct, a vector or a number: not known to be a number either
	}
	return kUnknown
}

// fieldKind judges a member by the members the stream declares, never by
// variables of the same name (ggml's local uint32_t qh beside the arrays
// named qh in its blocks): a pointer when every member of that name is a
// pointer or an array, whatever struct the object is; unknown when a
// member of that name is anything else or none is visible.
func (p *ptrFacts) fieldKind(name string) exprKind {
	if p.ptrField[name] && !p.otherField[name] && !p.funcs[name] {
		return kPtr
	}
	return kUnknown
}

// undefinedFuncs refuses functions the source declares and never defines
// (nor metal_stdlib): the compiler would bind such a declaration to a
// library outside the source, such as the C library's write or mprotect.
func (v *vetter) undefinedFuncs(ts []vtok, p *ptrFacts) {
	seen := map[string]bool{}
	walkScope(ts, 0, len(ts), false, "", 0, func(st *stmt) {
		if st.body {
			return
		}
		info := declares(ts, st)
		for _, j := range info.funcs {
			name := ts[j].Text
			if name == "operator" || p.defined[name] || v.provided[name] != 0 || seen[name] || deletedDecl(ts, st) || v.declared[name]&nType != 0 {
				continue
			}
			if k, _ := head(ts, st.idx); k < len(st.idx) && (ts[st.idx[k]].Text == "using" || ts[st.idx[k]].Text == "friend" || ts[st.idx[k]].Text == "template") {
				continue
			}
			seen[name] = true
			v.report(ts[j], "function %s is declared but not defined in the source: a Metal kernel may call only functions its source defines or metal_stdlib provides", name)
		}
	})
}

// deletedDecl reports whether a declaration ends in = delete, = default or
// = 0.
func deletedDecl(ts []vtok, st *stmt) bool {
	n := len(st.idx)
	if n < 2 {
		return false
	}
	for j := n - 1; j > 0 && j > n-4; j-- {
		x := ts[st.idx[j]].Text
		if (x == "delete" || x == "default" || x == "0") && ts[st.idx[j-1]].Text == "=" {
			return true
		}
	}
	return false
}

// bodyTokens marks the tokens inside function bodies: those no
// declaration at namespace or class scope holds.
func bodyTokens(ts []vtok) []bool {
	in := make([]bool, len(ts))
	for k := range in {
		in[k] = true
	}
	walkScope(ts, 0, len(ts), false, "", 0, func(st *stmt) {
		for _, j := range st.idx {
			in[j] = false
		}
	})
	return in
}

// localRules refuses, inside function bodies, the local state Metal does
// not have: static variables that are not constants (one object shared by
// every thread of every dispatch) and arrays whose bound is not a
// constant expression (variable-length arrays, which C++ does not have:
// the stack they take is chosen at run time).
func (v *vetter) localRules(ts []vtok, p *ptrFacts) {
	body := bodyTokens(ts)
	consts := map[string]bool{}
	for k, t := range ts {
		if t.Kind != msl.Ident || k == 0 || k+1 >= len(ts) || insideParens(ts, k) {
			continue
		}
		if n := ts[k+1].Text; n != "=" && n != "[" && n != "{" && n != ";" && n != "," && n != "(" {
			continue
		}
		for j := k - 1; j >= 0 && j > k-32; j-- {
			x := ts[j].Text
			if x == ";" || x == "{" || x == "}" || x == "(" || x == ")" {
				break
			}
			if x == "const" || x == "constexpr" || x == "constant" {
				consts[t.Text] = true
				break
			}
		}
	}
	for k, t := range ts {
		if !body[k] || t.Kind != msl.Ident {
			continue
		}
		if t.Text == "static" {
			constant := false
			for j := k + 1; j < len(ts) && j < k+32; j++ {
				x := ts[j].Text
				if x == ";" || x == "=" || x == "{" || x == "(" {
					break
				}
				if x == "const" || x == "constexpr" || x == "constant" {
					constant = true
				}
			}
			if !constant {
				v.report(t, "a static local variable is one object shared by every thread: Metal allows static storage only for constants in the constant address space")
			}
			continue
		}
		if k+1 >= len(ts) || ts[k+1].Text != "[" || cppKeywords[t.Text] || !declPrefix(ts, k-1, p.typeName) || insideParens(ts, k) {
			continue
		}
		r := closeTok(ts, k+1)
		for j := k + 2; j < r; j++ {
			x := ts[j]
			if x.Kind != msl.Ident || cppKeywords[x.Text] || consts[x.Text] || !p.otherDecl[x.Text] && !p.ptrDecl[x.Text] || v.global[x.Text]&nVar != 0 || v.declared[x.Text]&nType != 0 ||
				p.typeName(x.Text) || member(ts, j) || j+1 < r && ts[j+1].Text == "::" || v.provided[x.Text] != 0 {
				continue
			}
			v.report(x, "a variable-length array: the bound %s is not a constant expression, and Metal, as C++, needs constant array bounds", x.Text)
			break
		}
	}
}

// A forger is a function template that casts to one of its template
// parameters which a function parameter deduces: called with a pointer
// there, the cast (P)n turns an integer into a pointer.
type forger struct {
	params []int  // indices of the function parameters that deduce it
	tparam string // the template parameter
}

// deducedPointerRule refuses a call that passes a pointer where a
// forger's template parameter is deduced. Explicit template arguments are
// judged on their own (pointer types may not be one).
func (v *vetter) deducedPointerRule(ts []vtok, p *ptrFacts) {
	forgers := map[string][]forger{}
	byText := map[string][]int{}
	for k, t := range ts {
		if t.Kind == msl.Ident {
			byText[t.Text] = append(byText[t.Text], k)
		}
	}
	for _, f := range v.files {
		for _, fn := range f.Funcs {
			if fn.Template == nil || fn.Body == nil {
				continue
			}
			for _, tp := range fn.Template {
				var idx []int
				for i, prm := range fn.Params {
					if bareType(prm.Type) == tp {
						idx = append(idx, i)
					}
				}
				if len(idx) > 0 && castsTo(ts, byText[tp], f, fn.Pos, fn.End, tp) {
					forgers[fn.Name] = append(forgers[fn.Name], forger{params: idx, tparam: tp})
				}
			}
		}
	}
	if len(forgers) == 0 {
		return
	}
	body := bodyTokens(ts)
	for k, t := range ts {
		fs := forgers[t.Text]
		if len(fs) == 0 || !body[k] || k+1 >= len(ts) || ts[k+1].Text != "(" || member(ts, k) {
			continue
		}
		r := closeTok(ts, k+1)
		if r < 0 {
			continue
		}
		args := splitArgs(ts, k+2, r)
		for _, fg := range fs {
			for _, i := range fg.params {
				if i >= len(args) {
					continue
				}
				a := args[i]
				named := a[1] == a[0]+1 && ts[a[0]].Kind == msl.Ident && p.ptrDecl[ts[a[0]].Text] && !p.otherDecl[ts[a[0]].Text]
				if named || p.kind(ts, a[0], a[1]) == kPtr {
					v.report(ts[a[0]], "argument %d of %s deduces its template parameter %s as a pointer type, and %s casts to %s: an integer would become a pointer, which Metal does not allow", i+1, t.Text, fg.tparam, t.Text, fg.tparam)
				}
			}
		}
	}
}

// castsTo reports whether the tokens of file f between offsets lo and hi
// hold a cast to the type name tp that may convert an integer: (tp)x,
// tp(x), reinterpret_cast<tp>, as_type<tp>.
func castsTo(ts []vtok, uses []int, f *msl.File, lo, hi int, tp string) bool {
	for _, k := range uses {
		t := ts[k]
		if t.at.f != f || t.at.off < lo || t.at.off >= hi || t.Text != tp {
			continue
		}
		prev, next := "", ""
		if k > 0 {
			prev = ts[k-1].Text
		}
		if k+1 < len(ts) {
			next = ts[k+1].Text
		}
		switch {
		case prev == "(" && next == ")" && k+2 < len(ts) && operandStart(ts[k+2]):
			return true
		case next == "(" && !(k > 0 && ts[k-1].Kind == msl.Ident && declSpecifiers[ts[k-1].Text]):
			return true
		case prev == "<" && next == ">" && k >= 2 && (ts[k-2].Text == "reinterpret_cast" || ts[k-2].Text == "as_type" || ts[k-2].Text == "bit_cast"):
			return true
		}
	}
	return false
}

// splitArgs splits the tokens ts[lo:hi] of an argument list at its
// top-level commas, as [start, end) pairs.
func splitArgs(ts []vtok, lo, hi int) [][2]int {
	var out [][2]int
	start, depth := lo, 0
	for j := lo; j < hi; j++ {
		switch ts[j].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, [2]int{start, j})
				start = j + 1
			}
		}
	}
	if start < hi {
		out = append(out, [2]int{start, hi})
	}
	return out
}
