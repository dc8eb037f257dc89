package msl

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"metalab/internal/directive"
)

// A Call is a call in a function's body that may run one of the file's
// functions: a call by name (f(x), f<T>(x), ns::f(x)); a qualified call of
// a member (S::f(x), OP::init()); a call on an object, which runs a member
// of the object's type: obj(x) its operator(), obj.f(x), obj->f(x),
// this->f(x), a member of the caller's own struct called by name, a
// temporary's S<T>{a}(x); or a constructor, run by a declaration or a
// temporary of a struct type. Overloads of one name are not told apart:
// a call reaches each.
type Call struct {
	Caller *Func
	Callee *Func  // nil when the function called cannot be told (Why)
	Pos    int    // the called name's offset in Caller's file
	Object string // the object called on ("softmax_finalize", "this"); "" for a call by name
	Type   string // the object's (or qualifier's) type as the call sees it, template arguments bound where known
	Method string // the member called: "operator()", its name, or the struct's name for a constructor
	Why    string // why the function called cannot be told: the object's type is a template parameter not bound where it is called, auto, or the value of an expression
}

// Via describes how the call reaches its callee: "" for a call by name,
// else "on OBJECT (TYPE)".
func (c Call) Via() string {
	if c.Object == "" {
		if base, _ := splitType(c.Type); c.Type != "" && c.Method != "" && c.Method == lastPart(base) {
			return "constructing " + c.Type
		}
		return ""
	}
	if c.Type == "" {
		return "on " + c.Object
	}
	return fmt.Sprintf("on %s (%s)", c.Object, c.Type)
}

// maxCallStates bounds the instantiations the call graph tells apart, over
// the whole file; past it functions are followed once each, with their
// template parameters unbound (calls on objects of those types are then
// unknown, not guessed).
const maxCallStates = 20000

// maxBoundText bounds a bound template argument's text, against recursive
// templates whose arguments grow (f<N> calling f<N - 1>).
const maxBoundText = 160

// callKind says how a call names what it calls.
type callKind int

const (
	callName   callKind = iota // f(x), f<T>(x): a function, or an object, member or type of that name
	callQual                   // Q::f(x), Q<T>::f(x): a member of type Q, or f in namespace Q
	callMember                 // x.f(x), x->f(x), this->f(x)
	callTemp                   // S<T>{a}(x), S(a)(x), g(a)(x): a call on the value before
	callCtor                   // a declaration of a variable of a struct type
	callExpr                   // a member call on an expression (a[i].f(x), g().f(x))
)

// A rawCall is a call as written, before the types it names are
// resolved.
type rawCall struct {
	kind  callKind
	pos   int
	name  string   // the function or member called; "operator()" for a call on a value
	targs []string // explicit template arguments of name
	typ   string   // callQual, callTemp, callCtor: the type (or callee) text
	obj   string   // callMember: the object's name, "this" included
	args  []string // argument texts
	macro bool     // named in the replacement of a macro the body uses
}

// A callState is one function with its template parameters bound as one
// instantiation binds them (those of its struct, for a member).
type callState struct {
	fn    *Func
	env   map[string]string
	calls []Call       // the calls its body makes, resolved with env
	next  []*callState // the states the resolved calls enter
	done  bool
}

type stateKey struct {
	fn  *Func
	env string
}

// A callGraph is the file's calls, built once per file on first use and
// grown as queries reach new instantiations; mu guards it, so that a
// parsed file stays safe to share.
type callGraph struct {
	mu       sync.Mutex
	f        *File
	funcs    map[string][]*Func   // functions with a body, by name: the file's, its expansions' and its headers'
	structs  map[string][]*Struct // by name, specialisations included
	ownerSt  map[*Func]*Struct    // a member function's struct
	methods  map[string][]*Func   // member functions by name, every struct's
	ctors    []*Func              // every constructor with a body
	raw      map[*Func][]rawCall
	scopes   map[*Func]*Scope
	typeArgs map[any]map[string]bool // the type template parameters of a function or struct
	states   map[stateKey]*callState
	reaches  map[stateKey]*reachSet
	kernels  []kernelRoot
	all      []*callState // every state reached from a kernel, then the rest, in order
	built    bool
	mayMemo  map[*Func]map[*Func]bool
}

// A kernelRoot is one entry point with the template arguments it binds.
type kernelRoot struct {
	fn    *Func
	state *callState
}

// A reachSet is what one state reaches: functions in order of first
// reach, and the calls among them whose callee is unknown.
type reachSet struct {
	funcs   []*Func
	has     map[*Func]bool
	unknown []Call
	states  []*callState
}

// graphMu guards the making of files' call graphs.
var graphMu sync.Mutex

// graph returns the call graph of the file f belongs to. Its methods
// other than the constructor's tables (ownerSt, structs, funcs) are used
// under its mu.
func (f *File) graph() *callGraph {
	r := f.Root()
	graphMu.Lock()
	defer graphMu.Unlock()
	if r.calls == nil {
		r.calls = newCallGraph(r)
	}
	return r.calls
}

