package translate

import (
	"io/fs"
	"path"
	"strings"
	"sync"

	"metalab/backend/cpu/prelude"
	"metalab/internal/directive"
	"metalab/msl"
)

// This file walks the declarations at namespace and class scope: it finds
// the program-scope variables (which must be constant, with a constant
// initialiser), the functions and their constexpr-ness, the names declared
// at file scope, and, run over the prelude, the names metal_stdlib provides.

// A stmt is one declaration at namespace or class scope.
type stmt struct {
	idx       []int // indices of its tokens, nested class and function bodies left out
	body      bool  // a function definition
	class     bool  // at class scope
	classBody int   // where in idx a class or enum body was (its tokens left out), or -1
	enumerors []int // indices of the enumerator list of an enum definition
	namespace string
}

// braceKind says what a '{' at the top of a declaration opens.
type braceKind int

const (
	braceFunc braceKind = iota
	braceNamespace
	braceClass
	braceEnum
	braceInit
)

// maxScopeDepth bounds nested namespaces and classes.
const maxScopeDepth = 256

// walkScope splits ts[lo:hi] into declarations at namespace (class false)
// or class scope and calls fn for each, recursing into namespaces and
// classes. hidden is passed through as the name of the enclosing namespace
// the prelude keeps its implementation in, if any.
func walkScope(ts []vtok, lo, hi int, class bool, ns string, depth int, fn func(*stmt)) {
	if depth > maxScopeDepth {
		return
	}
	i := lo
	for i < hi {
		st := &stmt{class: class, classBody: -1, namespace: ns}
		paren := 0
	loop:
		for i < hi {
			t := ts[i]
			if t.Kind == msl.Punct {
				switch t.Text {
				case "(", "[":
					paren++
				case ")", "]":
					if paren > 0 {
						paren--
					}
				case ";":
					if paren == 0 {
						i++
						break loop
					}
				case "}":
					i++
					break loop
				case "{":
					m := closeTok(ts, i)
					if m < 0 || m >= hi {
						m = hi - 1
					}
					if paren > 0 {
						for ; i <= m; i++ {
							st.idx = append(st.idx, i)
						}
						continue
					}
					switch braceOf(ts, st.idx) {
					case braceNamespace:
						fn(st)
						walkScope(ts, i+1, m, false, namespaceName(ts, st.idx, ns), depth+1, fn)
						i = m + 1
						st = &stmt{class: class, classBody: -1, namespace: ns}
						continue
					case braceClass:
						walkScope(ts, i+1, m, true, ns, depth+1, fn)
						st.classBody = len(st.idx)
						i = m + 1
						continue
					case braceEnum:
						st.classBody = len(st.idx)
						for j := i + 1; j < m; j++ {
							st.enumerors = append(st.enumerors, j)
						}
						i = m + 1
						continue
					case braceInit:
						for ; i <= m; i++ {
							st.idx = append(st.idx, i)
						}
						continue
					}
					st.body = true
					i = m + 1
					break loop
				}
			}
			st.idx = append(st.idx, i)
			i++
		}
		if len(st.idx) > 0 || st.body {
			fn(st)
		}
	}
}

// namespaceName returns the name a namespace declaration opens, qualified
// by the enclosing one.
func namespaceName(ts []vtok, idx []int, outer string) string {
	name := ""
	for _, k := range idx {
		if ts[k].Kind == msl.Ident && ts[k].Text != "namespace" && ts[k].Text != "inline" {
			name = ts[k].Text
		}
	}
	if outer == "" {
		return name
	}
	return outer + "::" + name
}

// head returns the position in idx after leading attribute lists,
// template headers and access specifiers, and whether a template header
// was seen.
func head(ts []vtok, idx []int) (int, bool) {
	k, tmpl := 0, false
	for k < len(idx) {
		t := ts[idx[k]]
		switch {
		case t.Kind == msl.Attribute:
			k++
		case t.Text == "template" && k+1 < len(idx) && ts[idx[k+1]].Text == "<":
			gt := closeAngle(ts, idx[k+1])
			if gt < 0 {
				return k, tmpl
			}
			for k < len(idx) && idx[k] <= gt {
				k++
			}
			tmpl = true
		case (t.Text == "public" || t.Text == "private" || t.Text == "protected") && k+1 < len(idx) && ts[idx[k+1]].Text == ":":
			k += 2
		default:
			return k, tmpl
		}
	}
	return k, tmpl
}

