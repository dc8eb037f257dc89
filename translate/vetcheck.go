package translate

import (
	"fmt"
	"strconv"
	"strings"

	"metalab/msl"
)

// This file holds the rules Vet applies to the token stream, and the
// collection of the names a source declares that the call rule needs.

// A nameKind says what a declared name is; a name may be several.
type nameKind uint8

const (
	nType nameKind = 1 << iota
	nFunc
	nVar
	nMacro
	nNamespace
)

// names maps a name to what it is declared as.
type names map[string]nameKind

func (n names) add(name string, k nameKind) {
	if name != "" {
		n[name] |= k
	}
}

// check runs every rule over the walked source.
func (v *vetter) check() {
	v.provided = preludeNames()
	live := make([]vtok, 0, len(v.toks))
	var skipped []vtok
	for _, t := range v.toks {
		if t.skipped {
			skipped = append(skipped, t)
		} else {
			live = append(live, t)
		}
	}
	v.collect(live)
	v.scopes(live, true)
	v.checkDefines()
	v.rules(live, ruleLive, nil)
	v.rules(skipped, ruleSkipped, nil)
	facts := v.ptrFacts(live)
	v.undefinedFuncs(live, facts)
	v.localRules(live, facts)
	v.deducedPointerRule(live, facts)
	v.pointerRules(live, facts)
	for _, side := range v.side {
		mode := ruleLive
		if len(side) > 0 && side[0].skipped {
			mode = ruleSkipped
		}
		v.rules(side, mode, nil)
		if mode == ruleLive {
			v.pointerRules(side, facts)
		}
	}
}

// ruleMode says which rules apply to a run of tokens.
type ruleMode int

const (
	ruleLive    ruleMode = iota // code the compiler sees: every rule
	ruleSkipped                 // an #if branch msl finds inactive: the rules against reaching the host
	ruleBody                    // a macro body where it is defined: every token rule, with the parameters declared
)

// report refuses the construct at token t.
func (v *vetter) report(t vtok, format string, args ...any) {
	if t.def != nil {
		msg := fmt.Sprintf(format, args...)
		v.defMsgs[t.def.d.Name+"\x00"+msg] = true
		v.refuse(t.def.at, "", "%s (in the definition of macro %s)", msg, t.def.d.Name)
		return
	}
	v.refuse(t.at, t.macro, format, args...)
}

// collect gathers the names the source declares: from the msl parse of
// each file, and from the token stream (macro expansions included), which
// also sees lambdas, function-pointer parameters and declarations msl keeps
// opaque.
func (v *vetter) collect(ts []vtok) {
	d := names{}
	v.declared = d
	for _, f := range v.files {
		for _, fn := range f.Funcs {
			d.add(fn.Name, nFunc)
			for _, tp := range fn.Template {
				d.add(tp, nType)
			}
			for _, p := range fn.Params {
				d.add(p.Name, nVar)
			}
			msl.Walk(fn.Body, func(s msl.Stmt) bool {
				if dc, ok := s.(*msl.Decl); ok {
					for _, n := range dc.Names {
						d.add(n.Name, nVar)
					}
				}
				return true
			})
		}
		for _, st := range f.Structs {
			d.add(st.Name, nType)
			for _, tp := range st.Template {
				d.add(tp, nType)
			}
			for _, fd := range st.Fields {
				for _, n := range fd.Names {
					d.add(n.Name, nVar)
				}
			}
		}
		for _, df := range f.Defines {
			d.add(df.Name, nMacro)
		}
		for name := range f.Types {
			d.add(name, nType)
		}
		for name := range f.Enums {
			if !strings.Contains(name, "::") {
				d.add(name, nVar)
			}
		}
		for _, g := range f.Globals {
			for _, n := range g.Names {
				d.add(n.Name, nVar)
			}
		}
	}
	for _, md := range v.defs {
		d.add(md.d.Name, nMacro)
	}
	typeNames(ts, d)
	declarators(ts, d, func(name string) bool {
		return builtinTypes[name] || v.provided[name]&nType != 0 || d[name]&nType != 0
	})
}

