package msl

import "strings"

// This file resolves the names a function body uses to their declarations:
// parameters, locals, for-loop variables and file-scope constants, with
// their address spaces and types, as the loop facts need them.

// A VarKind says where a variable is declared.
type VarKind int

const (
	ParamVar  VarKind = iota // a function parameter
	LocalVar                 // a declaration statement in the body
	LoopVar                  // declared in a for loop's init
	GlobalVar                // a file-scope declaration
)

// A Var is a variable visible in a function body.
type Var struct {
	Name      string
	NamePos   int
	Kind      VarKind
	Space     AddrSpace // where a pointer, reference or array's storage lives; ThreadSpace for thread arrays; NoSpace for plain values
	Elem      string    // the type without address space, qualifiers, pointer or reference marks and array dimensions: "float", "char4", "QsaParams"
	Const     bool      // the variable itself cannot be assigned: const, constexpr, constant, a reference or an array
	ElemConst bool      // the storage it points or refers to is read-only: a pointer or reference to const, a constant address space, a const array
	Ptr       int       // pointer levels
	Ref       bool      // a reference
	Dims      []int64   // array dimensions, outermost first; -1 where not a constant
	Init      Span      // the initialiser; empty when none
	Attrs     []*Attr   // parameter and declaration attributes
	Scope     Span      // the byte range where the name refers to this variable
	Decl      *Decl     // the declaration statement; nil for parameters and loop variables
	Param     *Param    // the parameter; nil otherwise

	id int // index in its Scope
}

// IsArray reports whether v is an array.
func (v *Var) IsArray() bool { return len(v.Dims) > 0 }

// IsMemory reports whether v names memory that other threads or the host
// can see or that outlives a statement: a pointer, a reference or an array
// in the device, constant or threadgroup address space.
func (v *Var) IsMemory() bool {
	return (v.Ptr > 0 || v.Ref || v.IsArray()) && (v.Space == Device || v.Space == Constant || v.Space == Threadgroup)
}