// braceOf decides what the '{' after the declaration head idx opens.
func braceOf(ts []vtok, idx []int) braceKind {
	k, _ := head(ts, idx)
	rest := idx[k:]
	if len(rest) == 0 {
		return braceInit
	}
	first := ts[rest[0]].Text
	if first == "namespace" || first == "inline" && len(rest) > 1 && ts[rest[1]].Text == "namespace" ||
		first == "extern" && len(rest) > 1 && ts[rest[1]].Kind == msl.String {
		return braceNamespace
	}
	paren, sawParen, colonAfterParen := 0, false, false
	for _, j := range rest {
		t := ts[j]
		switch t.Text {
		case "(", "[":
			paren++
			sawParen = sawParen || t.Text == "("
			continue
		case ")", "]":
			paren--
			continue
		}
		if paren != 0 {
			continue
		}
		switch {
		case t.Text == "=":
			return braceInit
		case !sawParen && (t.Text == "struct" || t.Text == "class" || t.Text == "union"):
			return braceClass
		case !sawParen && t.Text == "enum":
			return braceEnum
		case sawParen && t.Text == ":":
			colonAfterParen = true
		}
	}
	if !sawParen {
		return braceInit // T x{...}
	}
	last := ts[rest[len(rest)-1]]
	if colonAfterParen && last.Kind == msl.Ident && !cppKeywords[last.Text] {
		return braceInit // S(int x) : a{x} {  -- a member initialiser
	}
	return braceFunc
}

// A declInfo is what one declaration declares.
type declInfo struct {
	types, funcs, vars []int // token indices of the names
	constexpr          bool  // the functions are constexpr
	decls              []varDecl
	namespace          int // index of the namespace's name, or -1
}

// A varDecl is one declarator of a variable declaration: its name and the
// tokens of its initialiser.
type varDecl struct {
	name  int   // token index
	quals []int // token indices before the name in its declaration
	init  []int // token indices after the name
}

// declares classifies a declaration.
func declares(ts []vtok, st *stmt) declInfo {
	info := declInfo{namespace: -1}
	k, _ := head(ts, st.idx)
	rest := st.idx[k:]
	if len(rest) == 0 {
		return info
	}
	cb := st.classBody - k // where the class or enum body was, in rest
	if st.classBody < 0 || cb > len(rest) {
		cb = -1
	}
	text := func(j int) string {
		if j < len(rest) {
			return ts[rest[j]].Text
		}
		return ""
	}
	for n, j := range st.enumerors {
		if ts[j].Kind == msl.Ident && (n == 0 || ts[j-1].Text == ",") {
			info.vars = append(info.vars, j) // an enumerator starts each item
		}
	}
	switch text(0) {
	case "template", "static_assert", "friend", "extern":
		return info
	case "typedef":
		if n := typedefName(ts, rest[0]); n != "" {
			for _, j := range rest {
				if ts[j].Text == n {
					info.types = append(info.types, j)
				}
			}
		}
		return info
	case "using":
		if text(1) == "namespace" {
			return info
		}
		if text(2) == "=" {
			info.types = append(info.types, rest[1])
			return info
		}
		for j := len(rest) - 1; j >= 0; j-- {
			if ts[rest[j]].Kind == msl.Ident {
				info.types = append(info.types, rest[j])
				info.funcs = append(info.funcs, rest[j])
				break
			}
		}
		return info
	case "namespace", "inline":
		if text(0) == "inline" && text(1) != "namespace" {
			break
		}
		for j, x := range rest {
			if ts[x].Kind == msl.Ident && ts[x].Text != "namespace" && ts[x].Text != "inline" {
				info.namespace = rest[j]
			}
		}
		return info
	}
	for j, x := range rest {
		if j == cb {
			break
		}
		switch ts[x].Text {
		case "struct", "class", "union", "enum":
			for y := j + 1; y < len(rest) && y != cb; y++ {
				if t := ts[rest[y]]; t.Kind == msl.Ident && t.Text != "class" && t.Text != "struct" && !cppKeywords[t.Text] {
					info.types = append(info.types, rest[y])
					break
				}
			}
		}
	}
	// A function: a name (or an operator) followed by '(' at the top.
	if j := funcParen(ts, rest, cb); j > 0 && (st.body || !exprArgs(ts, rest[j])) {
		name := rest[j-1]
		for y := 0; y < j; y++ {
			switch ts[rest[y]].Text {
			case "operator":
				name = rest[y]
			case "constexpr", "consteval":
				info.constexpr = true
			}
		}
		info.funcs = append(info.funcs, name)
		return info
	}
	if st.body {
		return info
	}
	if cb < 0 && len(info.types) == 1 && info.types[0] == rest[len(rest)-1] {
		return info // struct S; -- a declaration of the type alone
	}
	info.decls = varDecls(ts, rest, cb)
	for _, d := range info.decls {
		info.vars = append(info.vars, d.name)
	}
	return info
}