// typeNames adds the names the tokens declare as types or namespaces:
// after struct, class, union, enum, typename and namespace, `using X =`,
// and the name a typedef declares.
func typeNames(ts []vtok, d names) {
	for k, t := range ts {
		if t.Kind != msl.Ident {
			continue
		}
		switch t.Text {
		case "struct", "class", "union", "enum", "typename", "concept":
			if n := identAfter(ts, k+1); n != "" {
				d.add(n, nType)
			}
		case "namespace":
			if k > 0 && ts[k-1].Text == "using" {
				continue
			}
			if n := identAfter(ts, k+1); n != "" {
				d.add(n, nNamespace)
			}
		case "using":
			if k+2 < len(ts) && ts[k+1].Kind == msl.Ident && ts[k+2].Text == "=" {
				d.add(ts[k+1].Text, nType)
			}
		case "typedef":
			d.add(typedefName(ts, k), nType)
		}
	}
}

// identAfter returns the identifier at ts[k], skipping attribute lists,
// alignas(...) and `class` (of enum class), or "".
func identAfter(ts []vtok, k int) string {
	for k < len(ts) {
		t := ts[k]
		switch {
		case t.Kind == msl.Attribute, t.Text == "class" || t.Text == "struct":
			k++
		case t.Text == "alignas" && k+1 < len(ts) && ts[k+1].Text == "(":
			k = closeTok(ts, k+1) + 1
			if k <= 0 {
				return ""
			}
		case t.Kind == msl.Ident && !cppKeywords[t.Text]:
			return t.Text
		default:
			return ""
		}
	}
	return ""
}

// typedefName returns the name the typedef at ts[k] declares: the
// identifier before its ';' (outside brackets), or the one in (*name).
func typedefName(ts []vtok, k int) string {
	depth, last := 0, ""
	for j := k + 1; j < len(ts); j++ {
		t := ts[j]
		switch t.Text {
		case "(", "[", "{":
			if t.Kind == msl.Punct {
				if t.Text == "(" && j+2 < len(ts) && (ts[j+1].Text == "*" || ts[j+1].Text == "&") && ts[j+2].Kind == msl.Ident && depth == 0 {
					return ts[j+2].Text
				}
				depth++
			}
		case ")", "]", "}":
			if t.Kind == msl.Punct {
				depth--
			}
		case ";":
			if depth <= 0 {
				return last
			}
		}
		if depth == 0 && t.Kind == msl.Ident && !cppKeywords[t.Text] && !strings.HasPrefix(t.Text, "__") {
			last = t.Text
		}
	}
	return last
}

