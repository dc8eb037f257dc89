package translate

import (
	"context"
	"fmt"
	"go/token"
	"slices"
	"sort"
	"strconv"
	"strings"

	"metalab/backend"
	"metalab/msl"
)

// A Unit is a translated translation unit.
type Unit struct {
	Text    []byte   // the translation unit
	Entry   string   // the entry point it exports (src.Entry)
	Entries []string // every entry point of the source, by the name the host uses
	Slots   []Slot   // the entry's static threadgroup storage, in layout order
	// Includes are the files the source includes, transitively, with the
	// contents they had when vetted.
	Includes []IncludedFile

	lines map[Position]bool // the source lines the translation holds code of
}

// A Slot is one static threadgroup declaration the entry reaches; ID is
// the id the translation unit uses for it (the cpu target passes it to
// mtl_rt::tg_slot).
type Slot struct {
	ID   int
	Func string // function whose body declares it
	Name string // declared name
	Type string // element type and dimensions, e.g. "float[4][64]"
}

// Options configure Translate.
type Options struct {
	Target       Target
	Preprocessor *Preprocessor
}

// Translate vets src (see Vet), preprocesses it with opts.Preprocessor,
// parses the result with msl and translates what src.Entry reaches for
// opts.Target. Bad input yields positioned errors (file:line:col: msg)
// naming .metal lines; a source Vet refuses yields its *Refusal; one the
// preprocessor rejects a *PreprocessError.
func Translate(ctx context.Context, src backend.Source, opts Options) (*Unit, error) {
	if opts.Target == nil || opts.Preprocessor == nil {
		return nil, fmt.Errorf("translate %s: no target or preprocessor", sourceName(src))
	}
	closure, err := vet(src, src.IncludeDirs)
	var deferred *Refusal
	if r, ok := err.(*Refusal); ok && deferrable(r, sourceName(src)) {
		// Calls of undeclared functions in the source itself stop the
		// translation only if it keeps them: another kernel calling a
		// function the prelude lacks does not stop the entry.
		deferred, err = r, nil
	}
	if err != nil {
		return nil, err
	}
	if closure == nil && deferred == nil {
		closure = []IncludedFile{}
	}
	pre, err := opts.Preprocessor.Preprocess(ctx, src, closure)
	if err != nil {
		return nil, err
	}
	u, err := TranslatePreprocessed(pre, src, opts.Target)
	if err != nil {
		return nil, err
	}
	if deferred != nil {
		var kept msl.ErrorList
		for _, e := range deferred.Errors {
			if u.lines[Position{File: e.Pos.Filename, Line: e.Pos.Line}] {
				kept = append(kept, e)
			}
		}
		if len(kept) > 0 {
			return nil, &Refusal{Errors: kept}
		}
	}
	u.Includes = closure
	return u, nil
}

// undeclaredCall is how the vetting pass words a call of a function
// nobody declares.
const undeclaredCall = "call of undeclared function "

// deferrable reports whether every refusal of r is a call of an undeclared
// function in the main file, outside macro definitions: refusals that
// matter only if the translation keeps the code they are in.
func deferrable(r *Refusal, main string) bool {
	for _, e := range r.Errors {
		if e.Pos.Filename != main || !strings.HasPrefix(e.Msg, undeclaredCall) || strings.Contains(e.Msg, "(in the definition of macro") {
			return false
		}
	}
	return len(r.Errors) > 0
}

// TranslatePreprocessed is Translate after the vetting pass and the
// preprocessor: it translates pre, src's preprocessed text, for target.
// src gives the entry point, the function-constant values and the name
// of the main file.
func TranslatePreprocessed(pre *Preprocessed, src backend.Source, target Target) (u *Unit, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s:1:1: translation failed: %v", sourceName(src), r)
		}
	}()
	t := &tr{src: src, name: sourceName(src), pre: pre, tgt: target}
	return t.run()
}

// tr holds the state of one translation.
type tr struct {
	src  backend.Source
	name string
	pre  *Preprocessed
	tgt  Target
	f    *msl.File
	toks []msl.Token

	lineStarts []int // offsets of the lines of pre.Text

	rep    []*string         // replacement text per token; nil keeps it
	skip   []bool            // tokens left out
	prefix map[int]string    // text written just before a token
	before map[int][]genText // generated lines written before a token

	fields    map[string]bool   // struct field names: never swizzles
	structs   [][2]int          // struct spans (offsets)
	level     map[*msl.Func]int // what is kept of each function: none, decl, full
	byName    map[string][]*msl.Func
	scope     map[int]Scope       // tokens in a scope other than InType
	scalar    map[int]bool        // tokens of a FileScope declaration of scalars (Context.Scalar)
	tgByName  map[int]*msl.TGDecl // msl's layout of the entry's threadgroup storage, by name offset
	slotOf    map[*msl.TGDecl]int // its slot index
	instances map[int]int         // how many times msl lays out each declaration (a template helper's, once per instantiation)
	decls     []msl.TGDecl        // msl's layout
	slots     []*TGVar            // the entry's, by slot index
	nextID    int                 // next id for threadgroup storage outside the layout
	entry     *msl.Func           // the kernel
	inst      *msl.Instantiation  // its instantiation, or nil
	errs      msl.ErrorList
}

// A genText is text the translation generates, positioned at a source
// line.
type genText struct {
	pos  Position
	text string
}

// Levels of what is kept of a function.
const (
	keepNone = iota
	keepDecl // its declaration: a typedef or decltype names it
	keepFull // its definition: the entry reaches it
)