// funcParen returns the position in rest of the '(' opening a function's
// parameters: the first '(' at the top level (outside brackets and template
// arguments, after any class body, before any '=') after a name, or the
// first one after an operator's symbol; or -1.
func funcParen(ts []vtok, rest []int, cb int) int {
	depth, op := 0, false
	for j := max(cb, 0); j < len(rest); j++ {
		x := rest[j]
		t := ts[x]
		if t.Kind == msl.Ident && t.Text == "operator" && depth == 0 {
			op = true
			continue
		}
		switch t.Text {
		case "=":
			if depth == 0 && !op {
				return -1
			}
		case "<":
			if op {
				continue
			}
			if gt := closeAngle(ts, x); gt > 0 {
				for j+1 < len(rest) && rest[j+1] <= gt {
					j++
				}
			}
		case "[", "{":
			if !op {
				depth++
			}
		case "]", "}":
			if !op {
				depth--
			}
		case "(":
			if depth != 0 || j == 0 {
				return -1
			}
			if op {
				if ts[rest[j-1]].Text == "operator" && j+1 < len(rest) && ts[rest[j+1]].Text == ")" {
					continue // operator() -- its parameters follow
				}
				return j
			}
			if p := ts[rest[j-1]]; p.Kind == msl.Ident && !cppKeywords[p.Text] {
				return j
			}
			return -1
		}
	}
	return -1
}

// exprArgs reports whether the parenthesised group at ts[lp] holds an
// expression (a literal or a call) rather than parameter declarations.
func exprArgs(ts []vtok, lp int) bool {
	rp := closeTok(ts, lp)
	if rp < 0 {
		return false
	}
	for j := lp + 1; j < rp; j++ {
		switch ts[j].Kind {
		case msl.Int, msl.Float, msl.String, msl.Char:
			return true
		}
		if ts[j].Kind == msl.Ident && isCall(ts, j) && !cppKeywords[ts[j].Text] {
			return true
		}
	}
	return false
}

// varDecls splits a variable declaration into its declarators.
func varDecls(ts []vtok, rest []int, classBody int) []varDecl {
	var out []varDecl
	start := 0
	if classBody >= 0 {
		start = classBody
	}
	var quals []int
	if classBody < 0 {
		quals = nil
	} else {
		quals = append(quals, rest[:classBody]...)
	}
	seg := start
	depth := 0
	for j := start; j <= len(rest); j++ {
		end := j == len(rest)
		if !end {
			t := ts[rest[j]]
			switch t.Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			case "<":
				if gt := closeAngle(ts, rest[j]); gt > 0 {
					for j+1 < len(rest) && rest[j+1] <= gt {
						j++
					}
				}
			}
			if !(t.Text == "," && depth == 0) {
				continue
			}
		}
		part := rest[seg:j]
		if d, ok := declarator(ts, part); ok {
			if len(out) == 0 {
				d.quals = append(quals, d.quals...)
			} else {
				d.quals = append(append([]int{}, out[0].quals...), d.quals...)
			}
			out = append(out, d)
		}
		seg = j + 1
	}
	return out
}

// declarator finds the name in one declarator: the identifier before the
// first '=', '[', '{', '(' or attribute list at the top.
func declarator(ts []vtok, part []int) (varDecl, bool) {
	last := -1
	for j, x := range part {
		t := ts[x]
		if t.Text == "=" || t.Text == "[" || t.Text == "{" || t.Text == "(" || t.Kind == msl.Attribute {
			if last < 0 {
				return varDecl{}, false
			}
			return varDecl{name: part[last], quals: part[:last], init: part[last+1:]}, true
		}
		if t.Text == "<" {
			continue
		}
		if t.Kind == msl.Ident && !cppKeywords[t.Text] && !metalKeywords[t.Text] {
			last = j
		}
	}
	if last < 0 {
		return varDecl{}, false
	}
	return varDecl{name: part[last], quals: part[:last], init: part[last+1:]}, true
}