// closeTok returns the index of the bracket closing the one at ts[i], or -1.
func closeTok(ts []vtok, i int) int {
	if i >= len(ts) {
		return -1
	}
	open := ts[i].Text
	var shut string
	switch open {
	case "(":
		shut = ")"
	case "[":
		shut = "]"
	case "{":
		shut = "}"
	default:
		return -1
	}
	depth := 0
	for k := i; k < len(ts); k++ {
		if ts[k].Kind != msl.Punct {
			continue
		}
		switch ts[k].Text {
		case open:
			depth++
		case shut:
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return -1
}

// closeAngle returns the index of the '>' closing the template argument
// list whose '<' is ts[i], or -1 when the '<' is a comparison.
func closeAngle(ts []vtok, i int) int {
	depth := 0
	for k := i; k < len(ts) && k < i+256; k++ {
		t := ts[k]
		if t.Kind != msl.Punct {
			continue
		}
		switch t.Text {
		case "<":
			depth++
		case ">":
			if depth--; depth == 0 {
				return k
			}
		case ">>":
			if depth -= 2; depth <= 0 {
				return k
			}
		case "(", "[":
			if k = closeTok(ts, k); k < 0 {
				return -1
			}
		case ";", "{", "}", "&&", "||", ")", "]":
			return -1
		}
	}
	return -1
}

// openAngle returns the index of the '<' opening the template argument list
// that the '>' at ts[i] closes, or -1.
func openAngle(ts []vtok, i int) int {
	depth := 0
	for k := i; k >= 0 && k > i-256; k-- {
		t := ts[k]
		if t.Kind != msl.Punct {
			continue
		}
		switch t.Text {
		case ">":
			depth++
		case ">>":
			depth += 2
		case "<":
			if depth--; depth == 0 {
				return k
			}
		case ";", "{", "}", "&&", "||":
			return -1
		}
	}
	return -1
}

// declarators adds the names the tokens declare as variables, parameters
// and functions: an identifier after a type (`float x`, `T* p`,
// `vec<T, 4> v`, `auto f = [..]`), a template parameter, a function pointer
// `(*deq)`, a structured binding or a lambda's init-capture.
func declarators(ts []vtok, d names, isType func(string) bool) {
	for k, t := range ts {
		if t.Kind == msl.Punct && t.Text == "<" && k > 0 && ts[k-1].Text == "template" {
			templateParams(ts, k, d)
			continue
		}
		if t.Kind != msl.Ident || cppKeywords[t.Text] || k+1 >= len(ts) {
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
		if k >= 2 && (ts[k-1].Text == "*" || ts[k-1].Text == "&" || ts[k-1].Text == "^") && ts[k-2].Text == "(" && (next.Text == ")" || next.Text == "[") {
			d.add(t.Text, nVar) // (*f)(...), (&a)[4]
			continue
		}
		if k >= 1 && (ts[k-1].Text == "[" || ts[k-1].Text == "&" && k >= 2 && ts[k-2].Text == "[") && next.Text == "=" {
			d.add(t.Text, nVar) // [x = e] init-capture
			continue
		}
		if k == 0 || !declPrefix(ts, k-1, isType) {
			continue
		}
		kind := nVar
		if next.Text == "(" {
			kind = nFunc | nVar
		}
		d.add(t.Text, kind)
	}
	// auto [a, b] = ...: structured bindings.
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
					d.add(ts[j].Text, nVar)
				}
			}
		}
	}
}

// declPrefix reports whether the token at ts[k] ends a type, so that an
// identifier after it is being declared.
func declPrefix(ts []vtok, k int, isType func(string) bool) bool {
	t := ts[k]
	switch {
	case t.Kind == msl.Ident:
		return !cppKeywords[t.Text] && !metalKeywords[t.Text] || declSpecifiers[t.Text]
	case t.Text == ">" || t.Text == ">>":
		o := openAngle(ts, k)
		return o > 0 && ts[o-1].Kind == msl.Ident
	case t.Text == "*" || t.Text == "&" || t.Text == "&&":
		for j := k - 1; j >= 0; j-- {
			p := ts[j]
			switch {
			case p.Text == "*" || p.Text == "&" || p.Text == "&&" || p.Text == "const" || p.Text == "volatile":
				continue
			case p.Kind == msl.Ident:
				return isType(p.Text) || declSpecifiers[p.Text] || metalKeywords[p.Text]
			case p.Text == ">" || p.Text == ">>":
				o := openAngle(ts, j)
				return o > 0 && ts[o-1].Kind == msl.Ident
			}
			return false
		}
	}
	return false
}

// templateParams adds the parameter names of the template parameter list
// whose '<' is ts[lt]: the identifier before each ',', '>' or '='.
func templateParams(ts []vtok, lt int, d names) {
	gt := closeAngle(ts, lt)
	if gt < 0 {
		return
	}
	depth := 0
	for k := lt + 1; k < gt; k++ {
		t := ts[k]
		switch t.Text {
		case "(", "[", "{", "<":
			depth++
		case ")", "]", "}", ">":
			depth--
		}
		if depth != 0 || t.Kind != msl.Ident || cppKeywords[t.Text] {
			continue
		}
		if n := ts[k+1].Text; n == "," || n == "=" || k+1 == gt {
			d.add(t.Text, nType|nVar)
		}
	}
}