func newCallGraph(f *File) *callGraph {
	g := &callGraph{
		f:        f,
		funcs:    map[string][]*Func{},
		structs:  map[string][]*Struct{},
		ownerSt:  map[*Func]*Struct{},
		methods:  map[string][]*Func{},
		raw:      map[*Func][]rawCall{},
		scopes:   map[*Func]*Scope{},
		typeArgs: map[any]map[string]bool{},
		states:   map[stateKey]*callState{},
		reaches:  map[stateKey]*reachSet{},
		mayMemo:  map[*Func]map[*Func]bool{},
	}
	seen := map[*File]bool{}
	var files []*File
	var walk func(x *File)
	walk = func(x *File) {
		if x == nil || seen[x] {
			return
		}
		seen[x] = true
		files = append(files, x)
		for _, e := range x.Expansions {
			walk(e.File)
		}
	}
	walk(f)
	for _, h := range f.headers() {
		walk(h)
	}
	for _, x := range files {
		for _, fn := range x.Funcs {
			if fn.Body != nil {
				g.funcs[fn.Name] = append(g.funcs[fn.Name], fn)
			}
		}
		for _, st := range x.Structs {
			g.structs[st.Name] = append(g.structs[st.Name], st)
			for _, m := range st.Methods {
				g.ownerSt[m] = st
			}
		}
	}
	for _, x := range files {
		for _, fn := range x.Funcs {
			if fn.Body == nil || fn.Owner == "" {
				continue
			}
			if g.ownerSt[fn] == nil && len(g.structs[fn.Owner]) > 0 {
				g.ownerSt[fn] = g.structs[fn.Owner][0] // defined out of its class
			}
			g.methods[fn.Name] = append(g.methods[fn.Name], fn)
			if fn.Name == fn.Owner {
				g.ctors = append(g.ctors, fn)
			}
		}
	}
	return g
}

// build walks from every entry point of the file, with the template
// arguments its instantiation binds, then from every function no entry
// point reaches, with nothing bound.
func (g *callGraph) build() {
	if g.built {
		return
	}
	g.built = true
	seen := map[*callState]bool{}
	add := func(s *callState) {
		for _, t := range g.reach(s).states {
			if !seen[t] {
				seen[t] = true
				g.all = append(g.all, t)
			}
		}
	}
	for _, ep := range g.f.EntryPoints() {
		var env map[string]string
		if ep.Inst != nil {
			_, env, _ = g.f.Entry(ep.Name)
		}
		s := g.state(ep.Func, cleanEnv(env))
		g.kernels = append(g.kernels, kernelRoot{ep.Func, s})
		add(s)
	}
	reached := map[*Func]bool{}
	for _, s := range g.all {
		reached[s.fn] = true
	}
	for _, fn := range g.f.Functions() {
		if !reached[fn] {
			add(g.state(fn, nil))
		}
	}
}