func (t *tr) run() (*Unit, error) {
	f, perr := msl.ParseOptions(t.name, t.pre.Text, msl.Options{})
	if f == nil {
		return nil, t.mapErr(perr)
	}
	t.f = f
	t.toks = f.Tokens
	t.lineStarts = []int{0}
	for i, c := range t.pre.Text {
		if c == '\n' {
			t.lineStarts = append(t.lineStarts, i+1)
		}
	}
	n := len(t.toks)
	t.rep = make([]*string, n)
	t.skip = make([]bool, n)
	t.prefix = map[int]string{}
	t.before = map[int][]genText{}
	t.scope = map[int]Scope{}
	t.scalar = map[int]bool{}

	if err := t.findEntry(); err != nil {
		if perr != nil {
			// The entry may be lost in what does not parse.
			return nil, t.mapErr(perr)
		}
		return nil, err
	}
	t.collectStructs()
	t.reach()
	t.dropInstantiations()
	t.globals()
	t.layout()
	t.functions()
	t.tensorOps()
	t.anonMembers()
	t.memberSpecialisations()
	t.reopenMetal()
	t.specialiseMetal()
	t.rewriteTokens()
	t.rangeDesignators()
	t.dedupe()
	if err := t.parseErrors(perr); err != nil {
		return nil, err
	}
	e := t.entryPoint()
	if len(t.errs) > 0 {
		t.errs.Sort()
		return nil, t.errs.Err()
	}
	tail, err := t.tgt.Entry(e)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.Pos, err)
	}
	u := &Unit{Entry: t.src.Entry, lines: map[Position]bool{}}
	u.Text = t.emit(e.Pos, tail, u.lines)
	for _, ep := range f.EntryPoints() {
		u.Entries = append(u.Entries, ep.Name)
	}
	for _, s := range t.slots {
		typ := s.Type
		for _, d := range s.Dims {
			typ += "[" + d + "]"
		}
		u.Slots = append(u.Slots, Slot{ID: s.ID, Func: s.Func.Name, Name: s.Name, Type: typ})
	}
	return u, nil
}

// pos is the source position of an offset of the preprocessed text.
func (t *tr) pos(off int) Position {
	return t.pre.Origin(t.lineOf(off))
}