// isCall reports whether the identifier at ts[k] is called: followed by
// '(' or by template arguments and '('.
func isCall(ts []vtok, k int) bool {
	j := k + 1
	if j < len(ts) && ts[j].Kind == msl.Punct && ts[j].Text == "<" {
		if j = closeAngle(ts, j); j < 0 {
			return false
		}
		j++
	}
	return j < len(ts) && ts[j].Kind == msl.Punct && ts[j].Text == "("
}

// member reports whether the identifier at ts[k] is reached through an
// object or a qualifier: after . -> :: ~ or operator.
func member(ts []vtok, k int) bool {
	if k == 0 {
		return false
	}
	p := ts[k-1].Text
	if p == "template" && k >= 2 {
		p = ts[k-2].Text
	}
	switch p {
	case ".", "->", "::", "~", ".*", "->*", "operator":
		return true
	}
	return false
}

// rules applies the token rules to ts; local names a macro's parameters.
func (v *vetter) rules(ts []vtok, mode ruleMode, local map[string]bool) {
	for k, t := range ts {
		switch t.Kind {
		case msl.Ident:
			v.identRule(ts, k, mode, local)
		case msl.Attribute:
			v.attributeRule(t)
		case msl.Punct:
			if t.Text == "::" {
				v.qualifiedRule(ts, k, mode, local)
			}
			if k+1 < len(ts) && ts[k+1].origin == t.origin && ts[k+1].Pos == t.End && t.Kind == msl.Punct && ts[k+1].Kind == msl.Punct {
				switch t.Text + ts[k+1].Text {
				case "<:", ":>", "<%", "%>", "%:":
					v.report(t, "the digraph %s%s is not allowed", t.Text, ts[k+1].Text)
				}
			}
		}
	}
}

func (v *vetter) identRule(ts []vtok, k int, mode ruleMode, local map[string]bool) {
	t := ts[k]
	name := t.Text
	prev := ""
	if k > 0 {
		prev = ts[k-1].Text
	}
	switch {
	case name == "asm" || name == "__asm" || name == "__asm__":
		v.report(t, "inline assembly (%s) is not allowed in a Metal kernel", name)
		return
	case name == "__attribute__":
		v.gnuAttributeRule(ts, k)
		return
	case name == "__declspec":
		v.report(t, "__declspec is not allowed in a Metal kernel")
		return
	case name == "_Pragma":
		v.pragmaOperatorRule(ts, k)
		return
	case strings.HasPrefix(name, "__builtin"):
		v.report(t, "the compiler builtin %s is not allowed in a Metal kernel", name)
		return
	case strings.HasPrefix(name, "__") && !reservedAllowed(name) && (mode != ruleSkipped || dangerousReserved(name)) &&
		!(mode == ruleBody && local[name]):
		// A macro's parameter (integral_const_binop(__op__, ...)) is
		// replaced at each use, where the expansion is checked.
		v.report(t, "the reserved identifier %s is not allowed: names beginning with __ belong to the compiler", name)
		return
	case name == "extern":
		if k+1 < len(ts) && ts[k+1].Kind == msl.String {
			v.report(t, "extern %s linkage is not allowed in a Metal kernel", ts[k+1].Text)
		} else {
			v.report(t, "extern declarations are not allowed in a Metal kernel")
		}
		return
	case name == "namespace" && prev != "using" && k+1 < len(ts) && ts[k+1].Text == "std":
		v.report(t, "namespace std may not be declared or extended in a Metal kernel")
		return
	}
	if mode == ruleSkipped {
		return
	}
	switch name {
	case "new":
		v.report(t, "new is not available in Metal: kernels cannot allocate memory")
		return
	case "delete":
		if prev != "=" {
			v.report(t, "delete is not available in Metal: kernels cannot allocate memory")
		}
		return
	case "throw", "try", "catch":
		v.report(t, "exception handling (%s) is not available in Metal", name)
		return
	case "thread_local":
		v.report(t, "thread_local storage is not available in Metal")
		return
	case "virtual":
		v.report(t, "virtual functions are not available in Metal")
		return
	case "dynamic_cast", "typeid":
		v.report(t, "run-time type information (%s) is not available in Metal", name)
		return
	case "goto":
		v.report(t, "goto is not available in Metal")
		return
	case "using":
		if k+2 < len(ts) && ts[k+1].Text == "namespace" {
			v.namespaceTarget(ts, k+2, "using namespace")
		}
		return
	case "namespace":
		if k+3 < len(ts) && ts[k+1].Kind == msl.Ident && ts[k+2].Text == "=" {
			v.namespaceTarget(ts, k+3, "namespace "+ts[k+1].Text+" =")
		}
		return
	}
	if cppKeywords[name] || metalKeywords[name] || builtinTypes[name] || member(ts, k) || local[name] {
		return
	}
	if strings.Contains(name, vetParam) {
		return
	}
	known := v.declared[name] != 0 || v.provided[name] != 0
	if isCall(ts, k) {
		if known || explicitInstantiation(ts, k) {
			return
		}
		if hostFunctions[name] {
			v.report(t, "call of %s: the C library is not available to Metal kernels", name)
		} else {
			v.report(t, "call of undeclared function %s: neither the source, its includes nor metal_stdlib declares it", name)
		}
		return
	}
	if hostFunctions[name] && !known && (k+1 >= len(ts) || ts[k+1].Text != "::") {
		v.report(t, "%s: the C library is not available to Metal kernels", name)
	}
}