// dynamicTypes returns the source's structs whose objects run code when
// made or destroyed: a user-provided constructor that is not constexpr, or
// a user-provided destructor.
func dynamicTypes(files []*msl.File) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		for _, fn := range f.Funcs {
			if fn.Owner == "" || fn.Name != fn.Owner && fn.Name != "~"+fn.Owner {
				continue
			}
			after := strings.ReplaceAll(f.Text(fn.Rparen, fn.End), " ", "")
			if strings.Contains(after, "=default") || strings.Contains(after, "=delete") {
				continue
			}
			if fn.Name == fn.Owner && strings.Contains(f.Text(fn.Pos, fn.NamePos), "constexpr") {
				continue
			}
			out[fn.Owner] = true
		}
	}
	return out
}

// scopes walks the declarations at namespace and class scope of the live
// tokens: it records file-scope names and constexpr functions and, when
// checking, refuses program-scope variables that are not constant or whose
// initialiser calls one of the source's functions (it would run when the
// kernel is loaded).
func (v *vetter) scopes(ts []vtok, check bool) {
	v.global = names{}
	v.constexprFuncs = map[string]bool{}
	v.dynamicTypes = dynamicTypes(v.files)
	var vars []*stmt
	walkScope(ts, 0, len(ts), false, "", 0, func(st *stmt) {
		info := declares(ts, st)
		if !st.class {
			for _, j := range info.types {
				v.global.add(ts[j].Text, nType)
			}
			for _, j := range info.funcs {
				v.global.add(ts[j].Text, nFunc)
			}
			for _, j := range info.vars {
				v.global.add(ts[j].Text, nVar)
			}
			if info.namespace >= 0 {
				v.global.add(ts[info.namespace].Text, nNamespace)
			}
		}
		for _, j := range info.funcs {
			v.declared.add(ts[j].Text, nFunc)
			if info.constexpr {
				v.constexprFuncs[ts[j].Text] = true
			}
		}
		if len(info.decls) > 0 {
			vars = append(vars, st)
		}
	})
	if !check {
		return
	}
	for _, st := range vars {
		for _, d := range declares(ts, st).decls {
			v.programVar(ts, st, d)
		}
	}
}

// programVar checks one program-scope variable (or static data member).
func (v *vetter) programVar(ts []vtok, st *stmt, d varDecl) {
	name := ts[d.name]
	quals := map[string]bool{}
	for _, j := range d.quals {
		quals[ts[j].Text] = true
	}
	hasInit := false
	for _, j := range d.init {
		if t := ts[j]; t.Text == "=" || t.Text == "{" || t.Text == "(" {
			hasInit = true
			break
		}
	}
	if st.class && (!quals["static"] || !hasInit) {
		return // an ordinary member, or a static member's declaration
	}
	if quals["threadgroup"] {
		return // the translator says where threadgroup memory may be declared
	}
	if !quals["constant"] && !quals["constexpr"] && !quals["const"] {
		what := "program-scope variable"
		if st.class {
			what = "static data member"
		}
		v.report(name, "%s %s is not constant: Metal allows program-scope variables only in the constant address space, with a constant initialiser", what, name.Text)
		return
	}
	for _, j := range append(append([]int{}, d.quals...), d.init...) {
		if t := ts[j]; t.Kind == msl.Ident && v.dynamicTypes[t.Text] {
			v.report(name, "program-scope variable %s has a dynamic initialiser: %s's constructor or destructor would run when the kernel is loaded or unloaded; make it constexpr or default", name.Text, t.Text)
			return
		}
	}
	for _, j := range d.init {
		t := ts[j]
		if t.Kind != msl.Ident || !isCall(ts, j) || j > 0 && (ts[j-1].Text == "." || ts[j-1].Text == "->") {
			continue
		}
		f := t.Text
		if cppKeywords[f] || builtinTypes[f] || metalKeywords[f] || v.provided[f] != 0 || v.declared[f]&nType != 0 || v.constexprFuncs[f] {
			continue
		}
		if j > 0 && ts[j-1].Text == "::" && qualifiedByMetal(ts, j) {
			continue
		}
		if v.declared[f]&nFunc != 0 {
			v.report(t, "program-scope variable %s has a dynamic initialiser: it calls %s, which would run when the kernel is loaded; make %s constexpr or the initialiser constant", name.Text, f, f)
			return
		}
	}
}