// cleanEnv drops empty bindings.
func cleanEnv(env map[string]string) map[string]string {
	var out map[string]string
	for k, v := range env {
		if v == "" || len(v) > maxBoundText {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// state returns the state of fn under env, made once.
func (g *callGraph) state(fn *Func, env map[string]string) *callState {
	if len(g.states) >= maxCallStates {
		env = nil
	}
	k := stateKey{fn, envKey(env)}
	if s := g.states[k]; s != nil {
		return s
	}
	s := &callState{fn: fn, env: env}
	g.states[k] = s
	return s
}

func envKey(env map[string]string) string {
	if len(env) == 0 {
		return ""
	}
	ks := make([]string, 0, len(env))
	for k, v := range env {
		ks = append(ks, k+"="+v)
	}
	sort.Strings(ks)
	return strings.Join(ks, "\x00")
}

// expand resolves s's calls, once.
func (g *callGraph) expand(s *callState) {
	if s.done {
		return
	}
	s.done = true
	seen := map[*callState]bool{}
	for _, c := range g.rawCalls(s.fn) {
		g.resolve(s, c, func(call Call, env map[string]string) {
			s.calls = append(s.calls, call)
			if call.Callee == nil || call.Callee.Body == nil {
				return
			}
			t := g.state(call.Callee, cleanEnv(env))
			if !seen[t] {
				seen[t] = true
				s.next = append(s.next, t)
			}
		})
	}
}

// reach returns what s reaches, breadth first, s itself included.
func (g *callGraph) reach(s *callState) *reachSet {
	k := stateKey{s.fn, envKey(s.env)}
	if r := g.reaches[k]; r != nil {
		return r
	}
	r := &reachSet{has: map[*Func]bool{}}
	seen := map[*callState]bool{s: true}
	queue := []*callState{s}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		r.states = append(r.states, t)
		if t.fn != s.fn && !r.has[t.fn] {
			r.has[t.fn] = true
			r.funcs = append(r.funcs, t.fn)
		}
		g.expand(t)
		for _, c := range t.calls {
			if c.Callee == nil && !slices.ContainsFunc(r.unknown, func(u Call) bool { return u.Caller == c.Caller && u.Pos == c.Pos && u.Method == c.Method }) {
				r.unknown = append(r.unknown, c)
			}
		}
		for _, n := range t.next {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	g.reaches[k] = r
	return r
}

// rawCalls returns the calls fn's body writes, found once.
func (g *callGraph) rawCalls(fn *Func) []rawCall {
	if cs, ok := g.raw[fn]; ok {
		return cs
	}
	cs := g.scan(fn)
	g.raw[fn] = cs
	return cs
}

// scope returns fn's parameters and locals.
func (g *callGraph) scope(fn *Func) *Scope {
	if sc := g.scopes[fn]; sc != nil {
		return sc
	}
	sc := localScope(g.f.owner(fn), fn)
	g.scopes[fn] = sc
	return sc
}

// notCallees are words followed by '(' that call nothing.
var notCallees = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true,
	"alignof": true, "decltype": true, "static_assert": true, "static_cast": true,
	"reinterpret_cast": true, "const_cast": true, "as_type": true, "__attribute__": true,
	"alignas": true, "noexcept": true, "case": true, "do": true, "else": true,
}

// scan reads fn's body for calls (and the declarations that run
// constructors).
func (g *callGraph) scan(fn *Func) []rawCall {
	if fn.Body == nil {
		return nil
	}
	file := g.f.owner(fn)
	toks := file.SigTokens(fn.Body.Lbrace, fn.Body.Rbrace+1)
	var out []rawCall
	n := len(toks)
	text := func(i int) string {
		if i < 0 || i >= n {
			return ""
		}
		return toks[i].Text
	}
	for j := 0; j < n; j++ {
		t := toks[j]
		if (t.Text == "]" || t.Text == ")") && text(j+1) == "(" && g.callOnValue(toks, j) {
			// a[i](x), x.f(a)(y): a call on the value of an expression.
			end := closeTok(toks, j+1)
			out = append(out, rawCall{kind: callExpr, pos: t.Pos, name: "operator()", obj: joinSig(toks[max(0, j-3) : j+1]), args: splitArgs(toks, j+1, end)})
			continue
		}
		if t.Kind != Ident || notCallees[t.Text] {
			continue
		}
		prev := text(j - 1)
		name := t.Text
		k := j + 1
		var targs []string
		switch {
		case name == "operator":
			if text(k) == "(" && text(k+1) == ")" && text(k+2) == "(" {
				name, k = "operator()", k+2
			} else if k+1 < n && toks[k].Kind == Punct && text(k+1) == "(" {
				name, k = "operator"+toks[k].Text, k+1
			} else {
				continue
			}
		case text(k) == "<":
			if e, args, ok := angleArgs(toks, k); ok && (text(e+1) == "(" || text(e+1) == "{" || text(e+1) == "::") {
				targs, k = expandArgs(file, args, t.Pos, 0), e+1
			}
		}
		member := prev == "." || prev == "->"
		if !member && len(g.funcs[name]) == 0 && len(g.structs[name]) == 0 {
			// A macro's use calls what its replacement calls (candle's
			// rms_norm_case(T, 1024) expands to a call of rms_norm<T,
			// 1024>): callers and barriers hidden in macros are counted.
			if d := file.lookupDefine(name, t.Pos); d != nil && d.Name != "" {
				for _, m := range file.macroCalls(d, func(n string) bool { return len(g.funcs[n]) > 0 }, nil, map[string]bool{}, 0) {
					out = append(out, rawCall{kind: callName, pos: t.Pos, name: m, macro: true})
				}
			}
		}
		if text(k) == "::" {
			continue // a qualifier: the name after it is the call
		}
		switch text(k) {
		case "(":
			end := closeTok(toks, k)
			args := splitArgs(toks, k, end)
			switch {
			case member:
				c := rawCall{kind: callMember, pos: t.Pos, name: name, targs: targs, args: args}
				if j >= 2 && toks[j-2].Kind == Ident && text(j-3) != "." && text(j-3) != "->" && text(j-3) != "::" {
					c.obj = toks[j-2].Text
				} else {
					c.kind, c.obj = callExpr, joinSig(toks[max(0, j-4):j-1])
				}
				out = append(out, c)
			case prev == "::":
				c := rawCall{kind: callQual, pos: t.Pos, name: name, targs: targs, args: args}
				q := j - 2
				if text(q) == ">" {
					for depth := 0; q >= 0; q-- {
						if text(q) == ">" {
							depth++
						} else if text(q) == "<" {
							if depth--; depth == 0 {
								q--
								break
							}
						}
					}
				}
				if q >= 0 && toks[q].Kind == Ident {
					c.typ = joinSig(toks[q : j-1])
				} else {
					c.kind = callName // ::f(x)
				}
				out = append(out, c)
			default:
				out = append(out, rawCall{kind: callName, pos: t.Pos, name: name, targs: targs, args: args})
				if end+1 < n && text(end+1) == "(" && name != "operator()" {
					// g(a)(x) or S(a)(x): a call on the value g returns or
					// on the temporary.
					e2 := closeTok(toks, end+1)
					out = append(out, rawCall{kind: callTemp, pos: t.Pos, name: "operator()", typ: joinSig(toks[j:k]), args: splitArgs(toks, end+1, e2)})
				}
			}
		case "{":
			if member || len(g.structs[name]) == 0 && !g.maybeType(fn, name) {
				continue
			}
			end := closeTok(toks, k)
			typ := joinSig(toks[j:k])
			out = append(out, rawCall{kind: callCtor, pos: t.Pos, typ: typ})
			if end+1 < n && text(end+1) == "(" {
				e2 := closeTok(toks, end+1)
				out = append(out, rawCall{kind: callTemp, pos: t.Pos, name: "operator()", typ: typ, args: splitArgs(toks, end+1, e2)})
			}
		}
	}
	Walk(fn.Body, func(s Stmt) bool {
		if d, ok := s.(*Decl); ok {
			out = append(out, rawCall{kind: callCtor, pos: d.Pos, typ: d.Type})
		}
		return true
	})
	return out
}

// callOnValue reports whether the ']' or ')' at j, followed by '(', ends
// an expression whose value is called: not a lambda's captures
// ([&](x) {...}), a cast ((float)(x)), a call by name g(a)(x) (scan
// reads that one) or a control statement's condition (if (c) (x) = 1).
func (g *callGraph) callOnValue(toks []Token, j int) bool {
	open := -1
	for k, depth := j, 0; k >= 0; k-- {
		switch toks[k].Text {
		case ")", "]", "}":
			depth++
		case "(", "[", "{":
			depth--
			if depth == 0 {
				open = k
			}
		}
		if open >= 0 {
			break
		}
	}
	if open < 0 {
		return false
	}
	before := ""
	if open > 0 {
		before = toks[open-1].Text
	}
	beforeKind := Punct
	if open > 0 {
		beforeKind = toks[open-1].Kind
	}
	if toks[j].Text == "]" {
		// A subscript follows a name or a bracket; a lambda's captures
		// follow an operator, '(' or ','.
		return beforeKind == Ident && !notCallees[before] || before == ")" || before == "]"
	}
	if beforeKind == Ident {
		if notCallees[before] || before == "operator" {
			return false // if (c) (x) ..., sizeof(T)(...), operator()(x)
		}
		p := ""
		if open > 1 {
			p = toks[open-2].Text
		}
		return p == "." || p == "->" // x.f(a)(y); g(a)(y) is scan's
	}
	if before == ")" || before == "]" {
		return true // g(a)(b)(c), a[i](x)(y)
	}
	// A parenthesised expression: a cast when it holds a type.
	inner := toks[open+1 : j]
	if len(inner) == 0 {
		return false
	}
	for _, t := range inner {
		if t.Kind != Ident && t.Text != "*" && t.Text != "&" && t.Text != "::" && t.Text != "<" && t.Text != ">" && t.Text != "," {
			return true
		}
	}
	return false
}

// maybeType reports whether name may name a type in fn: a template
// parameter or an alias of fn or its struct.
func (g *callGraph) maybeType(fn *Func, name string) bool {
	if slices.Contains(fn.Template, name) || fn.Types[name] != "" {
		return true
	}
	if st := g.ownerSt[fn]; st != nil && (slices.Contains(st.Template, name) || st.Types[name] != "") {
		return true
	}
	_, ok := g.f.typeAlias(name)
	return ok
}

// angleArgs returns the index of the '>' closing the '<' at i and the
// template arguments between, or ok false when it does not close within
// 64 tokens or before a ';', '{' or '}'.
func angleArgs(toks []Token, i int) (end int, args []string, ok bool) {
	depth, start := 0, i+1
	for k, n := i, 0; k < len(toks) && n < 64; k, n = k+1, n+1 {
		switch toks[k].Text {
		case "<", "(", "[":
			depth++
		case ")", "]":
			depth--
		case ">", ">>":
			depth--
			if toks[k].Text == ">>" {
				depth--
			}
		case ",":
			if depth == 1 {
				args = append(args, joinSig(toks[start:k]))
				start = k + 1
			}
		case ";", "{", "}":
			return 0, nil, false
		}
		if depth <= 0 {
			if start < k {
				last := joinSig(toks[start:k])
				if toks[k].Text == ">>" && depth == 0 {
					last += ">" // f<A<T>>: the first '>' closes A
				}
				args = append(args, last)
			}
			return k, args, true
		}
	}
	return 0, nil, false
}

// expandArgs replaces the template arguments that are object-like macros
// by the arguments their replacements list (ggml's
// kernel_flash_attn_ext_impl<FWD_TMPL, 4>, FWD_TMPL naming 27).
func expandArgs(file *File, args []string, at, depth int) []string {
	var out []string
	for _, a := range args {
		if d := file.lookupDefine(a, at); d != nil && !d.FuncLike && directive.IsIdent(a) && depth < 4 && strings.TrimSpace(d.Body) != "" {
			out = append(out, expandArgs(file, splitTop(strings.TrimSpace(d.Body), ','), at, depth+1)...)
			continue
		}
		out = append(out, a)
	}
	return out
}

// closeTok returns the index of the bracket closing the one at i (or the
// last token).
func closeTok(toks []Token, i int) int {
	depth := 0
	for k := i; k < len(toks); k++ {
		switch toks[k].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return len(toks) - 1
}

// splitArgs returns the texts of the arguments between the brackets at lo
// and hi, split at the commas outside brackets.
func splitArgs(toks []Token, lo, hi int) []string {
	var out []string
	depth, start := 0, lo+1
	for k := lo + 1; k < hi && k < len(toks); k++ {
		switch toks[k].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, joinSig(toks[start:k]))
				start = k + 1
			}
		}
	}
	if start < hi && start < len(toks) {
		out = append(out, joinSig(toks[start:min(hi, len(toks))]))
	}
	return out
}

// params returns the template parameters in scope in s's function: its
// own and its struct's.
func (g *callGraph) params(fn *Func) []string {
	ps := fn.Template
	if st := g.ownerSt[fn]; st != nil && len(st.Template) > 0 {
		ps = append(slices.Clip(ps), st.Template...)
	}
	return ps
}

// free reports whether name is a template parameter of s's function that
// s does not bind.
func (g *callGraph) free(s *callState, name string) bool {
	if _, ok := s.env[name]; ok {
		return false
	}
	return slices.Contains(g.params(s.fn), name)
}

// mentionsFree reports whether text names a template parameter s does not
// bind.
func (g *callGraph) mentionsFree(s *callState, text string) bool {
	ps := g.params(s.fn)
	if len(ps) == 0 {
		return false
	}
	for _, t := range lexExpr(text) {
		if t.Kind == Ident && g.free(s, t.Text) {
			return true
		}
	}
	return false
}

// isTypeParam reports whether name is a type (typename or class)
// template parameter of s's function or its struct, as opposed to a value
// (an int N, a function a template is given).
func (g *callGraph) isTypeParam(fn *Func, name string) bool {
	if slices.Contains(fn.Template, name) {
		return g.typeParamsOf(fn, fn.Pos, fn.NamePos)[name]
	}
	if st := g.ownerSt[fn]; st != nil && slices.Contains(st.Template, name) {
		return g.typeParamsOf(st, st.Pos, st.End)[name]
	}
	return false
}

// typeParamsOf reads the type parameters (typename or class) of the
// template header in [pos, end), the header of key (a function or
// struct).
func (g *callGraph) typeParamsOf(key any, pos, end int) map[string]bool {
	if m, ok := g.typeArgs[key]; ok {
		return m
	}
	m := map[string]bool{}
	file := g.f
	switch x := key.(type) {
	case *Func:
		file = g.f.owner(x)
	case *Struct:
		file = g.f.structOwner(x)
	}
	toks := file.SigTokens(pos, end)
	depth := 0
header:
	for i, t := range toks {
		switch t.Text {
		case "<":
			depth++
		case ">", ">>":
			depth--
			if t.Text == ">>" {
				depth--
			}
			if depth <= 0 {
				break header
			}
		case "typename", "class":
			if depth == 1 && i+1 < len(toks) && toks[i+1].Kind == Ident {
				m[toks[i+1].Text] = true
			}
		}
	}
	g.typeArgs[key] = m
	return m
}

// bareType strips address spaces, qualifiers and pointer and reference
// marks from a declared type, and says how many pointer levels it had.
func bareType(typ string) (string, int) {
	words := strings.Fields(markSpacer.Replace(typ))
	var kept []string
	ptr := 0
	for _, w := range words {
		switch w {
		case "*":
			ptr++
		case "&", "&&", "const", "volatile", "restrict", "__restrict", "typename", "struct", "class", "static", "constexpr", "thread", "threadgroup", "device", "constant", "inline":
		default:
			kept = append(kept, w)
		}
	}
	return normType(strings.Join(kept, " ")), ptr
}

// splitType splits S<a, b> into S and its arguments (nil when it has
// none).
func splitType(t string) (string, []string) {
	if !strings.HasSuffix(t, ">") {
		return t, nil
	}
	i := strings.IndexByte(t, '<')
	if i <= 0 {
		return t, nil
	}
	base := strings.TrimSpace(t[:i])
	inner := strings.TrimSpace(t[i+1 : len(t)-1])
	if inner == "" {
		return base, []string{}
	}
	return base, splitTop(inner, ',')
}

// A structInst is a struct a type may name, with its template parameters
// bound where the type's arguments are known.
type structInst struct {
	st  *Struct
	env map[string]string
}

// resolveType resolves a type as s sees it to the structs of the file it
// may name (a primary template and the specialisations whose pattern its
// arguments may match), the type shown, and why it cannot be told when it
// is a template parameter s does not bind, auto or a member type of a
// dependent type. A type that is not the file's yields none.
func (g *callGraph) resolveType(s *callState, typ string) (out []structInst, shown, why string) {
	t, _ := bareType(typ)
	t = normType(substitute(t, s.env))
	// Aliases, followed while they name another type: the body's (candle's
	// `using MDReduceOp = MDReduceOp<T>`, the alias naming the template it
	// hides), the struct's, the file's.
	seenT := map[string]bool{t: true}
	for n := 0; n < 8; n++ {
		base, args := splitType(t)
		if args != nil {
			break
		}
		a, ok := s.fn.Types[base]
		if !ok {
			if st := g.ownerSt[s.fn]; st != nil {
				a, ok = st.Types[base]
			}
		}
		if ok {
			a = substitute(a, s.env)
		} else {
			a, ok = g.f.typeAlias(base)
		}
		a = normType(a)
		if !ok || seenT[a] {
			break
		}
		seenT[a] = true
		t = a
	}
	shown = t
	base, args := splitType(t)
	if base == "auto" || strings.HasPrefix(base, "decltype") {
		return nil, shown, fmt.Sprintf("its type is %s", base)
	}
	if g.free(s, base) {
		return nil, shown, fmt.Sprintf("its type %s is a template parameter of %s that is not bound where it is called", base, QualifiedName(s.fn))
	}
	if i := strings.LastIndex(base, "::"); i >= 0 {
		if q := base[:i]; g.mentionsFree(s, q) {
			return nil, shown, fmt.Sprintf("its type %s is a member type of %s, a template parameter of %s that is not bound where it is called", base, q, QualifiedName(s.fn))
		}
		base = base[i+2:]
	}
	cands := g.structs[base]
	if len(cands) == 0 {
		return nil, shown, ""
	}
	canon := make([]string, len(args))
	for i, a := range args {
		canon[i] = g.canonArg(s, a)
	}
	if args != nil {
		shownArgs := make([]string, len(args))
		for i := range args {
			shownArgs[i] = canon[i]
			if d := normType(substitute(args[i], s.env)); canon[i] == "" || d == "true" || d == "false" {
				shownArgs[i] = d
			}
		}
		shown = base + "<" + strings.Join(shownArgs, ", ") + ">"
	}
	var primary *Struct
	var definite, maybe []structInst
	for _, st := range cands {
		if st.SpecArgs == nil {
			if primary == nil {
				primary = st
			}
			continue
		}
		env, m := g.matchSpec(st, primary, canon)
		switch m {
		case matchYes:
			definite = append(definite, structInst{st, env})
		case matchMaybe:
			maybe = append(maybe, structInst{st, env})
		}
	}
	out = append(definite, maybe...)
	if len(definite) == 0 && primary != nil {
		env := map[string]string{}
		for i, p := range primary.Template {
			switch {
			case i < len(canon):
				if canon[i] != "" {
					env[p] = canon[i]
				}
			case i < len(primary.TemplateDefaults) && primary.TemplateDefaults[i] != "":
				d := normType(substitute(primary.TemplateDefaults[i], env))
				unbound := strings.Contains(d, "::")
				for _, t := range lexExpr(d) {
					if t.Kind == Ident && slices.Contains(primary.Template, t.Text) {
						unbound = true
					}
				}
				if !unbound {
					env[p] = d
				}
			}
		}
		out = append([]structInst{{primary, env}}, out...)
	}
	return out, shown, ""
}

type match int

const (
	matchNo match = iota
	matchMaybe
	matchYes
)

// canonArg returns a template argument's text as s binds it, a constant
// evaluated, or "" when it names a template parameter s does not bind.
func (g *callGraph) canonArg(s *callState, a string) string {
	a = normType(substitute(a, s.env))
	if len(s.fn.Types) > 0 {
		// The body's aliases (using I = indexed<T>): what they name.
		al := map[string]string{}
		for k, v := range s.fn.Types {
			al[k] = normType(substitute(v, s.env))
		}
		a = normType(substitute(a, al))
	}
	if g.mentionsFree(s, a) {
		return ""
	}
	if v, ok := (&Env{File: g.f}).Eval(a); ok {
		return strconv.FormatInt(v, 10)
	}
	return a
}

// matchSpec matches the arguments of a type against specialisation st's
// pattern: matchYes when they certainly match it (its parameters then
// bound), matchNo when they certainly do not, matchMaybe otherwise.
// Arguments left out take the primary template's defaults.
func (g *callGraph) matchSpec(st, primary *Struct, args []string) (map[string]string, match) {
	env := map[string]string{}
	m := matchYes
	for i, p := range st.SpecArgs {
		a := ""
		switch {
		case i < len(args):
			a = args[i]
		case primary != nil && i < len(primary.TemplateDefaults) && primary.TemplateDefaults[i] != "":
			if d := normType(primary.TemplateDefaults[i]); !strings.Contains(d, "::") && !strings.Contains(d, "<") {
				a = d
			}
		}
		if m = min(m, g.matchArg(st, normType(p), a, env, 0)); m == matchNo {
			return nil, matchNo
		}
	}
	return env, m
}

// matchArg matches one argument a ("" when unknown) against pattern p of
// specialisation st, binding st's parameters in env: a parameter matches
// anything, S<p...> matches S<a...> argument by argument, and lone names
// or numbers that differ certainly differ.
func (g *callGraph) matchArg(st *Struct, p, a string, env map[string]string, depth int) match {
	if slices.Contains(st.Template, p) {
		if a == "" {
			return matchMaybe
		}
		if old, ok := env[p]; ok && old != a {
			return matchMaybe
		}
		env[p] = a
		return matchYes
	}
	if a == "" || depth > 4 {
		return matchMaybe
	}
	pb, pargs := splitType(p)
	ab, aargs := splitType(a)
	if pargs != nil && !slices.Contains(st.Template, pb) && simpleArg(pb) {
		if simpleArg(ab) && ab != pb {
			return matchNo
		}
		if ab != pb || len(aargs) != len(pargs) {
			return matchMaybe
		}
		m := matchYes
		for i := range pargs {
			if m = min(m, g.matchArg(st, normType(pargs[i]), normType(aargs[i]), env, depth+1)); m == matchNo {
				return matchNo
			}
		}
		return m
	}
	for _, t := range lexExpr(p) {
		if t.Kind == Ident && slices.Contains(st.Template, t.Text) {
			return matchMaybe
		}
	}
	pc := p
	if v, ok := (&Env{File: g.f}).Eval(p); ok {
		pc = strconv.FormatInt(v, 10)
	}
	switch {
	case pc == a:
		return matchYes
	case simpleArg(pc) && simpleArg(a) && (aargs == nil || !simpleArg(ab)):
		return matchNo
	case simpleArg(pc) && aargs != nil:
		return matchNo // a name against a template instance
	}
	return matchMaybe
}

// simpleArg reports whether a template argument is a lone name or number,
// which another such argument that differs in text certainly differs from.
func simpleArg(a string) bool {
	if a == "" {
		return false
	}
	if _, err := strconv.ParseInt(a, 10, 64); err == nil {
		return true
	}
	for i := 0; i < len(a); i++ {
		if !isIdentChar(a[i]) {
			return false
		}
	}
	return true
}

// resolve resolves raw call c of s's function under s's bindings, calling
// emit for each function it may run with the bindings that function runs
// with, and once with Why set when it cannot be told.
func (g *callGraph) resolve(s *callState, c rawCall, emit func(Call, map[string]string)) {
	fn := s.fn
	unknown := func(obj, typ, method, why string) {
		if len(g.candidates(method)) == 0 {
			return // nothing of the file it could run
		}
		emit(Call{Caller: fn, Pos: c.pos, Object: obj, Type: typ, Method: method, Why: why}, nil)
	}
	switch c.kind {
	case callName:
		if c.macro {
			g.byName(s, c, emit)
			return
		}
		if v := g.scope(fn).lookup(c.name, c.pos+1); v != nil && v.NamePos == c.pos {
			return // the name a declaration declares, S x(a): its constructor is the declaration's
		}
		if v := g.scope(fn).lookup(c.name, c.pos); v != nil {
			if v.Elem == "auto" && strings.HasPrefix(strings.TrimSpace(g.f.owner(fn).Text(v.Init.Pos, v.Init.End)), "[") {
				return // a lambda: its body is fn's own
			}
			g.onObject(s, c, c.name, v.Elem, v.Ptr > 0, "operator()", emit, unknown)
			return
		}
		if st := g.ownerSt[fn]; st != nil {
			if ft, ok := fieldOf(st, c.name); ok {
				g.onObject(s, c, c.name, ft, false, "operator()", emit, unknown)
				return
			}
			if ms := methodsOf(st, c.name); len(ms) > 0 {
				for _, m := range ms {
					emit(Call{Caller: fn, Callee: m, Pos: c.pos, Object: "this", Type: st.Name, Method: c.name}, g.bindCall(s, c, m, s.env))
				}
				return
			}
		}
		if v, ok := s.env[c.name]; ok {
			if fs := g.funcs[v]; len(fs) > 0 {
				// A function given as a template argument (ggml's
				// dequantize_func): the call runs it.
				for _, h := range fs {
					emit(Call{Caller: fn, Callee: h, Pos: c.pos}, g.bindCall(s, c, h, nil))
				}
				return
			}
			g.construct(s, c, v, emit, unknown)
			return
		}
		if g.free(s, c.name) {
			if g.isTypeParam(fn, c.name) {
				unknown("", c.name, "constructor", fmt.Sprintf("it constructs %s, a template parameter of %s that is not bound where it is called", c.name, QualifiedName(fn)))
			} else {
				unknown("", c.name, "", fmt.Sprintf("it calls %s, a template parameter of %s that is not bound where it is called", c.name, QualifiedName(fn)))
			}
			return
		}
		if len(g.funcs[c.name]) == 0 && (len(g.structs[c.name]) > 0 || g.maybeType(fn, c.name)) {
			g.construct(s, c, c.name+targText(c.targs), emit, unknown)
			return
		}
		if len(g.funcs[c.name]) == 0 {
			if d, n := g.f.globalNamed(c.name); d != nil && n != nil {
				g.onObject(s, c, c.name, d.Type, false, "operator()", emit, unknown)
			}
			return
		}
		g.byName(s, c, emit)
	case callQual:
		sts, shown, why := g.resolveType(s, c.typ)
		switch {
		case why != "":
			unknown("", shown, c.name, "the qualifier "+c.typ+": "+why)
		case len(sts) > 0:
			for _, si := range sts {
				for _, m := range methodsOf(si.st, c.name) {
					emit(Call{Caller: fn, Callee: m, Pos: c.pos, Type: shown, Method: c.name}, g.bindCall(s, c, m, si.env))
				}
			}
		case !g.maybeType(fn, c.typ) && !g.f.IsTypeName(c.typ):
			// A namespace, or a type that is not the file's (Metal's
			// numeric_limits<T>, whose _numeric_limits_impl the file may
			// specialise): the functions of that name.
			g.byName(s, c, emit)
		}
	case callMember:
		if c.obj == "this" {
			if st := g.ownerSt[fn]; st != nil {
				for _, m := range methodsOf(st, c.name) {
					emit(Call{Caller: fn, Callee: m, Pos: c.pos, Object: "this", Type: st.Name, Method: c.name}, g.bindCall(s, c, m, s.env))
				}
			}
			return
		}
		if v := g.scope(fn).lookup(c.obj, c.pos); v != nil {
			g.onObject(s, c, c.obj, v.Elem, false, c.name, emit, unknown)
			return
		}
		if st := g.ownerSt[fn]; st != nil {
			if ft, ok := fieldOf(st, c.obj); ok {
				g.onObject(s, c, c.obj, ft, false, c.name, emit, unknown)
				return
			}
		}
		if d, n := g.f.globalNamed(c.obj); d != nil && n != nil {
			g.onObject(s, c, c.obj, d.Type, false, c.name, emit, unknown)
			return
		}
		unknown(c.obj, "", c.name, fmt.Sprintf("%s is not a variable the call graph knows", c.obj))
	case callExpr:
		if c.name == "operator()" {
			unknown(c.obj, "", c.name, "a call on the value of an expression")
		} else {
			unknown(c.obj, "", c.name, "a member call on the value of an expression")
		}
	case callTemp:
		name, _ := splitType(c.typ)
		if len(g.funcs[name]) > 0 && !g.maybeType(fn, name) && len(g.structs[name]) == 0 {
			unknown(c.typ+"(...)", "", "operator()", "a call on the value "+name+" returns")
			return
		}
		if g.scope(fn).lookup(name, c.pos) != nil {
			unknown(c.typ+"(...)", "", "operator()", "a call on the value of a call on an object")
			return
		}
		g.onObject(s, c, c.typ+"{...}", c.typ, false, "operator()", emit, unknown)
	case callCtor:
		if t, _ := bareType(c.typ); t == "auto" {
			return // a copy of its initialiser's value
		}
		g.construct(s, c, c.typ, emit, unknown)
	}
}

// targText writes template arguments back as <a, b>.
func targText(targs []string) string {
	if targs == nil {
		return ""
	}
	return "<" + strings.Join(targs, ", ") + ">"
}

// byName resolves a call by name to the functions of that name: those
// outside structs, else every one.
func (g *callGraph) byName(s *callState, c rawCall, emit func(Call, map[string]string)) {
	fs := g.funcs[c.name]
	var free []*Func
	for _, h := range fs {
		if h.Owner == "" {
			free = append(free, h)
		}
	}
	if len(free) > 0 {
		fs = free
	}
	var viable []*Func
	for _, h := range fs {
		if c.macro || g.viable(s, c, h) {
			viable = append(viable, h)
		}
	}
	if len(viable) == 0 {
		viable = fs // none certainly fits: keep every one
	}
	for _, h := range viable {
		var env map[string]string
		if !c.macro {
			env = g.bindCall(s, c, h, nil)
		}
		emit(Call{Caller: s.fn, Callee: h, Pos: c.pos}, env)
	}
}

// viable reports whether overload h may take call c's explicit template
// arguments: it is not, certainly, when it has fewer parameters than c
// gives, when a type parameter (typename, class) is given a number, or
// when a value parameter is given a type (candle's two reduce templates,
// reduce<T, R, OP, BLOCKSIZE> and reduce<T, ReductionOp, BLOCKSIZE>).
func (g *callGraph) viable(s *callState, c rawCall, h *Func) bool {
	if len(c.targs) == 0 {
		return true
	}
	if len(c.targs) > len(h.Template) {
		return false
	}
	types := g.typeParamsOf(h, h.Pos, h.NamePos)
	for i, a := range c.targs {
		v := g.canonArg(s, a)
		if v == "" {
			continue
		}
		_, isNum := strconv.ParseInt(v, 10, 64)
		base, _ := splitType(v)
		isType := g.f.IsTypeName(base) || len(g.structs[base]) > 0
		if types[h.Template[i]] && isNum == nil || !types[h.Template[i]] && isType {
			return false
		}
	}
	return true
}

// onObject resolves a call of member method on an object of type typ.
func (g *callGraph) onObject(s *callState, c rawCall, obj, typ string, ptr bool, method string, emit func(Call, map[string]string), unknown func(obj, typ, method, why string)) {
	if ptr && method == "operator()" {
		return // calling a pointer: not a member
	}
	sts, shown, why := g.resolveType(s, typ)
	if why != "" {
		unknown(obj, shown, method, why)
		return
	}
	for _, si := range sts {
		ms := methodsOf(si.st, method)
		if len(ms) == 0 {
			unknown(obj, shown, method, fmt.Sprintf("%s defines no %s of its own (a base's is not followed)", si.st.Name, method))
			continue
		}
		for _, m := range ms {
			emit(Call{Caller: s.fn, Callee: m, Pos: c.pos, Object: obj, Type: shown, Method: method}, g.bindCall(s, c, m, si.env))
		}
	}
}

// construct resolves the constructors a declaration or temporary of type
// typ runs; a type with none defined runs none.
func (g *callGraph) construct(s *callState, c rawCall, typ string, emit func(Call, map[string]string), unknown func(obj, typ, method, why string)) {
	sts, shown, why := g.resolveType(s, typ)
	if why != "" {
		unknown("", shown, "constructor", why)
		return
	}
	for _, si := range sts {
		for _, m := range methodsOf(si.st, si.st.Name) {
			emit(Call{Caller: s.fn, Callee: m, Pos: c.pos, Type: shown, Method: si.st.Name}, g.bindCall(s, c, m, si.env))
		}
	}
}

// candidates returns the functions a call of method (a member name,
// "constructor", or "" for a function given as a template argument) whose
// object's type is unknown may run.
func (g *callGraph) candidates(method string) []*Func {
	switch method {
	case "":
		var out []*Func
		for _, fs := range g.funcs {
			out = append(out, fs...)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
		return out
	case "constructor":
		return g.ctors
	}
	return g.methods[method]
}

// fieldOf returns the declared type of st's data member name.
func fieldOf(st *Struct, name string) (string, bool) {
	for _, d := range st.Fields {
		for _, n := range d.Names {
			if n.Name == name {
				return d.Type, true
			}
		}
	}
	return "", false
}

// methodsOf returns st's member functions named name that have a body.
func methodsOf(st *Struct, name string) []*Func {
	var out []*Func
	for _, m := range st.Methods {
		if m.Name == name && m.Body != nil {
			out = append(out, m)
		}
	}
	return out
}

// bindCall returns the bindings h runs with when s's call c calls it:
// base (its struct's, for a member), then h's own template parameters
// from the explicit arguments, the arguments' types (a parameter whose
// type is a template parameter, given a variable) and the defaults.
// Arguments that name a template parameter s does not bind are left out.
func (g *callGraph) bindCall(s *callState, c rawCall, h *Func, base map[string]string) map[string]string {
	env := map[string]string{}
	for k, v := range base {
		env[k] = v
	}
	if len(h.Template) == 0 {
		return env
	}
	for i, a := range c.targs {
		if i < len(h.Template) && h.Template[i] != "" {
			if v := g.canonArg(s, a); v != "" {
				env[h.Template[i]] = v
			}
		}
	}
	for i, p := range h.Params {
		if i >= len(c.args) {
			break
		}
		pt, _ := bareType(p.Type)
		if !slices.Contains(h.Template, pt) || env[pt] != "" || !directive.IsIdent(c.args[i]) {
			continue
		}
		t := ""
		if v := g.scope(s.fn).lookup(c.args[i], c.pos); v != nil {
			t = v.Elem
		} else if st := g.ownerSt[s.fn]; st != nil {
			t, _ = fieldOf(st, c.args[i])
		}
		if t, _ = bareType(t); t == "" || t == "auto" || strings.HasPrefix(t, "decltype") {
			continue // not a type the call graph can name
		}
		t = normType(substitute(t, s.env))
		if a, ok := s.fn.Types[t]; ok {
			t = normType(substitute(a, s.env))
		}
		if !g.mentionsFree(s, t) {
			env[pt] = t
		}
	}
	bindDefaults(h, len(c.targs), env)
	return env
}

// mayReach returns every function fn may run, itself included, following
// each call whose callee is unknown to every function it could run.
func (g *callGraph) mayReach(fn *Func) map[*Func]bool {
	if m := g.mayMemo[fn]; m != nil {
		return m
	}
	m := map[*Func]bool{fn: true}
	queue := []*Func{fn}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		r := g.reach(g.state(h, nil))
		next := slices.Clone(r.funcs)
		for _, u := range r.unknown {
			next = append(next, g.candidates(u.Method)...)
		}
		for _, x := range next {
			if !m[x] {
				m[x] = true
				queue = append(queue, x)
			}
		}
	}
	g.mayMemo[fn] = m
	return m
}

// mayRun reports whether unknown call u may run fn, directly or through
// what the functions it could run call.
func (g *callGraph) mayRun(u Call, fn *Func) bool {
	for _, c := range g.candidates(u.Method) {
		if c == fn || g.mayReach(c)[fn] {
			return true
		}
	}
	return false
}

// Calls returns the calls fn's body makes that may run the file's
// functions, with fn's template parameters bound by targs (nil: none
// bound), in source order: one per function a call may run, and one with
// Why set for a call whose callee cannot be told.
func (f *File) Calls(fn *Func, targs map[string]string) []Call {
	if fn == nil || fn.Body == nil {
		return nil
	}
	g := f.graph()
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.state(fn, cleanEnv(targs))
	g.expand(s)
	out := slices.Clone(s.calls)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out
}

// Reached returns the functions fn reaches through calls, directly or
// transitively, with fn's template parameters bound by targs (nil: none),
// in the order they are first reached (fn itself not included), and the
// calls on the way whose callee cannot be told (a call on an object whose
// type is a template parameter not bound there, say), which are not
// followed.
func (f *File) Reached(fn *Func, targs map[string]string) (funcs []*Func, unknown []Call) {
	if fn == nil || fn.Body == nil {
		return nil, nil
	}
	g := f.graph()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.reach(g.state(fn, cleanEnv(targs)))
	return slices.Clone(r.funcs), slices.Clone(r.unknown)
}