// explicitInstantiation reports whether ts[k] is in an explicit template
// instantiation (`template [[host_name("x")]] kernel void k<float>(...);`),
// which names a template rather than calling it; the translator checks
// that the template exists.
func explicitInstantiation(ts []vtok, k int) bool {
	j := k
	for j > 0 && j > k-4096 {
		p := ts[j-1]
		if p.Kind == msl.Punct && (p.Text == ";" || p.Text == "{" || p.Text == "}") {
			break
		}
		j--
	}
	for j < k && ts[j].Kind == msl.Attribute {
		j++
	}
	return j < k && ts[j].Text == "template" && ts[j+1].Text != "<"
}

// vetParam marks the placeholder arguments of macro bodies checked at
// their definition.
const vetParam = "vetparam"

// namespaceTarget checks the namespace named at ts[k] by using namespace
// or a namespace alias: metal or one the source declares.
func (v *vetter) namespaceTarget(ts []vtok, k int, what string) {
	if ts[k].Text == "::" && k+1 < len(ts) {
		k++
	}
	n := ts[k].Text
	if n == "metal" || v.declared[n]&nNamespace != 0 || tensorNamespace(n) {
		return
	}
	v.report(ts[k], "%s %s: only metal and the source's own namespaces may be named", what, n)
}

// qualifiedRule checks a '::': std:: is refused, a leading :: may only
// reach metal or the source's own file-scope names, and the first name of
// a qualified name must be declared.
func (v *vetter) qualifiedRule(ts []vtok, k int, mode ruleMode, local map[string]bool) {
	t := ts[k]
	next := ""
	if k+1 < len(ts) && ts[k+1].Kind == msl.Ident {
		next = ts[k+1].Text
	}
	var p vtok
	if k > 0 {
		p = ts[k-1]
	}
	leading := k == 0 || !(p.Kind == msl.Ident && !cppKeywords[p.Text] || p.Text == ">" || p.Text == ">>" || p.Text == ")")
	if leading {
		switch {
		case next == "":
		case next == "std":
			v.report(t, "std::: the C++ standard library is not available in Metal")
		case next == "metal" || v.global[next] != 0:
		default:
			v.report(t, "::%s reaches outside the source: only metal:: and the source's own file-scope names may follow a leading ::", next)
		}
		return
	}
	qi := k - 1
	switch p.Text {
	case ")":
		return // decltype(x)::type
	case ">", ">>":
		if qi = openAngle(ts, k-1) - 1; qi < 0 || ts[qi].Kind != msl.Ident {
			return
		}
	}
	if qi > 0 && ts[qi-1].Text == "::" {
		return // a later component: the first was checked
	}
	q := ts[qi].Text
	switch {
	case q == "std":
		v.report(ts[qi], "std::%s: the C++ standard library is not available in Metal", next)
	case mode == ruleSkipped:
	case q == "metal" || v.declared[q] != 0 || v.provided[q] != 0 || local[q] || builtinTypes[q] || strings.Contains(q, vetParam):
	default:
		v.report(ts[qi], "%s::%s: %s is not declared in the source, its includes or metal_stdlib", q, next, q)
	}
}