// lineOf is the 0-based line of an offset of the preprocessed text.
func (t *tr) lineOf(off int) int {
	lo, hi := 0, len(t.lineStarts)
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if t.lineStarts[m] <= off {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// position is the file:line:col of an offset, for errors: the line of the
// source, the column of the preprocessed line (the same outside macro
// expansions).
func (t *tr) position(off int) token.Position {
	p := t.pos(off)
	if p.File == "" {
		p = Position{File: t.name, Line: 1}
	}
	l := t.lineOf(off)
	return token.Position{Filename: p.File, Line: p.Line, Column: off - t.lineStarts[l] + 1}
}

func (t *tr) errorf(off int, format string, args ...any) {
	t.errs.Add(t.position(off), fmt.Sprintf(format, args...))
}

// parseErrors returns msl's errors in what the translation keeps, mapped
// to the source: a syntax error in a function left out (another kernel
// the entry does not reach) does not stop the translation.
func (t *tr) parseErrors(err error) error {
	list, ok := err.(msl.ErrorList)
	if !ok {
		return err
	}
	var kept msl.ErrorList
	for _, e := range list {
		if l := e.Pos.Line - 1; l >= 0 && l < len(t.lineStarts) {
			if i := t.tokAt(t.lineStarts[l] + e.Pos.Column - 1); i < len(t.toks) && t.skip[i] && t.toks[i].Pos < t.lineStarts[l]+e.Pos.Column {
				continue
			}
		}
		kept = append(kept, e)
	}
	if len(kept) == 0 {
		return nil
	}
	return t.mapErr(kept)
}

// mapErr maps the positions of msl's errors on the preprocessed text to
// the source's.
func (t *tr) mapErr(err error) error {
	list, ok := err.(msl.ErrorList)
	if !ok {
		return err
	}
	if t.lineStarts == nil {
		t.lineStarts = []int{0}
		for i, c := range t.pre.Text {
			if c == '\n' {
				t.lineStarts = append(t.lineStarts, i+1)
			}
		}
	}
	var out msl.ErrorList
	for _, e := range list {
		p := t.pre.Origin(e.Pos.Line - 1)
		if p.File == "" {
			p = Position{File: t.name, Line: 1}
		}
		out.Add(token.Position{Filename: p.File, Line: p.Line, Column: e.Pos.Column}, e.Msg)
	}
	out.Sort()
	return out.Err()
}

// tokAt returns the index of the first token at or after offset off.
func (t *tr) tokAt(off int) int {
	return sort.Search(len(t.toks), func(i int) bool { return t.toks[i].Pos >= off })
}

// tokRange returns the token indices [a, b) of the offsets [pos, end).
func (t *tr) tokRange(pos, end int) (int, int) {
	return t.tokAt(pos), t.tokAt(end)
}

// text returns the text of token i, "" out of range.
func (t *tr) text(i int) string {
	if i < 0 || i >= len(t.toks) {
		return ""
	}
	return t.toks[i].Text
}

// findEntry finds the kernel src.Entry names and its instantiation.
func (t *tr) findEntry() error {
	f := t.f
	var names []string
	for _, ep := range f.EntryPoints() {
		names = append(names, ep.Name)
	}
	unknown := func() error {
		return fmt.Errorf("%s:1:1: unknown entry %q (kernels: %s)", t.name, t.src.Entry, strings.Join(names, ", "))
	}
	for _, in := range f.Instantiations {
		if in.HostName == t.src.Entry {
			t.inst = in
			break
		}
	}
	fn, _, err := f.Entry(t.src.Entry)
	if err != nil || fn == nil {
		if t.inst != nil {
			return fmt.Errorf("%s: host_name %q instantiates %s, which is not a template kernel defined in this file", t.position(t.inst.Pos), t.inst.HostName, t.inst.Func)
		}
		return unknown()
	}
	if fn.Kind != msl.Kernel {
		if t.inst != nil {
			return fmt.Errorf("%s: host_name %q instantiates %s, which is not a template kernel defined in this file", t.position(t.inst.Pos), t.inst.HostName, t.inst.Func)
		}
		return unknown()
	}
	if fn.Template != nil && t.inst == nil {
		return fmt.Errorf("%s: %s is a template kernel: name one of its instantiations (host_name)", t.position(fn.NamePos), fn.Name)
	}
	t.entry = fn
	return nil
}

// collectStructs records the struct spans and field names.
func (t *tr) collectStructs() {
	t.fields = map[string]bool{}
	for _, st := range t.f.Structs {
		t.structs = append(t.structs, [2]int{st.Pos, st.End})
		for _, d := range st.Fields {
			for _, n := range d.Names {
				t.fields[n.Name] = true
			}
		}
	}
}

// inStruct reports whether offset off lies inside a struct definition.
func (t *tr) inStruct(off int) bool {
	for _, s := range t.structs {
		if s[0] <= off && off < s[1] {
			return true
		}
	}
	return false
}

// isMember reports whether fn is a member function (defined in its struct
// or out of it): member functions are kept with their struct.
func isMember(fn *msl.Func) bool { return fn.Owner != "" }

// reach decides what is kept of every function: the entry and what it
// names, transitively, in full; what the rest of the file (types,
// constants, member functions) names, in full when called and as a
// declaration when only named (typedef decltype(kernel<float>) k_t);
// nothing of the rest, other kernels included, so that a kernel the
// target cannot translate does not stop the others. Names are matched
// as identifiers, overloads and specialisations together: an
// over-approximation of the call graph, never less.
func (t *tr) reach() {
	t.level = map[*msl.Func]int{}
	t.byName = map[string][]*msl.Func{}
	inFunc := make([]bool, len(t.toks)) // tokens of a free function or an instantiation
	for _, g := range t.f.Funcs {
		if isMember(g) {
			continue
		}
		t.byName[g.Name] = append(t.byName[g.Name], g)
		a, b := t.tokRange(g.Pos, g.End)
		for i := a; i < b; i++ {
			inFunc[i] = true
		}
	}
	for _, in := range t.f.Instantiations {
		a, b := t.tokRange(in.Pos, in.End)
		for i := a; i < b; i++ {
			inFunc[i] = true
		}
	}
	var queue []*msl.Func
	mark := func(name string, lvl int) {
		for _, g := range t.byName[name] {
			if t.level[g] < lvl {
				t.level[g] = lvl
				queue = append(queue, g)
			}
		}
	}
	scan := func(a, b, lvl, self int) {
		for i := a; i < b; i++ {
			tk := t.toks[i]
			if tk.Kind != msl.Ident || t.byName[tk.Text] == nil || tk.Pos == self {
				continue
			}
			l := lvl
			if t.text(i+1) == "(" {
				l = keepFull
			}
			mark(tk.Text, l)
		}
	}
	t.level[t.entry] = keepFull
	queue = append(queue, t.entry)
	// A free operator is used by its symbol, not its name (a == b, in
	// code or in a static_assert at file scope): every one is kept.
	for _, g := range t.f.Funcs {
		if !isMember(g) && strings.HasPrefix(g.Name, "operator") && t.level[g] < keepFull {
			t.level[g] = keepFull
			queue = append(queue, g)
		}
	}
	if t.inst != nil {
		a, b := t.tokRange(t.inst.Pos, t.inst.End)
		scan(a, b, keepFull, -1)
	}
	// Outside free functions: types, constants, member functions.
	start := -1
	for i := 0; i <= len(t.toks); i++ {
		if i < len(t.toks) && !inFunc[i] {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			scan(start, i, keepDecl, -1)
			start = -1
		}
	}
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		a, b := t.tokRange(g.Pos, g.End)
		if t.level[g] == keepDecl && g.Body != nil {
			b = t.tokAt(g.Body.Lbrace)
		}
		scan(a, b, t.level[g], g.NamePos) // its own name is no reference
	}
}

// dropInstantiations leaves out every explicit instantiation: the entry's
// is made by the target's wrapper, the others' kernels are not kept.
func (t *tr) dropInstantiations() {
	for _, in := range t.f.Instantiations {
		a, b := t.tokRange(in.Pos, in.End)
		for i := a; i < b; i++ {
			t.skip[i] = true
		}
	}
}

// globals handles namespace-scope declarations: function constants get
// their values, threadgroup variables are refused, and the address-space
// qualifiers of the rest are in the FileScope context.
func (t *tr) globals() {
	for _, d := range t.f.Globals {
		if t.inStruct(d.Pos) {
			continue
		}
		a, b := t.tokRange(d.Pos, d.End)
		fc := false
		for _, at := range d.Attrs {
			if at.Name == "function_constant" {
				fc = true
			}
		}
		if fc && len(d.Names) == 1 {
			t.functionConstant(d, a, b)
			continue
		}
		if d.AddrSpace == msl.Threadgroup {
			for _, n := range d.Names {
				if !t.f.PointerDeclarator(n) {
					t.errorf(d.Pos, "threadgroup variable at file scope")
					break
				}
			}
		}
		first := b
		if len(d.Names) > 0 {
			first = t.tokAt(d.Names[0].NamePos)
		}
		scalar := t.scalarDecl(d, a, first)
		for i := a; i < first; i++ {
			t.scope[i] = FileScope
			t.scalar[i] = scalar
		}
	}
	for _, st := range t.f.Structs {
		for _, d := range st.Fields {
			static := false
			for _, q := range d.Qualifiers {
				static = static || q == "static"
			}
			if !static || len(d.Names) == 0 {
				continue
			}
			a, first := t.tokRange(d.Pos, d.Names[0].NamePos)
			for i := a; i < first; i++ {
				t.scope[i] = StaticMember
			}
		}
	}
}

// scalarTypes are the words a type of scalars is written with: the
// arithmetic types, Metal's names for them, the fixed-width integers and
// the qualifiers that may stand among them.
var scalarTypes = setOf(`bool char short int long float double signed unsigned uchar ushort uint ulong
	size_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t
	const constexpr static volatile constant`)

// scalarDecl reports whether namespace-scope declaration d, whose tokens
// before the first declarator are [a, first), declares variables of an
// arithmetic type (not half or bfloat, which are classes in the prelude)
// and no arrays or pointers.
func (t *tr) scalarDecl(d *msl.Decl, a, first int) bool {
	if len(d.Names) == 0 {
		return false
	}
	for _, n := range d.Names {
		if len(n.Dims) > 0 || t.f.PointerDeclarator(n) {
			return false
		}
	}
	words := 0
	for i := a; i < first; i++ {
		tk := t.toks[i]
		switch {
		case tk.Kind == msl.Attribute:
		case tk.Kind == msl.Ident && scalarTypes[tk.Text]:
			words++
		default:
			return false
		}
	}
	return words > 0
}

// functionConstant replaces `constant T name [[function_constant(n)]];`
// (tokens [a, b)) with the target's definition of its value.
func (t *tr) functionConstant(d *msl.Decl, a, b int) {
	name := d.Names[0].Name
	var words []string
	for i := a; i < b && t.toks[i].Pos < d.Names[0].NamePos; i++ {
		switch tx := t.text(i); {
		case t.toks[i].Kind == msl.Attribute, tx == "constant", tx == "const", tx == "device", tx == "thread", tx == "threadgroup":
		default:
			words = append(words, t.typeText(i))
		}
	}
	typ := joinWords(words)
	c := &FuncConst{Name: name, Type: typ, Value: typ + "()"}
	if v, ok := t.src.Constants[name]; ok {
		lit, why := valueLiteral(v)
		if why != "" {
			t.errorf(d.Names[0].NamePos, "function constant %s: %s", name, why)
			return
		}
		c.Value, c.Set = lit, true
	}
	t.replace(a, b, t.tgt.FunctionConstant(c))
}

// replace replaces tokens [a, b) with s.
func (t *tr) replace(a, b int, s string) {
	if a >= b {
		return
	}
	t.rep[a] = &s
	for i := a + 1; i < b; i++ {
		t.skip[i] = true
	}
}

// layout lays out the entry's threadgroup storage the way msl does, so
// the runner's total and the source estimate agree by construction.
func (t *tr) layout() {
	t.tgByName = map[int]*msl.TGDecl{}
	t.slotOf = map[*msl.TGDecl]int{}
	m, err := msl.ThreadgroupMemory(t.f, t.src.Entry, msl.Env{File: t.f})
	if err != nil {
		t.errorf(t.entry.NamePos, "threadgroup memory: %v", err)
		return
	}
	t.instances = map[int]int{}
	for i := range m.Decls {
		d := &m.Decls[i]
		t.instances[d.Pos]++
		if t.instances[d.Pos] > 1 {
			continue
		}
		t.tgByName[d.Pos] = d
		t.slotOf[d] = i
	}
	t.decls = m.Decls
	t.slots = make([]*TGVar, len(m.Decls))
	t.nextID = len(m.Decls)
}

// functions decides, for each function, what is written: nothing, its
// declaration or its definition with the target's prefix and its
// threadgroup storage translated.
func (t *tr) functions() {
	for _, g := range t.f.Funcs {
		a, b := t.tokRange(g.Pos, g.End)
		if !isMember(g) {
			switch t.level[g] {
			case keepNone:
				for i := a; i < b; i++ {
					t.skip[i] = true
				}
				continue
			case keepDecl:
				if g.Body != nil && !t.hasInitList(g) {
					lb, rb := t.tokAt(g.Body.Lbrace), t.tokAt(g.Body.Rbrace)
					t.replace(lb, rb+1, ";")
					t.prefixFunc(g, a)
					continue
				}
			}
		}
		t.prefixFunc(g, a)
		if g.Body != nil {
			t.storage(g)
		}
	}
	for i, s := range t.slots {
		if s != nil || len(t.errs) > 0 {
			continue
		}
		if d := &t.decls[i]; t.instances[d.Pos] > 1 {
			// A template helper's storage, laid out once per
			// instantiation: the first slot holds the variable.
			t.slots[i] = &TGVar{Slot: i, ID: i, Name: d.Name, Type: d.Type, Func: d.FuncPtr, Instances: t.instances[d.Pos], Pos: t.pos(d.Pos)}
			continue
		}
		// msl laid out a declaration the functions kept do not hold.
		t.errorf(t.entry.NamePos, "threadgroup storage of %s is laid out by the front end but not found in the translation", t.entry.Name)
		break
	}
}

// hasInitList reports whether a function has a constructor's member
// initialiser list, which a declaration cannot keep.
func (t *tr) hasInitList(g *msl.Func) bool {
	a, b := t.tokRange(g.Rparen, g.Body.Lbrace)
	for i := a; i < b; i++ {
		if t.text(i) == ":" {
			return true
		}
	}
	return false
}

// prefixFunc writes the target's function prefix after the template
// header(s) of the function whose first token is a.
func (t *tr) prefixFunc(g *msl.Func, a int) {
	p := t.tgt.FuncPrefix(g)
	if p == "" {
		return
	}
	_, after := t.templateHeader(a)
	t.prefix[after] += p
}

// templateHeader returns the translated template header(s) starting at
// token a (`template <typename T, int N = 4>`) and the index of the token
// after them; "" and a when there is none.
func (t *tr) templateHeader(a int) (string, int) {
	var words []string
	i := a
	for t.text(i) == "template" && t.text(i+1) == "<" {
		e := t.matchAngle(i + 1)
		if e < 0 {
			break
		}
		for j := i; j <= e; j++ {
			if w := t.typeText(j); w != "" {
				words = append(words, w)
			}
		}
		i = e + 1
	}
	return joinWords(words), i
}

// matchAngle returns the index of the '>' closing the '<' at k, or -1.
func (t *tr) matchAngle(k int) int {
	depth := 0
	for j := k; j < len(t.toks); j++ {
		switch t.text(j) {
		case "<":
			depth++
		case ">":
			depth--
		case ">>":
			depth -= 2
		case "(", "[", "{":
			if m := t.closing(j); m > 0 {
				j = m
			}
		case ";", "}":
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

// closing returns the index of the bracket closing the one at k, or -1.
func (t *tr) closing(k int) int {
	open := t.text(k)
	shut := map[string]string{"(": ")", "[": "]", "{": "}"}[open]
	depth := 0
	for j := k; j < len(t.toks); j++ {
		switch t.text(j) {
		case open:
			depth++
		case shut:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// opening returns the index of the bracket (or the '<') opening the one
// at k, or -1: closing's mirror.
func (t *tr) opening(k int) int {
	shut := t.text(k)
	open := map[string]string{")": "(", "]": "[", "}": "{", ">": "<"}[shut]
	depth := 0
	for j := k; j >= 0; j-- {
		switch t.text(j) {
		case shut:
			depth++
		case open:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// storage translates the threadgroup storage declarations of g's body.
func (t *tr) storage(g *msl.Func) {
	msl.Walk(g.Body, func(s msl.Stmt) bool {
		d, ok := s.(*msl.Decl)
		if !ok || d.AddrSpace != msl.Threadgroup {
			return true
		}
		var vars []*msl.Declarator
		pointers := 0
		for _, n := range d.Names {
			if t.f.PointerDeclarator(n) {
				pointers++
			} else {
				vars = append(vars, n)
			}
		}
		if len(vars) == 0 {
			return true // pointers or references into threadgroup memory
		}
		if pointers > 0 {
			t.errorf(d.Pos, "a threadgroup declaration of storage and pointers together is not supported: declare them apart")
			return true
		}
		a, b := t.tokRange(d.Pos, d.End)
		for i := a; i < b; i++ {
			if t.text(i) == "alignas" {
				t.errorf(t.toks[i].Pos, "alignas on a threadgroup declaration is not supported")
				return true
			}
		}
		var out []string
		for _, n := range vars {
			v := t.tgVar(g, d, n)
			if v == nil {
				return true
			}
			local, hoist, err := t.tgt.Threadgroup(v)
			if err != nil {
				t.errorf(n.NamePos, "%v", err)
				return true
			}
			out = append(out, local)
			if hoist != "" {
				fa := t.tokAt(g.Pos)
				t.before[fa] = append(t.before[fa], genText{pos: v.Pos, text: hoist})
			}
		}
		t.replace(a, b, strings.Join(out, " "))
		return true
	})
}

// tgVar describes threadgroup storage declarator n of d in g, or reports
// why it cannot be translated and returns nil.
func (t *tr) tgVar(g *msl.Func, d *msl.Decl, n *msl.Declarator) *TGVar {
	if n.Init.End > n.Init.Pos {
		a, b := t.tokRange(n.Init.Pos, n.Init.End)
		for i := a; i < b; i++ {
			if !zeroToken(t.text(i)) {
				t.errorf(t.toks[i].Pos, "threadgroup variable %s has a non-zero initialiser", n.Name)
				return nil
			}
		}
	}
	v := &TGVar{Slot: -1, Func: g, Entry: g == t.entry, Name: n.Name, Namespace: g.Namespace, Pos: t.pos(n.NamePos)}
	v.Type = t.exprText(d.Type)
	for _, dim := range n.Dims {
		a, b := t.tokRange(dim.Pos, dim.End)
		v.Dims = append(v.Dims, t.rangeText(a, b))
	}
	if md := t.tgByName[n.NamePos]; md != nil {
		v.Slot = t.slotOf[md]
		v.ID = v.Slot
		v.Instances = t.instances[n.NamePos]
		t.slots[v.Slot] = v
	} else {
		v.ID = t.nextID
		t.nextID++
	}
	if g.Template != nil {
		hdr, _ := t.templateHeader(t.tokAt(g.Pos))
		v.Template = hdr
		v.TemplateNames = g.Template
	}
	locals := t.locals(g, n.NamePos)
	v.HoistType = hoist(v.Type, locals, g.Types)
	for _, dim := range v.Dims {
		v.HoistDims = append(v.HoistDims, hoist(dim, locals, g.Types))
	}
	return v
}

// locals returns the constant locals of g declared before offset at, by
// name: their initialisers' text.
func (t *tr) locals(g *msl.Func, at int) map[string]string {
	out := map[string]string{}
	msl.Walk(g.Body, func(s msl.Stmt) bool {
		d, ok := s.(*msl.Decl)
		if !ok || d.Pos >= at {
			return true
		}
		isConst := false
		for _, q := range d.Qualifiers {
			if q == "const" || q == "constexpr" {
				isConst = true
			}
		}
		if !isConst {
			return true
		}
		for _, n := range d.Names {
			if len(n.Dims) == 0 && n.Init.End > n.Init.Pos {
				init := strings.TrimSpace(t.f.Text(n.Init.Pos, n.Init.End))
				if strings.HasPrefix(init, "{") && strings.HasSuffix(init, "}") {
					init = strings.TrimSpace(init[1 : len(init)-1])
				}
				out[n.Name] = t.exprText(init)
			}
		}
		return true
	})
	return out
}

// hoist replaces in text the names of a function's local constants and
// type aliases by what they stand for, recursively, so that the text
// means the same at namespace scope.
func hoist(text string, consts, types map[string]string) string {
	for range 16 {
		toks, err := msl.Lex("", []byte(text))
		if err != nil {
			return text
		}
		changed := false
		var b strings.Builder
		prev := 0
		for i, tk := range toks {
			b.WriteString(text[prev:tk.Pos])
			prev = tk.End
			qualified := i > 0 && (toks[i-1].Text == "::" || toks[i-1].Text == "." || toks[i-1].Text == "->")
			if tk.Kind == msl.Ident && !qualified {
				if v, ok := types[tk.Text]; ok {
					// msl keeps an alias without its typename; a
					// qualified name stands for a type again only
					// with it (using val_t = typename K::val_t).
					// Before :: the name is a scope, not a type.
					nested := i+1 < len(toks) && toks[i+1].Text == "::"
					if !nested && (i == 0 || toks[i-1].Text != "typename") && qualifiedName(v) {
						b.WriteString("typename ")
					}
					b.WriteString(v)
					changed = true
					continue
				}
				if v, ok := consts[tk.Text]; ok {
					b.WriteString("(" + v + ")")
					changed = true
					continue
				}
			}
			b.WriteString(tk.Text)
		}
		b.WriteString(text[prev:])
		text = b.String()
		if !changed {
			break
		}
	}
	return text
}

// qualifiedName reports whether type text s is a name qualified by a
// scope (K::val_t, metal::vec<T, 2>), which typename may precede.
func qualifiedName(s string) bool {
	toks, err := msl.Lex("", []byte(s))
	if err != nil || len(toks) < 3 || toks[0].Text == "typename" || toks[0].Text == "::" {
		return false
	}
	depth := 0
	for _, tk := range toks {
		switch tk.Text {
		case "<", "(", "[":
			depth++
		case ">", ")", "]":
			depth--
		case ">>":
			depth -= 2
		case "::":
			if depth == 0 {
				last := toks[len(toks)-1]
				return last.Kind == msl.Ident || last.Text == ">" || last.Text == ">>"
			}
		}
	}
	return false
}

// typeText is the text of token i inside a type or an expression after
// the address-space rules and literal rewrites, ignoring replacements.
func (t *tr) typeText(i int) string {
	switch tx := t.text(i); tx {
	case "device", "thread", "threadgroup", "constant":
		return t.keyword(tx, InType, t.text(i-1), t.text(i+1))
	}
	if t.toks[i].Kind == msl.Attribute {
		return ""
	}
	if h, ok := literal(t.toks[i]); ok {
		return h
	}
	return t.text(i)
}

// keyword asks the target to spell an address-space keyword between the
// tokens prev and next.
func (t *tr) keyword(kw string, s Scope, prev, next string) string {
	return t.tgt.Keyword(kw, t.context(s, prev, next))
}

// context is the Context of an address-space keyword in scope s between
// the tokens prev and next.
func (t *tr) context(s Scope, prev, next string) Context {
	return Context{Scope: s, Const: prev == "const" || next == "const", Constexpr: prev == "constexpr" || next == "constexpr"}
}

// A ctorDecl is a constructor declaration found by its tokens: the
// struct's name (template arguments allowed, MD<T>) before a parameter
// list, inside that struct.
type ctorDecl struct {
	name, lp, rp int    // token indices of the name, '(' and ')'
	params       string // the parameter list's text, blanks normalised
}

// ctorBefore returns the constructor whose parameter list the token rp, a
// ')', closes.
func (t *tr) ctorBefore(rp int) (ctorDecl, bool) {
	if rp <= 0 || t.text(rp) != ")" {
		return ctorDecl{}, false
	}
	lp := t.opening(rp)
	if lp <= 0 {
		return ctorDecl{}, false
	}
	k := lp - 1
	if t.text(k) == ">" {
		k = t.opening(k) - 1
	}
	if k < 0 || t.toks[k].Kind != msl.Ident {
		return ctorDecl{}, false
	}
	if p := t.text(k - 1); p == "." || p == "->" || p == "::" || p == "~" {
		return ctorDecl{}, false
	}
	st := t.structAround(t.toks[k].Pos)
	if st == nil || st.Name != t.text(k) {
		return ctorDecl{}, false
	}
	return ctorDecl{name: k, lp: lp, rp: rp, params: strings.Join(strings.Fields(t.f.Text(t.toks[lp].Pos, t.toks[rp].End)), " ")}, true
}

// structAround returns the innermost struct whose braces hold offset off.
func (t *tr) structAround(off int) *msl.Struct {
	var best *msl.Struct
	for _, st := range t.f.Structs {
		if st.Pos <= off && off < st.End && (best == nil || st.Pos > best.Pos) {
			best = st
		}
	}
	return best
}

// repeatedCtor reports whether the struct around c declares, before c, a
// constructor of the same parameter list, so that c with its address
// space dropped would declare it a second time; and returns the token range
// of c's declaration, to leave out.
func (t *tr) repeatedCtor(c ctorDecl) (a, b int, ok bool) {
	st := t.structAround(t.toks[c.name].Pos)
	lo, _ := t.tokRange(st.Pos, st.End)
	for j := lo; j < c.name; j++ {
		if t.text(j) != st.Name || t.toks[j].Kind != msl.Ident {
			continue
		}
		k := j + 1
		if t.text(k) == "<" {
			if m := t.matchAngle(k); m > 0 {
				k = m + 1
			}
		}
		if t.text(k) != "(" {
			continue
		}
		rp := t.closing(k)
		if rp <= 0 {
			continue
		}
		if o, ok := t.ctorBefore(rp); ok && o.params == c.params && o.name != c.name {
			// The declaration runs from after the previous ';', '{', '}'
			// or access label to its ';' or its body's closing brace.
			a = c.name
			for a > lo && !strings.Contains(";{}:", t.text(a-1)) {
				a--
			}
			b = c.rp + 1
			for b < len(t.toks) && t.text(b) != ";" && t.text(b) != "{" {
				b++
			}
			if b < len(t.toks) && t.text(b) == "{" {
				b = t.closing(b)
			}
			return a, b + 1, b > 0 && b < len(t.toks)
		}
	}
	return 0, 0, false
}

// specifiersBefore reports whether const or constexpr is among the words
// of the declaration before token i, read back over identifiers and ::
// (static constexpr int constant n = 4: C++ refuses a second constexpr).
func (t *tr) specifiersBefore(i int) (isConst, isConstexpr bool) {
	for j := i - 1; j >= 0 && j > i-8; j-- {
		tk := t.toks[j]
		if tk.Kind == msl.Comment {
			continue
		}
		if tk.Kind != msl.Ident && tk.Text != "::" {
			break
		}
		switch tk.Text {
		case "const":
			isConst = true
		case "constexpr":
			isConstexpr = true
		}
	}
	return isConst, isConstexpr
}

// rangeText is the translated text of tokens [a, b), words joined.
func (t *tr) rangeText(a, b int) string {
	var words []string
	for i := a; i < b; i++ {
		if w := t.typeText(i); w != "" {
			words = append(words, w)
		}
	}
	return joinWords(words)
}

// exprText translates a type or expression given as text.
func (t *tr) exprText(s string) string {
	toks, err := msl.Lex("", []byte(s))
	if err != nil {
		return s
	}
	var words []string
	for i, tk := range toks {
		switch tk.Text {
		case "device", "thread", "threadgroup", "constant":
			prev, next := "", ""
			if i > 0 {
				prev = toks[i-1].Text
			}
			if i+1 < len(toks) {
				next = toks[i+1].Text
			}
			if w := t.keyword(tk.Text, InType, prev, next); w != "" {
				words = append(words, w)
			}
			continue
		}
		if h, ok := literal(tk); ok {
			words = append(words, h)
			continue
		}
		words = append(words, tk.Text)
	}
	return joinWords(words)
}

// joinWords joins the words of a type or an expression: a space between
// two words (identifiers, literals), after a comma and around =, none
// elsewhere.
func joinWords(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 && w != "" {
			prev := words[i-1]
			if prev == "," || prev == "=" || w == "=" || prev != "" && isWordByte(prev[len(prev)-1]) && isWordByte(w[0]) {
				b.WriteByte(' ')
			}
		}
		b.WriteString(w)
	}
	return b.String()
}

// rewriteTokens applies the token-local rules to every token still
// written as is: attributes dropped, address spaces spelled by the
// target, the kernel keyword dropped, is_function_constant_defined
// decided, literals and swizzles rewritten.
func (t *tr) rewriteTokens() {
	ts := t.toks
	set := func(i int, s string) {
		if t.rep[i] == nil {
			t.rep[i] = &s
		}
	}
	for i := 0; i < len(ts); i++ {
		if t.skip[i] || t.rep[i] != nil {
			continue
		}
		tk := ts[i]
		switch tk.Kind {
		case msl.Attribute:
			set(i, "")
		case msl.Float, msl.Int:
			if h, ok := literal(tk); ok {
				set(i, h)
			}
		case msl.Ident:
			switch tk.Text {
			case "device", "thread", "threadgroup", "constant":
				if c, ok := t.ctorBefore(i - 1); ok {
					// complex_t(U x) constant : ... (MLX): the object is
					// made in that address space; C++ has no such
					// qualifier on a constructor, and one constructor
					// serves every space: one that only repeats another for
					// a space (candle's MD<T>() threadgroup = default) is
					// left out.
					set(i, "")
					if a, b, ok := t.repeatedCtor(c); ok {
						for j := a; j < b; j++ {
							t.skip[j] = true
						}
					}
					continue
				}
				c := t.context(t.scope[i], t.text(i-1), t.text(i+1))
				c.Scalar = t.scalar[i]
				if !c.Const && !c.Constexpr {
					c.Const, c.Constexpr = t.specifiersBefore(i)
				}
				set(i, t.tgt.Keyword(tk.Text, c))
			case "kernel":
				if i+1 < len(ts) && (ts[i+1].Kind == msl.Ident || ts[i+1].Kind == msl.Attribute) {
					set(i, "")
				}
			case "is_function_constant_defined":
				if t.text(i+1) == "(" && i+2 < len(ts) && ts[i+2].Kind == msl.Ident && t.text(i+3) == ")" {
					_, ok := t.src.Constants[ts[i+2].Text]
					set(i, strconv.FormatBool(ok))
					for j := i + 1; j <= i+3; j++ {
						t.skip[j] = true
					}
					i += 3
				}
			default:
				if p := t.text(i - 1); (p == "." || p == "->") && isSwizzle(tk.Text) && !t.fields[tk.Text] && t.text(i+1) != "(" {
					switch {
					case len(tk.Text) > 1 && swizzleOnlyRead(ts, i):
						set(i, "mtl_rv_"+xyzw(tk.Text)+"()")
					case len(tk.Text) > 1:
						set(i, xyzw(tk.Text)+"()")
					case tk.Text != xyzw(tk.Text):
						set(i, xyzw(tk.Text))
					}
				}
			}
		}
	}
}

// outText is the translated text of tokens [a, b) as written, words
// joined by single spaces: equal code gives equal text.
func (t *tr) outText(a, b int) string {
	var words []string
	for i := a; i < b; i++ {
		if t.skip[i] {
			continue
		}
		w := t.text(i)
		if t.rep[i] != nil {
			w = *t.rep[i]
		}
		if w != "" {
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}

// dedupe leaves out a function whose translation repeats an earlier one
// of the same scope: overloads that Metal tells apart by address space
// (a member function qualified thread, device, threadgroup or constant;
// parameters pointing to different address spaces) are one function once
// address spaces are gone. Overloads whose bodies then differ cannot be
// told apart and are an error.
func (t *tr) dedupe() {
	t.dedupeSpecializations()
	type sig struct{ scope, text string }
	seen := map[sig]*msl.Func{}
	bodies := map[*msl.Func]string{}
	for _, g := range t.f.Funcs {
		if g.Body == nil {
			continue
		}
		a, b := t.tokRange(g.Pos, g.End)
		if t.skip[a] && t.rep[a] == nil {
			continue // not kept
		}
		lb := t.tokAt(g.Body.Lbrace)
		if t.rep[lb] != nil && *t.rep[lb] == ";" {
			continue // a declaration only
		}
		scope := "ns " + g.Namespace + " " + g.Owner
		for _, st := range t.f.Structs {
			if st.Pos <= g.Pos && g.End <= st.End {
				scope = "struct " + strconv.Itoa(st.Pos)
			}
		}
		k := sig{scope, t.outText(a, lb)}
		body := t.outText(lb, b)
		prev := seen[k]
		if prev == nil {
			seen[k] = g
			bodies[g] = body
			continue
		}
		if bodies[prev] != body {
			if t.level[g] == keepFull || isMember(g) {
				t.errorf(g.NamePos, "%s overloads %s (%s) by address space only, which the %s target does not tell apart, and their bodies differ", msl.QualifiedName(g), msl.QualifiedName(prev), t.position(prev.NamePos), t.tgt.Name())
			}
			continue
		}
		for i := a; i < b; i++ {
			t.skip[i] = true
		}
		delete(t.prefix, a)
	}
}

// dedupeSpecializations leaves out a class template specialisation whose
// translation repeats an earlier one of the same scope: MLX's
// pointer_element<device T*>, <thread T*>, ... specialise by address
// space, which is gone in C++, where they are one type; equal text is
// the same definition. Specialisations that then differ are left to the
// compiler, which refuses the redefinition.
func (t *tr) dedupeSpecializations() {
	seen := map[string]bool{}
	for _, st := range t.f.Structs {
		if st.SpecArgs == nil {
			continue
		}
		a, b := t.tokRange(st.Pos, st.End)
		if a >= b || t.skip[a] && t.rep[a] == nil {
			continue
		}
		scope := "ns " + st.Namespace
		if out := t.structAround(st.Pos - 1); out != nil && out != st {
			scope = "struct " + strconv.Itoa(out.Pos)
		}
		k := scope + "\x00" + t.outText(a, b)
		if !seen[k] {
			seen[k] = true
			continue
		}
		for i := a; i < b; i++ {
			t.skip[i] = true
		}
		delete(t.prefix, a)
	}
}

// metalOverloads returns the names, sorted, of the functions the
// translation keeps at the source's global scope that metal_stdlib also
// declares in namespace metal (see Namespacer).
func (t *tr) metalOverloads() []string {
	metal := metalFuncs()
	seen := map[string]bool{}
	var out []string
	for _, g := range t.f.Funcs {
		if g.Namespace != "" || isMember(g) || t.level[g] == keepNone || !metal[g.Name] || seen[g.Name] {
			continue
		}
		seen[g.Name] = true
		out = append(out, g.Name)
	}
	sort.Strings(out)
	return out
}

// entryPoint describes the entry for the target.
func (t *tr) entryPoint() *Entry {
	g := t.entry
	e := &Entry{Name: t.src.Entry, Func: g, Namespace: g.Namespace, Slots: t.slots, MaxThreads: 1024, Dispatched: t.src.MaxThreads, Pos: t.pos(g.NamePos)}
	e.QualName = "::" + g.Name
	if g.Namespace != "" {
		e.QualName = "::" + g.Namespace + "::" + g.Name
	}
	if g.Template != nil {
		hdr, _ := t.templateHeader(t.tokAt(g.Pos))
		e.Template = hdr
		e.TemplateNames = g.Template
		for _, name := range g.Template {
			if name == "" {
				t.errorf(g.NamePos, "template kernel %s has an unnamed template parameter, which the wrapper cannot pass on", g.Name)
			}
		}
		e.TemplateArgs = t.instArgs()
	}
	for _, a := range g.Attrs {
		if a.Name == "max_total_threads_per_threadgroup" && len(a.Args) == 1 {
			if n, ok := (&msl.Env{File: t.f}).Eval(a.Args[0]); ok && n > 0 && n <= 1024 {
				e.MaxThreads = int(n)
			}
		}
	}
	used := map[int]bool{}
	for _, p := range g.Params {
		for _, a := range p.Attrs {
			if a.Name == "buffer" && len(a.Args) == 1 {
				if n, ok := t.index(a.Args[0]); ok {
					used[n] = true
				}
			}
		}
	}
	next := 0
	for _, p := range g.Params {
		ep, why := t.param(p, used, &next)
		if why != "" {
			t.errorf(p.Pos, "kernel %s parameter %s: %s", g.Name, p.Name, why)
			continue
		}
		e.Params = append(e.Params, ep)
	}
	return e
}

// index evaluates a buffer or threadgroup index.
func (t *tr) index(s string) (int, bool) {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return n, true
	}
	if v, ok := (&msl.Env{File: t.f}).Eval(s); ok && v >= 0 && v < 1<<20 {
		return int(v), true
	}
	return 0, false
}

// threadAttrs are the thread-position attributes a kernel parameter may
// carry.
var threadAttrs = map[string]bool{
	"thread_position_in_grid": true, "thread_position_in_threadgroup": true, "threadgroup_position_in_grid": true,
	"threads_per_threadgroup": true, "threadgroups_per_grid": true, "threads_per_grid": true,
	"thread_index_in_threadgroup": true, "thread_index_in_simdgroup": true, "simdgroup_index_in_threadgroup": true,
	"simdgroups_per_threadgroup": true, "threads_per_simdgroup": true, "thread_execution_width": true,
	"thread_index_in_quadgroup": true, "quadgroup_index_in_threadgroup": true, "quadgroups_per_threadgroup": true,
}

// param describes kernel parameter p, or says why it is not supported. A
// device or constant parameter without a binding attribute takes the next
// buffer index no [[buffer(n)]] names.
func (t *tr) param(p *msl.Param, used map[int]bool, next *int) (*Param, string) {
	ep := &Param{Name: p.Name, Space: p.AddrSpace, Type: t.paramType(p), Index: -1, Pos: t.pos(p.Pos)}
	ep.Writable = p.AddrSpace == msl.Device && !constPointee(ep.Type)
	for _, a := range p.Attrs {
		switch a.Name {
		case "buffer", "threadgroup":
			if len(a.Args) != 1 {
				return nil, a.Name + " attribute needs one index"
			}
			ep.Bind = BindBuffer
			if a.Name == "threadgroup" {
				ep.Bind = BindThreadgroup
			}
			ep.IndexExpr = strings.TrimSpace(a.Args[0])
			if n, ok := t.index(a.Args[0]); ok {
				ep.Index = n
			}
			return ep, ""
		}
		if threadAttrs[a.Name] {
			ep.Bind, ep.Attr = BindThread, a.Name
			return ep, ""
		}
	}
	for _, a := range p.Attrs {
		switch a.Name {
		case "function_constant", "maybe_unused", "restrict":
			continue
		}
		return nil, fmt.Sprintf("attribute [[%s]] is not supported by the %s backend", a.Name, t.tgt.Name())
	}
	if p.AddrSpace == msl.Device || p.AddrSpace == msl.Constant {
		for used[*next] {
			*next++
		}
		ep.Bind, ep.Index, ep.IndexExpr = BindBuffer, *next, strconv.Itoa(*next)
		*next++
		return ep, ""
	}
	return nil, "no binding attribute"
}

// paramType is the translated type of a parameter: its tokens without
// attributes, name and default argument.
func (t *tr) paramType(p *msl.Param) string {
	a, b := t.tokRange(p.Pos, p.End)
	var words []string
	for i := a; i < b; i++ {
		if t.text(i) == "=" {
			break
		}
		if t.toks[i].Pos == p.NamePos {
			continue
		}
		if w := t.typeText(i); w != "" {
			words = append(words, w)
		}
	}
	// An array parameter, constant const IdxT strides[3] (MLX's
	// convolutions), is a pointer, as in C++: the wrapper casts the
	// buffer to its element's pointer type.
	if n := len(words); n >= 3 && words[n-1] == "]" {
		if k := slices.Index(words, "["); k > 0 && !slices.Contains(words[k+1:], "[") {
			words = append(words[:k], "*")
		}
	}
	return joinWords(words)
}

// emit writes the translation unit: the target's header, the kept tokens
// with generated lines and #line directives, and tail at the entry's
// position.
func (t *tr) emit(at Position, tail string, lines map[Position]bool) []byte {
	w := &writer{bol: true}
	w.raw(t.tgt.Header())
	if ns, ok := t.tgt.(Namespacer); ok {
		w.raw(ns.Overloads(t.metalOverloads()))
	}
	prev := 0
	for i, tk := range t.toks {
		for _, g := range t.before[i] {
			w.generated(g.pos, g.text)
		}
		trivia := string(t.pre.Text[prev:tk.Pos])
		prev = tk.End
		if t.skip[i] {
			continue
		}
		text := tk.Text
		if t.rep[i] != nil {
			text = *t.rep[i]
		}
		if pre := t.prefix[i]; pre != "" {
			if text == "" {
				pre = strings.TrimRight(pre, " ") // the kernel keyword, dropped
			}
			text = pre + text
		}
		p := t.pos(tk.Pos)
		if text != "" {
			lines[p] = true
		}
		if tk.Kind == msl.Directive {
			w.pragma(p, strings.TrimSpace(text))
			continue
		}
		w.token(p, trivia, text)
	}
	w.generated(at, tail)
	return w.b.Bytes()
}