// qualifiedByMetal reports whether the qualified name ending at ts[j]
// begins with metal::.
func qualifiedByMetal(ts []vtok, j int) bool {
	for j >= 2 && ts[j-1].Text == "::" {
		j -= 2
		if ts[j].Text == ">" {
			if o := openAngle(ts, j); o > 0 {
				j = o - 1
			}
		}
	}
	return ts[j].Text == "metal" || j+1 < len(ts) && ts[j].Text == "::" && ts[j+1].Text == "metal"
}

var (
	preludeOnce   sync.Once
	preludeSet    names
	preludeDefine map[string]*msl.Define
	preludeFuncs  map[string]bool
)

// preludeNames returns the names metal_stdlib provides to kernels: what
// the prelude headers declare at namespace scope, with their macros
// expanded, outside the namespaces that hold its implementation
// (mtl_detail, std) and the backend's own mtl_/MTL_ names; and the macros
// still defined at its end.
func preludeNames() names {
	preludeOnce.Do(func() { preludeSet, preludeDefine, preludeFuncs = scanPreludeFuncs(prelude.FS) })
	return preludeSet
}

// metalFuncs returns the names of the functions metal_stdlib declares in
// namespace metal itself (not in metal::fast or metal::precise, nor in the
// prelude's implementation namespaces).
func metalFuncs() map[string]bool {
	preludeNames()
	return preludeFuncs
}

// preludeMacros returns the macros metal_stdlib leaves defined, internal
// ones included: they are defined before the kernel's first line.
func preludeMacros() map[string]*msl.Define {
	preludeNames()
	return preludeDefine
}

// scanPrelude computes preludeNames from the headers in fsys, and the
// macros still defined at their end.
func scanPrelude(fsys fs.FS) (names, map[string]*msl.Define) {
	n, m, _ := scanPreludeFuncs(fsys)
	return n, m
}

// scanPreludeFuncs is scanPrelude that also returns the names of the
// functions declared in namespace metal itself (metalFuncs).
func scanPreludeFuncs(fsys fs.FS) (names, map[string]*msl.Define, map[string]bool) {
	v := &vetter{fsys: fsys, macros: map[string]*msl.Define{}, included: map[string]bool{}, inClos: map[string]bool{},
		budget: 1 << 28, defMsgs: map[string]bool{}, declared: names{}, ms: &directive.Table{Default: compilerDefault}, once: map[string]bool{},
		alts: map[string][]*msl.Define{}}
	for _, root := range []string{"metal_stdlib", "simd/simd.h"} {
		body, err := fs.ReadFile(fsys, root)
		if err != nil || v.included[root] && v.once[root] {
			continue
		}
		v.included[root] = true
		v.walk(v.prep(&wfile{name: root, dir: path.Dir(root)}, body, root, false, 0), false, 0)
	}
	out := names{}
	funcs := map[string]bool{}
	ts := v.toks
	walkScope(ts, 0, len(ts), false, "", 0, func(st *stmt) {
		if st.class || hiddenNamespace(st.namespace) {
			return
		}
		info := declares(ts, st)
		for _, j := range info.types {
			out.add(ts[j].Text, nType)
		}
		for _, j := range info.funcs {
			out.add(ts[j].Text, nFunc)
			if st.namespace == "metal" && !backendName(ts[j].Text) && ts[j].Text != "operator" && (!strings.HasPrefix(ts[j].Text, "__") || metalInternal(ts[j].Text)) {
				funcs[ts[j].Text] = true
			}
		}
		for _, j := range info.vars {
			out.add(ts[j].Text, nVar)
		}
		if info.namespace >= 0 && !hiddenNamespace(ts[info.namespace].Text) {
			out.add(ts[info.namespace].Text, nNamespace)
		}
	})
	for name := range metalBuiltins {
		out.add(name, nFunc)
	}
	macros := map[string]*msl.Define{}
	for name, d := range v.macros {
		if d != nil {
			out.add(name, nMacro)
			macros[name] = d
		}
	}
	for name := range out {
		if backendName(name) || name == "operator" || strings.HasPrefix(name, "__") && !metalInternal(name) {
			delete(out, name)
		}
	}
	return out, macros, funcs
}

// hiddenNamespace reports whether ns (qualified) is one the prelude keeps
// its implementation in, which kernels may not name.
func hiddenNamespace(ns string) bool {
	for _, part := range splitQualified(ns) {
		if part == "std" || backendName(part) || part == "" && ns != "" {
			return true
		}
	}
	return false
}

func splitQualified(ns string) []string {
	if ns == "" {
		return nil
	}
	return strings.Split(ns, "::")
}