// attributeRule checks a [[...]] attribute list: Metal's attributes and
// the standard ones only, and no vendor namespaces beyond harmless GNU
// attributes.
func (v *vetter) attributeRule(t vtok) {
	inner := strings.TrimSpace(t.Text[2 : len(t.Text)-2])
	if strings.HasPrefix(inner, "using ") || strings.HasPrefix(inner, "using\t") {
		v.report(t, "[[using ...]] attribute lists are not allowed in a Metal kernel")
		return
	}
	for _, item := range splitAttrList(inner) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k := 0
		for k < len(item) && (isWordByte(item[k]) || item[k] == ':' || item[k] == ' ' || item[k] == '\t') {
			k++
		}
		name := strings.ReplaceAll(strings.ReplaceAll(item[:k], " ", ""), "\t", "")
		if ns, attr, ok := strings.Cut(name, "::"); ok {
			if (ns == "gnu" || ns == "clang") && harmlessGNUAttributes[strings.Trim(attr, "_")] {
				continue
			}
			v.report(t, "attribute [[%s]] is not a Metal attribute", name)
			continue
		}
		if !metalAttributes[name] {
			v.report(t, "attribute [[%s]] is not a Metal attribute", name)
		}
	}
}

// splitAttrList splits an attribute list at the commas outside brackets and quotes.
func splitAttrList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '"', '\'':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// gnuAttributeRule checks __attribute__((...)) at ts[k]: only the
// harmless attributes are allowed.
func (v *vetter) gnuAttributeRule(ts []vtok, k int) {
	t := ts[k]
	if k+2 >= len(ts) || ts[k+1].Text != "(" || ts[k+2].Text != "(" {
		v.report(t, "__attribute__ must be followed by ((...))")
		return
	}
	end := closeTok(ts, k+1)
	if end < 0 {
		v.report(t, "__attribute__((...)) is not closed")
		return
	}
	depth := 0
	for j := k + 2; j < end; j++ {
		a := ts[j]
		switch a.Text {
		case "(":
			depth++
			continue
		case ")":
			depth--
			continue
		}
		if depth != 1 || a.Kind != msl.Ident || j > k+3 && ts[j-1].Text != "," {
			continue
		}
		if name := strings.Trim(a.Text, "_"); !harmlessGNUAttributes[name] {
			v.report(t, "__attribute__((%s)) is not allowed in a Metal kernel (allowed: always_inline, noinline, unused, aligned, packed, const, pure, flatten, hot, cold, noreturn, deprecated, warn_unused_result)", a.Text)
		}
	}
}

// pragmaOperatorRule checks _Pragma("...") at ts[k] as a #pragma.
func (v *vetter) pragmaOperatorRule(ts []vtok, k int) {
	t := ts[k]
	if k+3 >= len(ts) || ts[k+1].Text != "(" || ts[k+2].Kind != msl.String || ts[k+3].Text != ")" {
		v.report(t, "_Pragma must be given one string literal")
		return
	}
	s, err := strconv.Unquote(ts[k+2].Text)
	if err != nil {
		s = strings.Trim(ts[k+2].Text, `"`)
	}
	if msg := pragmaProblem(strings.TrimSpace(s)); msg != "" {
		v.report(t, "%s", msg)
	}
}