// Attr returns v's attribute named name, or nil.
func (v *Var) Attr(name string) *Attr {
	for _, a := range v.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// A Scope is the set of variables of one function, for name lookups.
type Scope struct {
	File *File
	Func *Func
	vars map[string][]*Var // by name, in declaration order
	all  []*Var

	// Memoised facts: a Scope is used for one function of one parsed
	// file, which never changes.
	exprs      map[[2]int]exprMemo
	loops      map[*For]loopMemo
	writes     map[Stmt]map[*Var]bool
	jumps      map[Stmt]bool
	plans      map[Stmt]*stmtPlan
	looked     map[int]*Var // Lookup results for names used in the body, by offset
	funcEff    *Effects
	footprints map[[2]int]*Footprints
	Geometries []Dims          // threads per threadgroup to interpret footprints for (a spec's dispatches); none: one-dimensional threadgroups of up to MaxThreads threads, assumed
	casts      map[*Var]bool   // castDerived, memoised
	local      map[string]bool // localTypes of Func
	localDone  bool
	targs      map[string]string // TemplateArgs
	targsDone  bool
	types      map[string]bool // IsTypeName, by name
	pures      map[string]bool // IsPureCall, by name
	scenConsts *[]string       // scenarioConsts, once per function
	blocks     map[*Block]*blockIndex
}

// isType is File.IsTypeName, memoised.
func (sc *Scope) isType(name string) bool {
	if t, ok := sc.types[name]; ok {
		return t
	}
	t := sc.File.IsTypeName(name) || sc.localType(name)
	if sc.types == nil {
		sc.types = map[string]bool{}
	}
	sc.types[name] = t
	return t
}

// localType reports whether name is a type template parameter or a body
// alias of the function: T(x) is a conversion there.
func (sc *Scope) localType(name string) bool {
	if !sc.localDone {
		sc.localDone = true
		sc.local = sc.File.localTypes(sc.Func)
	}
	return sc.local[name]
}

// isPure is File.IsPureCall, memoised.
func (sc *Scope) isPure(name string) bool {
	if t, ok := sc.pures[name]; ok {
		return t
	}
	t := sc.File.IsPureCall(name) || sc.localType(lastPart(name))
	if sc.pures == nil {
		sc.pures = map[string]bool{}
	}
	sc.pures[name] = t
	return t
}

// A stmtPlan is what interpreting a statement needs, worked out once.
type stmtPlan struct {
	kind  string // for an ExprStmt: "", "empty", "label", "return", "break", ...
	x     Expr   // the expression of an ExprStmt or a return
	err   error
	inits []declInit // for a Decl, per declarator
	loop  *Var       // for a For: the variable its init declares, or nil
}

type declInit struct {
	v      *Var
	x      Expr
	err    error
	braced bool
	none   bool
}

// plan returns the memoised plan of s.
func (sc *Scope) plan(s Stmt) *stmtPlan {
	if p, ok := sc.plans[s]; ok {
		return p
	}
	p := &stmtPlan{}
	f := sc.File
	switch s := s.(type) {
	case *Decl:
		for _, n := range s.Names {
			di := declInit{v: sc.Lookup(n.Name, n.NamePos+1)}
			pos, end, braced := f.InitExpr(n)
			di.braced = braced
			if end <= pos {
				di.none = true
			} else {
				di.x, di.err = sc.parseExpr(pos, end)
			}
			p.inits = append(p.inits, di)
		}
	case *ExprStmt:
		toks := f.SigTokens(s.Pos, s.End)
		switch {
		case len(toks) == 0 || toks[0].Text == ";":
			p.kind = "empty"
		case toks[0].Kind == Ident && (toks[0].Text == "case" || toks[0].Text == "default") && toks[len(toks)-1].Text == ":":
			p.kind = "empty"
		case toks[0].Kind == Ident && len(toks) == 2 && toks[1].Text == ":" && !stmtKeywords[toks[0].Text]:
			p.kind = "label"
		case toks[0].Kind == Ident && jumpWords[toks[0].Text]:
			p.kind = toks[0].Text
			if toks[0].Text == "return" && len(toks) > 2 {
				p.x, p.err = sc.parseExpr(toks[1].Pos, toks[len(toks)-2].End)
			}
		default:
			end := s.End
			if toks[len(toks)-1].Text == ";" {
				end = toks[len(toks)-1].Pos
			}
			p.x, p.err = sc.parseExpr(s.Pos, end)
		}
	case *For:
		if fv := forVar(f, s); fv != nil {
			p.loop = sc.Lookup(fv.Name, fv.NamePos+1)
			if p.loop != nil && p.loop.Init.End > p.loop.Init.Pos {
				p.x, p.err = sc.parseExpr(p.loop.Init.Pos, p.loop.Init.End)
			}
		} else if s.Init.End > s.Init.Pos {
			p.x, p.err = sc.parseExpr(s.Init.Pos, s.Init.End)
		}
	}
	if sc.plans == nil {
		sc.plans = map[Stmt]*stmtPlan{}
	}
	sc.plans[s] = p
	return p
}

type exprMemo struct {
	x   Expr
	err error
}

// parseExpr is File.ParseExpr, memoised.
func (sc *Scope) parseExpr(pos, end int) (Expr, error) {
	k := [2]int{pos, end}
	if m, ok := sc.exprs[k]; ok {
		return m.x, m.err
	}
	x, err := sc.File.ParseExpr(pos, end)
	if sc.exprs == nil {
		sc.exprs = map[[2]int]exprMemo{}
	}
	sc.exprs[k] = exprMemo{x, err}
	return x, err
}

// countLoop is CountLoop without the reason.
func (sc *Scope) countLoop(s *For) *Loop {
	l, _ := sc.CountLoop(s)
	return l
}

// writesOf returns the variables s writes, memoised.
func (sc *Scope) writesOf(s Stmt) map[*Var]bool {
	if w, ok := sc.writes[s]; ok {
		return w
	}
	w := sc.Effects(s).Writes
	if sc.writes == nil {
		sc.writes = map[Stmt]map[*Var]bool{}
	}
	sc.writes[s] = w
	return w
}

// hasJump reports whether s contains a break, continue, return, goto or
// label, memoised.
func (sc *Scope) hasJump(s Stmt) bool {
	if j, ok := sc.jumps[s]; ok {
		return j
	}
	j := len(sc.Effects(s).Jumps) > 0
	if sc.jumps == nil {
		sc.jumps = map[Stmt]bool{}
	}
	sc.jumps[s] = j
	return j
}

// ScopeOf returns the variables of fn in f. Build it once per function
// and share it: it walks the whole body.
func ScopeOf(f *File, fn *Func) *Scope {
	sc := &Scope{File: f, Func: fn, vars: map[string][]*Var{}}
	env := &Env{File: f, Func: fn}
	for _, g := range f.Globals {
		for _, n := range g.Names {
			sc.add(declVar(f, env, g, n, GlobalVar, Span{0, len(f.Src)}))
		}
	}
	sc.addLocals(env)
	return sc
}

// localScope is ScopeOf without the file-scope variables: the parameters
// and locals of fn, for the call graph's name lookups.
func localScope(f *File, fn *Func) *Scope {
	sc := &Scope{File: f, Func: fn, vars: map[string][]*Var{}}
	sc.addLocals(&Env{File: f, Func: fn})
	return sc
}

// addLocals adds the parameters and the locals of sc's function.
func (sc *Scope) addLocals(env *Env) {
	f, fn := sc.File, sc.Func
	if fn.Body == nil {
		return
	}
	body := Span{fn.Body.Lbrace, fn.Body.Rbrace + 1}
	for _, p := range fn.Params {
		sc.add(paramVar(p, body))
	}
	var walk func(s Stmt, end int)
	walk = func(s Stmt, end int) {
		switch s := s.(type) {
		case *Block:
			for _, c := range s.Stmts {
				walk(c, s.Rbrace+1)
			}
		case *Decl:
			for _, n := range s.Names {
				sc.add(declVar(f, env, s, n, LocalVar, Span{n.NamePos, end}))
			}
		case *For:
			if v := forVar(f, s); v != nil {
				sc.add(v)
			}
			walk(s.Body, s.End)
		case *While:
			walk(s.Body, s.End)
		case *Do:
			walk(s.Body, s.End)
		case *If:
			walk(s.Then, endOf2(s.Then))
			if s.Else != nil {
				walk(s.Else, endOf2(s.Else))
			}
		case *Switch:
			walk(s.Body, s.End)
		case *MacroUse:
			if s.Body != nil {
				walk(s.Body, s.End)
			}
		}
	}
	walk(fn.Body, body.End)
}

func endOf2(s Stmt) int {
	_, e := s.Span()
	return e
}

func (sc *Scope) add(v *Var) {
	v.id = len(sc.all)
	sc.vars[v.Name] = append(sc.vars[v.Name], v)
	sc.all = append(sc.all, v)
}

// Vars returns every variable of the function, file-scope ones first,
// then in declaration order.
func (sc *Scope) Vars() []*Var { return sc.all }

// Lookup returns the variable the name refers to at byte offset at, or nil
// when the name is not a variable there (a function, a type, a macro, a
// member name or undeclared).
func (sc *Scope) Lookup(name string, at int) *Var {
	if v, ok := sc.looked[at]; ok && (v == nil || v.Name == name) {
		return v
	}
	v := sc.lookup(name, at)
	if sc.looked == nil {
		sc.looked = map[int]*Var{}
	}
	sc.looked[at] = v
	return v
}

// resolve returns the variable n names, remembering it in n.
func (sc *Scope) resolve(n *NameExpr) *Var {
	if n.sc == sc {
		return n.v
	}
	n.sc, n.v = sc, sc.Lookup(n.Name, n.Pos)
	return n.v
}

func (sc *Scope) lookup(name string, at int) *Var {
	var best *Var
	for _, v := range sc.vars[name] {
		if v.Kind != GlobalVar && (v.NamePos >= at || at >= v.Scope.End || at < v.Scope.Pos) {
			continue
		}
		if best == nil || best.Kind == GlobalVar || v.NamePos > best.NamePos {
			best = v
		}
	}
	return best
}

// Declared reports whether name is declared anywhere in the function or
// at file scope, as a variable, function, type or macro: a name a
// mutation invents must not be.
func (sc *Scope) Declared(name string) bool {
	if len(sc.vars[name]) > 0 || sc.File.IsTypeName(name) || sc.File.lookupDefine(name, 0) != nil {
		return true
	}
	for _, fn := range sc.File.Funcs {
		if fn.Name == name {
			return true
		}
	}
	if sc.Func.Body != nil {
		for _, t := range sc.File.SigTokens(sc.Func.Pos, sc.Func.End) {
			if t.Kind == Ident && t.Text == name {
				return true
			}
		}
	}
	return false
}

func paramVar(p *Param, body Span) *Var {
	v := &Var{Name: p.Name, NamePos: p.NamePos, Kind: ParamVar, Space: p.AddrSpace, Attrs: p.Attrs, Scope: body, Param: p}
	typ := p.Type
	typeMarks(v, typ, nil)
	if p.AddrSpace == Constant {
		v.ElemConst = true
	}
	return v
}

var markSpacer = strings.NewReplacer("*", " * ", "&", " & ")

// typeMarks fills in v's element type, pointer and reference marks and
// constness from a declared type text and the declaration's qualifiers.
func typeMarks(v *Var, typ string, quals []string) {
	words := strings.Fields(markSpacer.Replace(typ))
	var elem []string
	constBeforeMark := false
	for i, w := range words {
		switch w {
		case "*":
			v.Ptr++
		case "&", "&&":
			v.Ref = true
		case "const":
			if v.Ptr > 0 || v.Ref {
				v.Const = true // T* const
			} else {
				constBeforeMark = true
			}
		case "volatile", "restrict", "__restrict":
		default:
			if sp, ok := addrSpaces[w]; ok {
				v.Space = sp
				continue
			}
			_ = i
			elem = append(elem, w)
		}
	}
	v.Elem = strings.Join(elem, " ")
	isConst := constBeforeMark
	for _, q := range quals {
		if q == "const" || q == "constexpr" {
			isConst = true
		}
	}
	if v.Ptr > 0 || v.Ref {
		v.ElemConst = v.ElemConst || isConst
	} else {
		v.Const = v.Const || isConst
	}
	if v.Ref {
		v.Const = true
	}
}

func declVar(f *File, env *Env, d *Decl, n *Declarator, kind VarKind, scope Span) *Var {
	v := &Var{Name: n.Name, NamePos: n.NamePos, Kind: kind, Space: d.AddrSpace, Attrs: d.Attrs, Init: n.Init, Scope: scope, Decl: d}
	typ := d.Type
	// Pointer and reference marks written with the declarator (float a, *b).
	toks := f.SigTokens(d.TypeSpan.End, n.NamePos)
	for _, t := range toks {
		if t.Text == "*" || t.Text == "&" {
			typ += " " + t.Text
		}
	}
	typeMarks(v, typ, d.Qualifiers)
	for _, dim := range n.Dims {
		e := *env
		e.At = d.Pos
		val, ok := e.Eval(f.Text(dim.Pos, dim.End))
		if !ok {
			val = -1
		}
		v.Dims = append(v.Dims, val)
	}
	if v.IsArray() {
		v.Const = true
		if v.Space == NoSpace {
			v.Space = ThreadSpace
		}
		if v.Space == Constant {
			v.ElemConst = true
		}
	}
	if d.AddrSpace == Constant && v.Ptr == 0 && !v.Ref {
		v.Const = true
		v.ElemConst = true
	}
	return v
}

// forVar returns the variable a for loop's init declares, or nil.
func forVar(f *File, s *For) *Var {
	toks := f.SigTokens(s.Init.Pos, s.Init.End)
	eq := -1
	for i, t := range toks {
		if t.Text == "=" || t.Text == "," || t.Text == "{" || t.Text == ":" {
			if t.Text == "=" {
				eq = i
			}
			break
		}
	}
	if eq < 2 || toks[eq-1].Kind != Ident {
		return nil
	}
	var typ []string
	var quals []string
	for _, t := range toks[:eq-1] {
		if declQualifiers[t.Text] {
			quals = append(quals, t.Text)
			continue
		}
		typ = append(typ, t.Text)
	}
	if len(typ) == 0 {
		return nil
	}
	name := toks[eq-1]
	end := s.Init.End
	v := &Var{Name: name.Text, NamePos: name.Pos, Kind: LoopVar, Init: Span{end, end}, Scope: Span{name.Pos, s.End}}
	if eq+1 < len(toks) {
		v.Init = Span{toks[eq+1].Pos, end}
	}
	typeMarks(v, strings.Join(typ, " "), quals)
	return v
}