// pragma checks a #pragma line's text.
func (v *vetter) pragma(at srcPos, macro, text string) {
	if msg := pragmaProblem(text); msg != "" {
		v.refuse(at, macro, "%s", msg)
	}
}

// pragmaProblem says why a pragma is refused, or "" when it is allowed:
// once, unroll and nounroll, clang loop and clang diagnostic, METAL, GCC
// diagnostic, GCC unroll and GCC ivdep, and message. Everything else either
// changes how the kernel is compiled (GCC optimize, target, push_options,
// pack, redefine_extname, push_macro) or is not Metal.
func pragmaProblem(text string) string {
	w := strings.Fields(strings.NewReplacer("(", " ( ", ")", " ) ").Replace(text))
	if len(w) == 0 {
		return ""
	}
	second := ""
	if len(w) > 1 {
		second = w[1]
	}
	switch w[0] {
	case "once", "unroll", "nounroll", "unroll_and_jam", "nounroll_and_jam", "METAL", "message":
		return ""
	case "clang":
		if second == "loop" || second == "diagnostic" || second == "unroll" || second == "nounroll" {
			return ""
		}
		return fmt.Sprintf("#pragma clang %s is not allowed in a Metal kernel (allowed: clang loop, clang diagnostic)", second)
	case "GCC":
		switch second {
		case "diagnostic", "unroll", "ivdep":
			return ""
		}
		return fmt.Sprintf("#pragma GCC %s is not allowed: it changes how the kernel is compiled", second)
	}
	return fmt.Sprintf("#pragma %s is not a pragma Metal kernels may use (allowed: once, unroll, nounroll, clang loop, clang diagnostic, METAL, GCC diagnostic, GCC unroll, GCC ivdep, message)", w[0])
}

// checkDefines checks each macro's name and body where it is defined, so
// that a macro the source never uses (but the generated code after it might
// expand) holds nothing the rules refuse either. Uses are checked again in
// their expansion.
func (v *vetter) checkDefines() {
	for _, md := range v.defs {
		d := md.d
		at := md.at
		switch name := d.Name; {
		case md.skipped:
			// In a branch the compiler skips the name defines nothing.
		case name == "defined" || cppKeywords[name] || metalKeywords[name]:
			v.refuse(at, "", "#define %s: redefining a keyword is not allowed", name)
		case strings.HasPrefix(name, "mtl_"):
			v.refuse(at, "", "#define %s: names beginning with mtl_ belong to the cpu backend's generated code", name)
		case strings.HasPrefix(name, "__") && !reservedAllowed(name):
			v.refuse(at, "", "#define %s: the reserved identifier %s is not allowed: names beginning with __ belong to the compiler", name, name)
		}
		local := map[string]bool{}
		for _, p := range d.Params {
			p = strings.TrimSpace(strings.TrimSuffix(p, "..."))
			if p == "" {
				p = "__VA_ARGS__"
			}
			local[p] = true
		}
		toks, _ := msl.Lex("", []byte("_ "+d.Body))
		var body []vtok
		for _, t := range toks[1:] {
			if t.Kind != msl.Comment {
				body = append(body, vtok{Token: t, at: at, def: md, origin: -1})
			}
		}
		// Identifiers pasted with ## or stringised with # are fragments of
		// tokens made at each use, where the expansion is checked.
		kept := body[:0]
		for k, t := range body {
			pasted := k > 0 && body[k-1].Text == "##" || k+1 < len(body) && body[k+1].Text == "##" ||
				d.FuncLike && k > 0 && body[k-1].Text == "#"
			if pasted && t.Kind == msl.Ident {
				t.Text = vetParam
			}
			kept = append(kept, t)
		}
		mode := ruleBody
		if md.skipped {
			mode = ruleSkipped
		}
		v.rules(kept, mode, local)
	}
}
