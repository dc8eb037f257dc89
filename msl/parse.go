package msl

import (
	"fmt"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"sync"

	"metalab/internal/directive"
)

// Parse lexes and parses a Metal source file. It always returns a File, as
// complete as the input allows; err is an ErrorList of positioned errors
// when the input is malformed (an empty file, unbalanced brackets,
// unterminated comments or literals, stray bytes, ...). Only the structure
// that mutation and translation need is modelled; every other construct is
// kept as an opaque byte range.
func Parse(filename string, src []byte) (*File, error) {
	return ParseWith(filename, src, nil)
}

// ParseWith is Parse with command-line defines (-D NAME=VALUE; an empty
// value means 1). They decide #if conditions that would otherwise be
// unknown, so that inactive branches are skipped rather than parsed
// alongside the active ones. The File keeps them as CmdDefines, so that an
// Env built from the File alone evaluates names the way the #if conditions
// were decided; an Env's own Defines still win.
func ParseWith(filename string, src []byte, defines map[string]string) (*File, error) {
	return ParseOptions(filename, src, Options{Defines: defines})
}

// Options are the command-line preprocessor settings of a parse.
type Options struct {
	Defines map[string]string // -D NAME=VALUE; an empty value means 1
	Undefs  []string          // -U NAME: certainly not defined, so #ifdef NAME is false rather than unknown

	// IncludeDirs are the -I directories: #include "x" is looked for in
	// the including file's directory, then in each of these; #include <x>
	// in these alone. Metal's own headers (<metal_stdlib>, ...) are never
	// read.
	IncludeDirs []string
	// ReadFile reads a header. Headers are read only when it is set or
	// IncludeDirs is not empty (then inputfile.ReadFile is the default:
	// regular files up to the input limit); otherwise
	// #include directives are recorded in File.Includes and not followed.
	ReadFile func(name string) ([]byte, error)
}

// ParseOptions is Parse with command-line defines, undefines and include
// directories. A name neither defined in the file (or a header it
// includes) nor given here stays unknown to #ifdef, as it may come from
// the host; Undefs says it does not.
//
// A header is lexed where it is included, with the macros defined so far,
// and parsed as a File of its own (File.Includes); its macros, typedefs,
// enumerators, structs, constants and functions are then in scope in the
// including file, for evaluation, layout, entry points and callees. Its
// functions are not the file's (File.Funcs holds only the file's own), so
// sites and edits stay in the file given. Problems in headers, and
// headers not found, are File.Warnings, not errors.
func ParseOptions(filename string, src []byte, opts Options) (*File, error) {
	var inc *includer
	if opts.ReadFile != nil || len(opts.IncludeDirs) > 0 {
		inc = &includer{opts: opts, read: opts.ReadFile, done: map[string]*File{}}
		if inc.read == nil {
			inc.read = defaultRead
		}
	}
	f := parseFile(filename, src, opts, inc, nil, nil)
	return f, f.parseErr
}

// parseFile lexes and parses one file; setup, when not nil, prepares its
// lexer (a header's shares its includer's macros), and prep the File
// before it is parsed (an expansion's sees the file it is expanded in).
func parseFile(filename string, src []byte, opts Options, inc *includer, setup func(*lexer), prep func(*File)) *File {
	tf := newTokenFile(filename, src)
	l := newLexer(filename, src, tf)
	l.inc = inc
	f := &File{
		Name:    filename,
		Src:     src,
		Enums:   map[string]int64{},
		Types:   map[string]string{},
		TokFile: tf,
		defs:    map[string][]*Define{},
	}
	l.owner = f
	if setup != nil {
		setup(l)
	} else {
		for _, name := range opts.Undefs {
			l.defines[name] = &lexDefine{certain: true, undefined: true}
		}
		for name, v := range opts.Defines {
			if v == "" {
				v = "1"
			}
			l.defines[name] = &lexDefine{body: v, certain: true, cmd: true}
		}
	}
	l.run()
	f.Tokens, f.Includes = l.toks, l.incs
	f.CmdUndefs = append([]string(nil), opts.Undefs...)
	if len(opts.Defines) > 0 {
		f.CmdDefines = make(map[string]string, len(opts.Defines))
		for k, v := range opts.Defines {
			f.CmdDefines[k] = v
		}
	}
	if prep != nil {
		prep(f)
	}
	f.parseErr = parseTokens(f, l)
	f.Warnings = append(f.Warnings, l.warns...)
	f.Warnings.Sort()
	return f
}

// parseTokens parses the tokens l lexed into f and returns the errors.
func parseTokens(f *File, l *lexer) error {
	p := &parser{f: f, src: l.str, errs: l.errs, enumSeen: map[string]bool{}, hides: map[string]string{}, pragmas: map[string]*string{}, lexDefs: l.defs, macroTokens: f.macroBudget}
	nsig, ndirs := 0, 0
	for _, t := range l.toks {
		switch t.Kind {
		case Comment, Skipped:
		case Directive:
			ndirs++
		default:
			nsig++
		}
	}
	bufs := bufPool.Get().(*parseBufs)
	defer bufs.put(p)
	p.bufs = bufs
	p.t = slices.Grow(bufs.t[:0], nsig)
	p.dirs = make([]Token, 0, ndirs)
	for i := range l.toks {
		switch t := &l.toks[i]; t.Kind {
		case Comment, Skipped:
		case Directive:
			p.dirs = append(p.dirs, *t)
		default:
			p.t = append(p.t, t)
		}
	}
	if len(p.t) == 0 && len(p.dirs) == 0 {
		if f.parent == nil {
			p.errs.Add(token.Position{Filename: f.Name, Line: 1, Column: 1}, "empty file")
		}
		f.idx = buildIndex(f)
		return p.errs.Err()
	}
	for _, d := range p.dirs {
		p.directive(d)
	}
	p.dropAlternatives()
	p.matchBrackets()
	if p.tooDeep {
		return p.errs.dedupe().Err()
	}
	p.scope(0, len(p.t), nil)
	f.funcs = map[string]*Func{}
	addFuncs := func(fns []*Func) {
		for _, fn := range fns {
			if fn.Body != nil && (f.funcs[fn.Name] == nil || f.funcs[fn.Name].SpecArgs != nil && fn.SpecArgs == nil && f.funcs[fn.Name].file == fn.file) {
				// The primary template wins over explicit specialisations.
				f.funcs[fn.Name] = fn
			}
		}
	}
	addFuncs(f.Funcs)
	for _, x := range f.Expansions {
		addFuncs(x.File.Funcs)
	}
	for _, in := range f.Includes {
		if in.File != nil {
			for name, fn := range in.File.funcs {
				if f.funcs[name] == nil {
					f.funcs[name] = fn
				}
			}
		}
	}
	f.idx = buildIndex(f)
	f.idx.src = l.str
	p.reportUnknown()
	return p.errs.dedupe().Err()
}

// parseBufs are the parser's working arrays, none of which the File keeps.
// They are pooled: a program parses many variants of one kernel file, and
// fresh arrays of this size cost more to fault in and clear than to reuse.
type parseBufs struct {
	t     []*Token
	match []int32
	drop  []bool
}

var bufPool = sync.Pool{New: func() any { return new(parseBufs) }}

// put returns p's arrays to the pool, dropping their pointers into the file.
func (b *parseBufs) put(p *parser) {
	clear(p.t[:cap(p.t)])
	b.t, b.match = p.t[:0], p.match[:0]
	bufPool.Put(b)
}

// A parser holds the state of one Parse call. It works on the significant
// tokens (no comments, directives or skipped text) and the precomputed
// matching bracket of each bracket token.
type parser struct {
	f     *File
	src   string // the source as lexed; token texts are substrings of it
	errs  ErrorList
	t     []*Token // significant tokens, pointing into File.Tokens
	dirs  []Token  // directives, in order
	match []int32  // index of the matching bracket, or -1

	enumSeen map[string]bool    // enumerators defined more than once are ambiguous
	hides    map[string]string  // memoised macroHides
	pragmas  map[string]*string // memoised macroPragma; nil: not a pragma macro

	specMacros  map[string]bool // memoised isSpecifierMacro
	instMacros  map[string]bool // memoised instMacro
	macroTokens *int            // tokens left for expanding macro uses that may instantiate
	loopMacros  map[string]bool // memoised loopHeaderMacro
	bufs        *parseBufs      // pooled arrays behind t, match and dropAlternatives
	stmtStack   []Stmt          // statements of the blocks being parsed, innermost last
	scratch     []*Token        // reused by function, param and decl for type tokens
	tdefs       []string        // template parameter defaults of the template being parsed
	specArgs    []string        // template arguments of the explicit specialisation being parsed

	cmdDefs   map[string]*Define // -D defines as Defines, made on first use
	curFunc   *Func              // the function whose body is being parsed
	funcNames map[string]bool    // names of the functions parsed so far
	lexDefs   []*Define          // the lexer's #define and #undef directives not yet recorded, in order
	prefixes  []*MacroUse        // macros used alone before statements, emitted by stmts
	unknown   []*unknownUse      // uses of macros defined nowhere, in order

	depth   int    // statement nesting of the stmt call in progress
	tooDeep bool   // brackets nest deeper than maxNesting; structure is not parsed
	ns      string // the enclosing namespaces of the scope being parsed, a::b; "" at global scope
}

// maxNesting bounds bracket and statement nesting, as clang's default
// -fbracket-depth of 256 bounds brackets in any source the Metal compiler
// accepts, so that a pathological file gives an error rather than
// exhausting the stack of the recursive parser and evaluator.
const maxNesting = 256

func (p *parser) errorf(off int, msg string) {
	p.errs.Add(p.f.Position(off), msg)
}

func (p *parser) text(a, b int) string { return p.src[a:b] }

// is reports whether token i exists (below end) and has text s.
func (p *parser) is(i, end int, s string) bool {
	return i < end && i < len(p.t) && p.t[i].Text == s && (p.t[i].Kind == Punct || p.t[i].Kind == Ident)
}

func (p *parser) isIdent(i, end int) bool {
	return i < end && i < len(p.t) && p.t[i].Kind == Ident
}

// matchOf returns the index of the bracket matching the one at i, or -1.
func (p *parser) matchOf(i int) int { return int(p.match[i]) }

// after returns the index after the bracket group opening at i, or i+1.
func (p *parser) after(i int) int {
	if m := p.matchOf(i); m > i {
		return m + 1
	}
	return i + 1
}

// directive records #define and #undef directives, as the lexer parsed
// them, and merges the headers of #include directives.
func (p *parser) directive(d Token) {
	name, _ := directiveName(d.Text)
	switch name {
	case "define", "undef":
		for len(p.lexDefs) > 0 && p.lexDefs[0].Pos < d.Pos {
			p.lexDefs = p.lexDefs[1:]
		}
		if len(p.lexDefs) == 0 || p.lexDefs[0].Pos != d.Pos {
			return
		}
		def := p.lexDefs[0]
		p.lexDefs = p.lexDefs[1:]
		if !def.undef {
			p.f.Defines = append(p.f.Defines, def)
		}
		p.f.defs[def.Name] = append(p.f.defs[def.Name], def)
	case "include", "include_next", "import":
		for _, in := range p.f.Includes {
			if in.Pos == d.Pos && in.File != nil {
				p.mergeInclude(d, in.File)
			}
		}
	}
}

// dropAlternatives removes from p.t the tokens of the second and later
// branches of any #if group in which some branch is unbalanced on its own
// (two alternative function headers that each open a brace, say), so that
// the first branch alone is parsed. Groups whose branches are each balanced
// keep all their tokens. The dropped tokens stay in File.Tokens.
func (p *parser) dropAlternatives() {
	type group struct {
		branches [][2]int
		start    int
	}
	var groups []*group
	drop := slices.Grow(p.bufs.drop[:0], len(p.t))[:len(p.t)]
	clear(drop)
	p.bufs.drop = drop
	any := false
	balanced := func(a, b int) bool {
		depth := 0
		for k := a; k < b; k++ {
			if drop[k] || p.t[k].Kind != Punct {
				continue
			}
			switch p.t[k].Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth--; depth < 0 {
					return false
				}
			}
		}
		return depth == 0
	}
	i := 0
	for _, d := range p.dirs {
		for i < len(p.t) && p.t[i].Pos < d.Pos {
			i++
		}
		switch name, _ := directiveName(d.Text); name {
		case "if", "ifdef", "ifndef":
			groups = append(groups, &group{start: i})
		case "elif", "elifdef", "elifndef", "else":
			if len(groups) > 0 {
				g := groups[len(groups)-1]
				g.branches = append(g.branches, [2]int{g.start, i})
				g.start = i
			}
		case "endif":
			if len(groups) == 0 {
				continue
			}
			g := groups[len(groups)-1]
			groups = groups[:len(groups)-1]
			g.branches = append(g.branches, [2]int{g.start, i})
			if len(g.branches) < 2 {
				continue
			}
			ok := true
			for _, br := range g.branches {
				ok = ok && balanced(br[0], br[1])
			}
			if ok {
				continue
			}
			for _, br := range g.branches[1:] {
				for k := br[0]; k < br[1]; k++ {
					drop[k] = true
					any = true
				}
			}
		}
	}
	if !any {
		return
	}
	kept := p.t[:0]
	for k, t := range p.t {
		if !drop[k] {
			kept = append(kept, t)
		}
	}
	p.t = kept
}

// matchBrackets pairs (), [] and {} and reports unbalanced ones.
func (p *parser) matchBrackets() {
	p.match = slices.Grow(p.bufs.match[:0], len(p.t))[:len(p.t)]
	var stack []int
	for i, t := range p.t {
		p.match[i] = -1
		if t.Kind != Punct {
			continue
		}
		switch t.Text {
		case "(", "[", "{":
			stack = append(stack, i)
			if len(stack) > maxNesting && !p.tooDeep {
				p.errorf(t.Pos, fmt.Sprintf("brackets nested more than %d deep", maxNesting))
				p.tooDeep = true
			}
		case ")", "]", "}":
			open := "("
			switch t.Text {
			case "]":
				open = "["
			case "}":
				open = "{"
			}
			k := len(stack) - 1
			for k >= 0 && p.t[stack[k]].Text != open {
				k--
			}
			if k < 0 {
				p.errorf(t.Pos, "unmatched '"+t.Text+"'")
				continue
			}
			for _, o := range stack[k+1:] {
				p.errorf(p.t[o].Pos, "unclosed '"+p.t[o].Text+"'")
			}
			p.match[stack[k]] = int32(i)
			p.match[i] = int32(stack[k])
			stack = stack[:k]
		}
	}
	for _, o := range stack {
		p.errorf(p.t[o].Pos, "unclosed '"+p.t[o].Text+"'")
	}
}

// scope parses file-scope (or struct-member) entities in tokens [i, end).
func (p *parser) scope(i, end int, st *Struct) {
	for i < end {
		next := p.top(i, end, st)
		if next <= i {
			next = i + 1
		}
		i = next
	}
}

// top parses one entity at file or struct scope and returns the index after it.
func (p *parser) top(i, end int, st *Struct) int {
	t := p.t[i]
	if t.Kind == Punct {
		switch t.Text {
		case ";":
			return i + 1
		case "{", "(", "[":
			return p.after(i)
		}
	}
	if t.Kind == Ident {
		switch t.Text {
		case "namespace":
			j := i + 1
			name := ""
			for j < end && (p.t[j].Kind == Ident || p.t[j].Text == "::" || p.t[j].Kind == Attribute) {
				if p.t[j].Kind != Attribute && p.t[j].Text != "inline" {
					name += p.t[j].Text
				}
				j++
			}
			if p.is(j, end, "{") {
				m := p.matchOf(j)
				if m < 0 {
					m = end
				}
				outer := p.ns
				if name != "" {
					if p.ns != "" {
						p.ns += "::"
					}
					p.ns += name
				}
				p.scope(j+1, m, st)
				p.ns = outer
				return m + 1
			}
			return p.semi(j, end) + 1
		case "extern":
			if i+1 < end && p.t[i+1].Kind == String {
				if p.is(i+2, end, "{") {
					m := p.matchOf(i + 2)
					if m < 0 {
						m = end
					}
					p.scope(i+3, m, st)
					return m + 1
				}
				return i + 2
			}
		case "using", "typedef":
			return p.alias(i, end, st)
		case "static_assert":
			return p.semi(i, end) + 1
		case "template":
			if p.is(i+1, end, "<") {
				return p.templated(i, end, st)
			}
			return p.instantiation(i, end)
		case "public", "private", "protected":
			if p.is(i+1, end, ":") {
				return i + 2
			}
		case "enum":
			return p.enum(i, end)
		case "struct", "class", "union":
			if lb := p.structBrace(i, end); lb > 0 {
				return p.structDef(i, lb, end, st, nil, i)
			}
		}
	}
	return p.entity(i, end, st, nil, i)
}

// semi returns the index of the next ';' at bracket depth 0 from i, or end.
func (p *parser) semi(i, end int) int {
	for i < end {
		if p.t[i].Kind == Punct {
			switch p.t[i].Text {
			case ";":
				return i
			case "(", "[", "{":
				i = p.after(i)
				continue
			}
		}
		i++
	}
	return end
}

// templateHeader parses `template <...>` at i and returns the parameter
// names, their defaults (nil when none has one; else as long as the names
// up to the last default) and the index after '>'.
func (p *parser) templateHeader(i, end int) ([]string, []string, int) {
	j := i + 2
	depth := 1
	start := j
	var params, defs []string
	param := func(a, b int) {
		params = append(params, p.tparamName(a, b))
		if d := p.tparamDefault(a, b); d != "" {
			for len(defs) < len(params)-1 {
				defs = append(defs, "")
			}
			defs = append(defs, d)
		}
	}
	for j < end {
		t := p.t[j]
		if t.Kind == Punct {
			switch t.Text {
			case "(", "[", "{":
				j = p.after(j)
				continue
			case "<":
				depth++
			case ">", ">>":
				depth--
				if t.Text == ">>" {
					depth--
				}
				if depth <= 0 {
					if start < j {
						param(start, j)
					}
					return params, defs, j + 1
				}
			case ",":
				if depth == 1 {
					param(start, j)
					start = j + 1
				}
			case ";":
				p.errorf(p.t[i].Pos, "unterminated template parameter list")
				return params, defs, j
			}
		}
		j++
	}
	p.errorf(p.t[i].Pos, "unterminated template parameter list")
	return params, defs, end
}

// tparamName returns the name of the template parameter in tokens [a, b):
// the last identifier before any default, or the name in a function-pointer
// declarator `T (*op)(T, T)`.
func (p *parser) tparamName(a, b int) string {
	for k := a; k+3 < b; k++ {
		if p.t[k].Text == "(" && p.t[k+1].Text == "*" && p.t[k+2].Kind == Ident && p.t[k+3].Text == ")" {
			return p.t[k+2].Text
		}
	}
	for k := a; k < b; k++ {
		if p.t[k].Text == "=" {
			b = k
			break
		}
	}
	if b-a >= 2 && p.t[b-1].Kind == Ident {
		return p.t[b-1].Text
	}
	return ""
}

// tparamDefault returns the default argument text of the template
// parameter in tokens [a, b), or "".
func (p *parser) tparamDefault(a, b int) string {
	for k := a; k < b; k++ {
		switch p.t[k].Text {
		case "(", "[", "{":
			k = p.after(k) - 1
		case "=":
			if k+1 < b && p.t[k].Kind == Punct {
				return normSpace(p.text(p.t[k+1].Pos, p.t[b-1].End))
			}
			return ""
		}
	}
	return ""
}

// templated parses a template declaration starting at i.
func (p *parser) templated(i, end int, st *Struct) int {
	params, defs, j := p.templateHeader(i, end)
	if params == nil {
		params = []string{}
	}
	for p.is(j, end, "template") && p.is(j+1, end, "<") {
		n := len(params)
		more, mdefs, k := p.templateHeader(j, end)
		if mdefs != nil {
			for len(defs) < n {
				defs = append(defs, "")
			}
			defs = append(defs, mdefs...)
		}
		params = append(params, more...)
		j = k
	}
	for defs != nil && len(defs) < len(params) {
		defs = append(defs, "")
	}
	outer := p.tdefs
	p.tdefs = defs
	defer func() { p.tdefs = outer }()
	if j >= end {
		return end
	}
	if p.isIdent(j, end) {
		switch p.t[j].Text {
		case "struct", "class", "union":
			if lb := p.structBrace(j, end); lb > 0 {
				return p.structDef(j, lb, end, st, params, i)
			}
		case "using", "typedef":
			return p.alias(j, end, st)
		}
	}
	return p.entity(j, end, st, params, i)
}

// instantiation parses an explicit instantiation such as
// `template [[host_name("x")]] [[kernel]] void f<float, 4>(...);` or
// `template [[host_name("x")]] kernel decltype(f<float>) f<float>;`.
func (p *parser) instantiation(i, end int) int {
	k := p.semi(i, end)
	in := &Instantiation{Pos: p.t[i].Pos, End: p.t[min(k, end-1)].End}
	nameAt := -1
	for j := i + 1; j < k; j++ {
		t := p.t[j]
		switch {
		case t.Kind == Attribute:
			for _, a := range p.attrs(*t) {
				if a.Name == "host_name" && len(a.Args) == 1 {
					in.HostName = unquote(a.Args[0])
				}
			}
		case t.Kind == Punct && (t.Text == "(" || t.Text == "[" || t.Text == "{"):
			if nameAt < 0 && t.Text == "(" && j > i+1 && p.t[j-1].Kind == Ident && p.t[j-1].Text != "decltype" {
				nameAt = j - 1
			}
			j = p.after(j) - 1
		case t.Kind == Ident && p.is(j+1, k, "<"):
			nameAt = j
			in.Args = nil
			depth := 0
			start := j + 2
			for m := j + 1; m < k; m++ {
				switch p.t[m].Text {
				case "(", "[", "{":
					m = p.after(m) - 1
				case "<":
					depth++
				case ">", ">>":
					depth--
					if p.t[m].Text == ">>" {
						depth--
					}
					if depth <= 0 {
						in.Args = append(in.Args, p.text(p.t[start].Pos, p.t[m-1].End))
						j = m
						m = k
					}
				case ",":
					if depth == 1 {
						in.Args = append(in.Args, p.text(p.t[start].Pos, p.t[m-1].End))
						start = m + 1
					}
				}
			}
		}
	}
	if nameAt < 0 {
		p.errorf(p.t[i].Pos, "cannot find the instantiated function")
		return k + 1
	}
	in.Func = p.t[nameAt].Text
	p.splitMacroArgs(in, p.t[i].Pos)
	p.f.Instantiations = append(p.f.Instantiations, in)
	return k + 1
}

// splitMacroArgs splits the template arguments written as one object-like
// macro that stands for several (ggml's kernel_flash_attn_ext_vec<FA_TYPES,
// half4, ...>, FA_TYPES seven types) into those, as the compiler sees
// them, with the definition in effect at the instantiation (ggml defines
// FA_TYPES twice): each template parameter then gets its own argument,
// not the one a macro's width pushed into its place.
func (p *parser) splitMacroArgs(in *Instantiation, at int) {
	var out []string
	for _, a := range in.Args {
		d := p.f.lookupDefine(a, at)
		if !directive.IsIdent(a) || d == nil || d.FuncLike {
			out = append(out, a)
			continue
		}
		m := &macroExpander{f: p.f, at: at, file: p.macroTokens}
		toks := m.expand(ppLex(a), nil, 0)
		parts := splitTopLevel(toks)
		if m.fail || len(parts) < 2 {
			out = append(out, a)
			continue
		}
		out = append(out, parts...)
	}
	in.Args = out
}

// splitTopLevel splits toks at the commas outside brackets, each part
// rendered as text.
func splitTopLevel(toks []ppTok) []string {
	var parts []string
	depth, start := 0, 0
	for i, t := range toks {
		switch t.text {
		case "(", "[", "{", "<":
			depth++
		case ")", "]", "}", ">":
			depth--
		case ",":
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(ppJoin(toks[start:i])))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(ppJoin(toks[start:])))
}

// alias parses `typedef T name;` and `using name = T;`.
func (p *parser) alias(i, end int, st *Struct) int {
	if p.t[i].Text == "typedef" && p.isIdent(i+1, end) {
		switch p.t[i+1].Text {
		case "struct", "class", "union":
			if lb := p.structBrace(i+1, end); lb > 0 {
				return p.structDef(i+1, lb, end, st, nil, i)
			}
		}
	}
	k := p.semi(i, end)
	if name, typ, ok := p.aliasAt(i, k); ok {
		p.f.Types[name] = typ
		if st != nil {
			if st.Types == nil {
				st.Types = map[string]string{}
			}
			st.Types[name] = typ
		}
	}
	return k + 1
}

// aliasAt parses `using name = T` or `typedef T name` in tokens [i, k), k
// being its ';'.
func (p *parser) aliasAt(i, k int) (name, typ string, ok bool) {
	if p.t[i].Text == "using" {
		if p.isIdent(i+1, k) && p.is(i+2, k, "=") && i+3 < k {
			t := p.t[i+3 : k]
			if len(t) > 1 && t[0].Text == "typename" {
				t = t[1:]
			}
			return p.t[i+1].Text, joinTokenPtrs(t), true
		}
		return "", "", false
	}
	if k-1 > i+1 && p.t[k-1].Kind == Ident {
		for j := i + 1; j < k; j++ {
			if p.t[j].Text == "(" || p.t[j].Text == "[" {
				return "", "", false
			}
		}
		t := p.t[i+1 : k-1]
		if len(t) > 1 && t[0].Text == "typename" {
			t = t[1:]
		}
		return p.t[k-1].Text, joinTokenPtrs(t), true
	}
	return "", "", false
}

// structBrace returns the index of the '{' opening the body of the struct
// whose keyword is at i, or 0 when it is a declaration without a body.
func (p *parser) structBrace(i, end int) int {
	for j := i + 1; j < end; j++ {
		t := p.t[j]
		if t.Kind == Punct {
			switch t.Text {
			case "{":
				return j
			case ";", "=", "}", ")":
				return 0
			case "(":
				if j > 0 && p.t[j-1].Text != "alignas" {
					return 0
				}
				j = p.after(j) - 1
			}
		}
	}
	return 0
}

// structDef parses a struct, class or union whose keyword is at i and whose
// body opens at lb.
func (p *parser) structDef(i, lb, end int, outer *Struct, tmpl []string, start int) int {
	st := &Struct{Pos: p.t[start].Pos, Template: tmpl, Union: p.t[i].Text == "union", Namespace: p.ns, file: p.f}
	if tmpl != nil && len(p.tdefs) == len(tmpl) {
		st.TemplateDefaults = p.tdefs
	}
	for j := i + 1; j < lb; j++ {
		t := p.t[j]
		if t.Text == "<" && st.Name != "" {
			st.SpecArgs = p.specPattern(j, lb)
		}
		if t.Text == ":" || t.Text == "<" {
			break
		}
		if t.Text == "(" {
			if j > 0 && p.t[j-1].Text == "alignas" && p.after(j)-1 > j+1 {
				st.Alignas = p.text(p.t[j+1].Pos, p.t[p.after(j)-2].End)
			}
			j = p.after(j) - 1
			continue
		}
		if t.Kind == Ident && t.Text != "final" && t.Text != "alignas" {
			st.Name = t.Text
		}
	}
	rb := p.matchOf(lb)
	if rb < 0 {
		rb = end
	}
	p.scope(lb+1, rb, st)
	k := p.semi(min(rb+1, end), end)
	if st.Name == "" && k-1 > rb && p.t[k-1].Kind == Ident && p.t[start].Text == "typedef" {
		st.Name = p.t[k-1].Text
	}
	st.End = p.t[min(k, end-1)].End
	if rb >= end {
		st.End = p.t[end-1].End
	}
	p.f.Structs = append(p.f.Structs, st)
	return k + 1
}

// specPattern returns the template arguments of a struct specialisation's
// name, S<T, false>, whose '<' is at lt, split at the commas outside
// brackets; the list ends at the matching '>' or at lb.
func (p *parser) specPattern(lt, lb int) []string {
	out := []string{}
	depth, start := 0, lt+1
	for j := lt; j < lb; j++ {
		switch p.t[j].Text {
		case "<", "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ">", ">>":
			depth--
			if p.t[j].Text == ">>" {
				depth--
			}
			if depth <= 0 {
				if start < j {
					last := joinTokenPtrs(p.t[start:j])
					if p.t[j].Text == ">>" && depth == 0 {
						last += ">" // S<A<T>>: the first '>' closes A
					}
					out = append(out, last)
				}
				return out
			}
		case ",":
			if depth == 1 {
				out = append(out, joinTokenPtrs(p.t[start:j]))
				start = j + 1
			}
		}
	}
	return out
}

// enum parses an enum definition and records its enumerators.
func (p *parser) enum(i, end int) int {
	lb := -1
	name := ""
	for j := i + 1; j < end; j++ {
		t := p.t[j]
		if t.Text == "{" {
			lb = j
			break
		}
		if t.Text == ";" {
			return j + 1
		}
		if t.Text == ":" {
			for j+1 < end && p.t[j+1].Text != "{" && p.t[j+1].Text != ";" {
				j++
			}
			continue
		}
		if t.Kind == Ident && t.Text != "class" && t.Text != "struct" {
			name = t.Text
		}
	}
	if lb < 0 {
		return end
	}
	rb := p.matchOf(lb)
	if rb < 0 {
		rb = end
	}
	env := &Env{File: p.f}
	var next int64
	known := true
	start := lb + 1
	for j := lb + 1; j <= rb && j < len(p.t); j++ {
		if j < rb && p.t[j].Text != "," {
			if t := p.t[j].Text; t == "(" || t == "[" || t == "{" {
				j = p.after(j) - 1
			}
			continue
		}
		if start < j && p.t[start].Kind == Ident {
			en := p.t[start].Text
			eq := -1
			for m := start + 1; m < j; m++ {
				if p.t[m].Text == "=" {
					eq = m
					break
				}
			}
			if eq >= 0 && eq+1 < j {
				env.At = p.t[start].Pos
				next, known = env.Eval(p.text(p.t[eq+1].Pos, p.t[j-1].End))
			}
			if known {
				p.setEnum(en, next)
				if name != "" {
					p.setEnum(name+"::"+en, next)
				}
			} else {
				p.setEnum(en, 0)
				delete(p.f.Enums, en)
			}
			next++
		}
		start = j + 1
	}
	return p.semi(min(rb+1, end), end) + 1
}

// setEnum records an enumerator; a name defined twice with different values
// is dropped so that it never evaluates.
func (p *parser) setEnum(name string, v int64) {
	if p.enumSeen[name] {
		if old, ok := p.f.Enums[name]; !ok || old != v {
			delete(p.f.Enums, name)
		}
		return
	}
	p.enumSeen[name] = true
	p.f.Enums[name] = v
}

// notNames are identifiers that never name a function before '('.
var notNames = map[string]bool{
	"decltype": true, "sizeof": true, "alignas": true, "alignof": true, "__attribute__": true,
	"noexcept": true, "static_assert": true, "__declspec": true, "if": true, "for": true,
	"while": true, "switch": true, "return": true,
}

// entity parses a function or a declaration starting at i; tmpl holds the
// template parameters and start the index of the first token (template
// header included).
func (p *parser) entity(i, end int, st *Struct, tmpl []string, start int) int {
	if t := p.t[i]; t.Kind == Ident && p.is(i+1, end, "(") {
		if d := p.def(t.Text, 0); d != nil && d.FuncLike {
			// A macro invocation at file scope.
			j := p.after(i + 1)
			if st == nil && tmpl == nil && p.instMacro(t.Text, 0) {
				p.macroInstantiations(i, j)
			}
			if p.is(j, end, ";") {
				j++
			}
			return j
		}
	}
	if t := p.t[i]; t.Kind == Ident && st == nil && tmpl == nil && !p.is(i+1, end, "(") {
		if d := p.def(t.Text, 0); d != nil && !d.FuncLike && p.instMacro(t.Text, 0) && p.macroInstantiations(i, i+1) > 0 {
			// An object-like macro that expands to instantiations.
			if p.is(i+1, end, ";") {
				return i + 2
			}
			return i + 1
		}
	}
	angle := 0
	for j := i; j < end; j++ {
		t := p.t[j]
		if t.Kind == Ident && t.Text == "operator" && angle == 0 {
			k := j + 1
			if p.is(k, end, "(") && p.is(k+1, end, ")") {
				k += 2
			}
			for k < end && p.t[k].Text != "(" && p.t[k].Text != ";" && p.t[k].Text != "{" {
				k++
			}
			if !p.is(k, end, "(") {
				return p.semi(j, end) + 1
			}
			name := "operator" + joinTokenPtrs(p.t[j+1:k])
			if k > j+1 && wordLike(*p.t[j+1]) {
				name = "operator " + joinTokenPtrs(p.t[j+1:k])
			}
			return p.function(i, j, j, k, end, st, tmpl, start, name)
		}
		if t.Kind != Punct {
			continue
		}
		switch t.Text {
		case "<":
			if j > i && p.t[j-1].Kind == Ident {
				angle++
			}
		case ">":
			if angle > 0 {
				angle--
			}
		case ">>":
			angle = max(angle-2, 0)
		case ";":
			p.declaration(i, j, st, start)
			return j + 1
		case "=":
			if angle == 0 {
				k := p.semi(j, end)
				p.declaration(i, k, st, start)
				return k + 1
			}
		case "{":
			if angle == 0 {
				// A brace initialiser: `constant float4 x{1, 2, 3, 4};`.
				k := p.semi(j, end)
				p.declaration(i, k, st, start)
				return k + 1
			}
			j = p.after(j) - 1
		case "[":
			j = p.after(j) - 1
		case "(":
			if angle == 0 && tmpl != nil && len(tmpl) == 0 && j > i+1 && (p.is(j-1, end, ">") || p.is(j-1, end, ">>")) {
				// An explicit specialisation: template<> bool cmp<3>(...).
				if lt, args := p.specialisation(i, j-1); lt > i && !notNames[p.t[lt-1].Text] {
					p.specArgs = args
					k := p.function(i, lt-1, lt-1, j, end, st, tmpl, start, p.t[lt-1].Text)
					p.specArgs = nil
					return k
				}
			}
			if angle == 0 && j > i && p.t[j-1].Kind == Ident && !notNames[p.t[j-1].Text] {
				nameStart := j - 1
				if j-2 >= i && p.t[j-2].Text == "~" {
					nameStart = j - 2
				}
				name := joinTokenPtrs(p.t[nameStart:j])
				return p.function(i, nameStart, j-1, j, end, st, tmpl, start, name)
			}
			j = p.after(j) - 1
		}
	}
	return end
}

// specialisation finds the template argument list that closes with the '>'
// at gt, preceded by a name: it returns the index of its '<' and the
// argument texts, or -1 when gt closes no such list.
func (p *parser) specialisation(i, gt int) (int, []string) {
	depth := 0
	for k := gt; k > i; k-- {
		switch p.t[k].Text {
		case ">":
			depth++
		case ">>":
			depth += 2
		case "<":
			depth--
		case ")", "]", "}":
			if m := p.matchOf(k); m >= 0 && m < k {
				k = m
			}
			continue
		}
		if depth > 0 {
			continue
		}
		if depth < 0 || p.t[k].Text != "<" || !p.isIdent(k-1, gt) || k-1 < i {
			return -1, nil
		}
		args := []string{}
		start := k + 1
		d := 0
		for m := k + 1; m <= gt; m++ {
			switch p.t[m].Text {
			case "(", "[", "{":
				m = p.after(m) - 1
				continue
			case "<":
				d++
				continue
			case ">", ">>":
				if m < gt {
					d--
					if p.t[m].Text == ">>" {
						d--
					}
					continue
				}
			case ",":
				if d > 0 {
					continue
				}
			default:
				continue
			}
			switch {
			case m == gt && p.t[m].Text == ">>":
				// cmp<vec<int, 2>>: the first '>' closes the inner list.
				args = append(args, normSpace(p.text(p.t[start].Pos, p.t[m].Pos+1)))
			case start < m:
				args = append(args, normSpace(p.text(p.t[start].Pos, p.t[m-1].End)))
			}
			start = m + 1
		}
		return k, args
	}
	return -1, nil
}

// specifiers are words before a function's return type that are not part of it.
var specifiers = map[string]bool{
	"kernel": true, "vertex": true, "fragment": true, "inline": true, "static": true,
	"constexpr": true, "extern": true, "virtual": true, "explicit": true, "friend": true,
	"__inline__": true, "__attribute__": true, "always_inline": true, "noinline": true,
	"__always_inline__": true, "consteval": true,
}

// isSpecifierMacro reports whether name is an object-like macro whose body
// consists only of specifiers and attributes, like METAL_FUNC.
func (p *parser) isSpecifierMacro(name string) bool {
	return memo(&p.specMacros, name, p.specifierMacro)
}

// memo returns (*m)[key], computing it with f and remembering it the first
// time key is asked for.
func memo[V any](m *map[string]V, key string, f func(string) V) V {
	if v, ok := (*m)[key]; ok {
		return v
	}
	v := f(key)
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[key] = v
	return v
}

// specifierMacro computes isSpecifierMacro.
func (p *parser) specifierMacro(name string) bool {
	d := p.def(name, 0)
	if d == nil || d.FuncLike {
		return false
	}
	if d.Body == "" {
		return true
	}
	depth := 0
	for _, t := range lexExpr(d.Body) {
		switch {
		case t.Text == "(":
			depth++
		case t.Text == ")":
			depth--
		case depth > 0 || t.Kind == Attribute:
		case t.Kind == Ident && specifiers[t.Text]:
		default:
			return false
		}
	}
	return true
}

// function parses a function whose name tokens start at nameStart, whose
// name ends at nameAt (for NamePos) and whose parameter list opens at lp.
func (p *parser) function(i, nameStart, nameAt, lp, end int, st *Struct, tmpl []string, start int, name string) int {
	rp := p.matchOf(lp)
	if rp < 0 {
		return end
	}
	k := rp + 1
trailers:
	for k < end {
		t := p.t[k]
		switch {
		case t.Kind == Attribute, t.Text == "&", t.Text == "&&":
			k++
		case t.Kind == Ident && (t.Text == "const" || t.Text == "thread" || t.Text == "device" ||
			t.Text == "constant" || t.Text == "threadgroup" || t.Text == "override" ||
			t.Text == "final" || t.Text == "volatile" || t.Text == "mutable"):
			k++
		case t.Kind == Ident && (t.Text == "noexcept" || t.Text == "__attribute__"):
			k++
			if p.is(k, end, "(") {
				k = p.after(k)
			}
		case t.Text == "->":
			k++
			for k < end && p.t[k].Text != "{" && p.t[k].Text != ";" {
				if p.t[k].Text == "(" || p.t[k].Text == "[" {
					k = p.after(k)
					continue
				}
				k++
			}
		default:
			break trailers
		}
	}
	body := -1
	declEnd := -1
	switch {
	case p.is(k, end, "{"):
		body = k
	case p.is(k, end, ";"):
		declEnd = k
	case p.is(k, end, "="):
		declEnd = p.semi(k, end)
	case p.is(k, end, ":") && st != nil || p.is(k, end, ":") && nameStart >= 2 && p.t[nameStart-1].Text == "::":
		// A constructor's member initialiser list.
		for m := k + 1; m < end; m++ {
			if p.t[m].Text == "(" || p.t[m].Text == "[" {
				m = p.after(m) - 1
				continue
			}
			if p.t[m].Text == "{" {
				if m > 0 && p.t[m-1].Kind == Ident {
					m = p.after(m) - 1
					continue
				}
				body = m
				break
			}
			if p.t[m].Text == ";" {
				declEnd = m
				break
			}
		}
	}
	if body < 0 && declEnd < 0 {
		if nameStart == i {
			// An unknown macro invocation at file scope.
			return rp + 1
		}
		// An unknown macro between the parameters and the body.
		for m := k; m < end && m < k+8; m++ {
			if p.t[m].Text == "{" {
				body = m
				break
			}
			if p.t[m].Text == ";" {
				declEnd = m
				break
			}
			if p.t[m].Text == "(" {
				m = p.after(m) - 1
			}
		}
		if body < 0 && declEnd < 0 {
			return rp + 1
		}
	}
	fn := &Func{
		file:      p.f,
		Name:      name,
		NamePos:   p.t[nameAt].Pos,
		Pos:       p.t[start].Pos,
		Template:  tmpl,
		Lparen:    p.t[lp].Pos,
		Rparen:    p.t[rp].Pos,
		SpecArgs:  p.specArgs,
		Namespace: p.ns,
	}
	p.specArgs = nil
	if tmpl != nil && len(p.tdefs) == len(tmpl) {
		fn.TemplateDefaults = p.tdefs
	}
	if st != nil {
		fn.Owner = st.Name
	}
	// Qualified out-of-class definitions: X::f.
	typeEnd := nameStart
	ownerAt := nameStart - 2
	if ownerAt >= i && p.t[nameStart-1].Text == "::" && p.t[ownerAt].Text == ">" {
		// Buf<T>::f: step back over the template arguments.
		for depth := 0; ownerAt >= i; ownerAt-- {
			if p.t[ownerAt].Text == ">" {
				depth++
			} else if p.t[ownerAt].Text == "<" {
				if depth--; depth == 0 {
					ownerAt--
					break
				}
			}
		}
	}
	if ownerAt >= i && p.t[nameStart-1].Text == "::" && p.t[ownerAt].Kind == Ident {
		// A qualified name: X::f is a member of X when X is a struct of
		// this file; other qualifiers are namespaces.
		if p.f.structNamed(p.t[ownerAt].Text) != nil {
			fn.Owner = p.t[ownerAt].Text
		}
		typeEnd = ownerAt
		for typeEnd-2 >= i && p.t[typeEnd-1].Text == "::" && p.t[typeEnd-2].Kind == Ident {
			typeEnd -= 2
		}
	}
	rt := p.scratch[:0]
	for j := i; j < typeEnd; j++ {
		t := p.t[j]
		switch {
		case t.Kind == Attribute:
			as := p.attrs(*t)
			fn.Attrs = appendAttrs(fn.Attrs, as)
			for _, a := range as {
				if a.Name == "kernel" {
					fn.Kind = Kernel
				}
			}
		case t.Kind == Ident && (t.Text == "__attribute__" || t.Text == "alignas"):
			if p.is(j+1, typeEnd, "(") {
				j = p.after(j+1) - 1
			}
		case t.Kind == Ident && specifiers[t.Text]:
			if t.Text == "kernel" {
				fn.Kind = Kernel
			}
		case t.Kind == Ident && len(rt) == 0 && p.isSpecifierMacro(t.Text):
		default:
			rt = append(rt, t)
		}
	}
	fn.ReturnType = joinTokenPtrs(rt)
	p.scratch = rt[:0]
	fn.Params = p.params(lp, rp)
	if body >= 0 {
		outerFn := p.curFunc
		p.curFunc = fn
		fn.Body = p.block(body, end)
		p.curFunc = outerFn
		fn.End = fn.Body.Rbrace + 1
		k = p.after(body)
	} else {
		fn.End = p.t[min(declEnd, end-1)].End
		k = declEnd + 1
	}
	p.f.Funcs = append(p.f.Funcs, fn)
	if p.funcNames == nil {
		p.funcNames = map[string]bool{}
	}
	p.funcNames[fn.Name] = true
	if st != nil {
		st.Methods = append(st.Methods, fn)
	}
	return k
}

// attrs splits an Attribute token into its attributes.
func (p *parser) attrs(t Token) []*Attr {
	inner := t.Text[2 : len(t.Text)-2]
	var out []*Attr
	off := t.Pos + 2
	depth := 0
	start := 0
	flush := func(e int) {
		raw := inner[start:e]
		s := strings.TrimSpace(raw)
		if s == "" {
			return
		}
		lead := len(raw) - len(strings.TrimLeft(raw, " \t\r\n"))
		a := &Attr{Pos: off + start + lead, End: off + start + lead + len(s)}
		if lp := strings.IndexByte(s, '('); lp >= 0 && strings.HasSuffix(s, ")") {
			a.Name = strings.TrimSpace(s[:lp])
			a.Args = []string{}
			if args := strings.TrimSpace(s[lp+1 : len(s)-1]); args != "" {
				a.Args = splitTop(args, ',')
			}
		} else {
			a.Name = s
		}
		out = append(out, a)
	}
	for k := 0; k < len(inner); k++ {
		switch inner[k] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '"':
			for k++; k < len(inner) && inner[k] != '"'; k++ {
				if inner[k] == '\\' {
					k++
				}
			}
		case ',':
			if depth == 0 {
				flush(k)
				start = k + 1
			}
		}
	}
	flush(len(inner))
	return out
}

// appendAttrs appends as to list, taking as itself when list is empty.
func appendAttrs(list, as []*Attr) []*Attr {
	if len(list) == 0 {
		return as
	}
	return append(list, as...)
}

// unquote removes the quotes of a string literal, concatenating adjacent
// literals ("k_" "float" is k_float), or returns s trimmed.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	if strings.Count(s, `"`) > 2 {
		var b strings.Builder
		rest := s
		for rest != "" {
			if rest[0] != '"' {
				return strings.Trim(s, `"`)
			}
			e, _ := ppQuoted(rest, 0)
			u, err := strconv.Unquote(rest[:e])
			if err != nil {
				return strings.Trim(s, `"`)
			}
			b.WriteString(u)
			rest = strings.TrimLeft(rest[e:], " \t\r\n")
		}
		return b.String()
	}
	return strings.Trim(s, `"`)
}

// addrSpaces maps address-space keywords to their AddrSpace.
var addrSpaces = map[string]AddrSpace{
	"device": Device, "constant": Constant, "threadgroup": Threadgroup, "thread": ThreadSpace,
}

// params parses the parameter list between lp and rp.
func (p *parser) params(lp, rp int) []*Param {
	var out []*Param
	start := lp + 1
	angle := 0
	for j := lp + 1; j <= rp; j++ {
		t := p.t[j]
		if j < rp {
			switch t.Text {
			case "(", "[", "{":
				j = p.after(j) - 1
			case "<":
				if p.t[j-1].Kind == Ident {
					angle++
				}
			case ">":
				angle = max(angle-1, 0)
			case ">>":
				angle = max(angle-2, 0)
			}
			if t.Text != "," || angle > 0 {
				continue
			}
		}
		if start < j {
			if !(j == rp && start == lp+1 && j-start == 1 && p.t[start].Text == "void") {
				out = append(out, p.param(start, j))
			}
		}
		start = j + 1
	}
	return out
}

// param parses one parameter in tokens [a, b).
func (p *parser) param(a, b int) *Param {
	pm := &Param{Pos: p.t[a].Pos, End: p.t[b-1].End}
	for k := a; k < b; k++ {
		if p.t[k].Text == "=" {
			b = k
			break
		}
		if t := p.t[k].Text; t == "(" || t == "[" || t == "{" {
			k = p.after(k) - 1
		}
	}
	toks := p.scratch[:0]
	defer func() { p.scratch = toks[:0] }()
	name := -1
	for k := a; k < b; k++ {
		t := p.t[k]
		if t.Kind == Attribute {
			pm.Attrs = appendAttrs(pm.Attrs, p.attrs(*t))
			continue
		}
		if sp, ok := addrSpaces[t.Text]; ok && t.Kind == Ident {
			pm.AddrSpace = sp
			continue
		}
		if t.Text == "(" && k+3 < b && p.t[k+1].Text == "*" && p.t[k+2].Kind == Ident && p.t[k+3].Text == ")" {
			name = len(toks) + 2
		}
		toks = append(toks, t)
	}
	if name < 0 {
		// The name is the identifier before any trailing array dimensions.
		e := len(toks)
		for e > 0 && toks[e-1].Text == "]" {
			depth := 0
			for e > 0 {
				e--
				if toks[e].Text == "]" {
					depth++
				} else if toks[e].Text == "[" {
					depth--
					if depth == 0 {
						break
					}
				}
			}
		}
		if e >= 2 && toks[e-1].Kind == Ident && toks[e-2].Text != "::" && toks[e-1].Text != "const" && toks[e-1].Text != "volatile" {
			name = e - 1
		}
	}
	if name >= 0 {
		pm.Name = toks[name].Text
		pm.NamePos = toks[name].Pos
		toks = append(toks[:name], toks[name+1:]...)
	}
	pm.Type = joinTokenPtrs(toks)
	return pm
}

// declQualifiers are words that may precede a declaration's type.
var declQualifiers = map[string]bool{
	"const": true, "constexpr": true, "static": true, "volatile": true, "inline": true,
	"extern": true, "thread_local": true, "mutable": true, "register": true,
}

// looksLikeDecl reports whether the statement at i is a declaration: a
// qualified declaration, or a type followed by a name.
func (p *parser) looksLikeDecl(i, end int) bool {
	j := i
	for j < end && p.t[j].Kind == Ident && (declQualifiers[p.t[j].Text] || addrSpaces[p.t[j].Text] != NoSpace) {
		j++
	}
	if j > i {
		return true
	}
	k := p.typeEnd(j, end)
	if k <= j || k >= end || p.t[k].Kind != Ident {
		return false
	}
	if !p.isIdent(k, end) {
		return false
	}
	switch nt := k + 1; {
	case nt >= end:
		return false
	case p.t[nt].Kind == Attribute:
		return true
	default:
		switch p.t[nt].Text {
		case "=", ";", ",", "[", "{", "(", ":":
			return true
		}
	}
	return false
}

// typeEnd returns the index after a type starting at j: words, scope
// operators, template arguments, pointers and references.
func (p *parser) typeEnd(j, end int) int {
	k := j
	for k < end {
		t := p.t[k]
		switch {
		case t.Kind == Ident && (t.Text == "typename" || t.Text == "struct" || t.Text == "unsigned" || t.Text == "signed" || t.Text == "enum"):
			k++
		case t.Kind == Ident && !stmtKeywords[t.Text] && !declQualifiers[t.Text] || t.Text == "::":
			if t.Text == "::" {
				k++ // the name after it is part of the type: K::acc_type x
				continue
			}
			if t.Kind == Ident && p.isIdent(k+1, end) && !(k+2 < end && (p.t[k+2].Text == "::" || p.t[k+2].Text == "<")) {
				// "long long x", "unsigned int x": the type continues only
				// when another word follows; otherwise the next word is the name.
				if _, builtin := scalarSizes[t.Text]; builtin && p.isIdent(k+2, end) {
					k++
					continue
				}
				return k + 1
			}
			k++
			if p.is(k, end, "<") {
				m := p.angleEnd(k, end)
				if m < 0 {
					return j
				}
				k = m + 1
			}
			if !p.is(k, end, "::") {
				for k < end && (p.t[k].Text == "*" || p.t[k].Text == "&" || p.t[k].Text == "&&" || p.t[k].Text == "const" || p.t[k].Text == "volatile") {
					k++
				}
				return k
			}
		default:
			return k
		}
	}
	return k
}

// angleEnd returns the index of the '>' closing the '<' at k, or -1.
func (p *parser) angleEnd(k, end int) int {
	depth := 0
	for m := k; m < end; m++ {
		switch p.t[m].Text {
		case "<":
			depth++
		case ">":
			depth--
		case ">>":
			depth -= 2
		case "(", "[":
			m = p.after(m) - 1
			continue
		case ";", "{", "}", "&&", "||":
			return -1
		}
		if depth <= 0 {
			if depth < 0 {
				return -1
			}
			return m
		}
	}
	return -1
}

// declaration records a file-scope or member declaration in tokens [i, k).
func (p *parser) declaration(i, k int, st *Struct, start int) {
	if i >= k {
		return
	}
	d := p.decl(i, k)
	if d == nil {
		return
	}
	d.Pos = p.t[start].Pos
	if st != nil {
		st.Fields = append(st.Fields, d)
		return
	}
	p.f.Globals = append(p.f.Globals, d)
}

// decl parses a declaration in tokens [i, k), k being its ';' (or the end
// of the range). It returns nil when the tokens are not a declaration.
func (p *parser) decl(i, k int) *Decl {
	d := &Decl{Pos: p.t[i].Pos}
	if k < len(p.t) && p.t[k].Text == ";" {
		d.End = p.t[k].End
	} else {
		d.End = p.t[k-1].End
	}
	j := i
	for j < k {
		t := p.t[j]
		if t.Kind == Attribute {
			d.Attrs = appendAttrs(d.Attrs, p.attrs(*t))
			j++
			continue
		}
		if t.Kind != Ident {
			break
		}
		if sp, ok := addrSpaces[t.Text]; ok {
			d.AddrSpace = sp
		} else if declQualifiers[t.Text] || t.Text == "typedef" {
			d.Qualifiers = append(d.Qualifiers, t.Text)
		} else if q, ok := p.qualifierMacro(t); ok {
			// MLX's `static MTL_CONST constexpr int N = 4;`: a macro that
			// stands for an address space or a qualifier, or for nothing.
			if sp, ok := addrSpaces[q]; ok {
				d.AddrSpace = sp
			} else if q != "" {
				d.Qualifiers = append(d.Qualifiers, q)
			}
		} else {
			break
		}
		j++
	}
	te := p.typeEnd(j, k)
	if te <= j {
		return nil
	}
	typ := p.scratch[:0]
	defer func() { p.scratch = typ[:0] }()
	for m := j; m < te; m++ {
		t := p.t[m]
		if sp, ok := addrSpaces[t.Text]; ok && t.Kind == Ident {
			d.AddrSpace = sp
			continue
		}
		if t.Text == "const" || t.Text == "volatile" {
			if m == te-1 || p.t[m+1].Text == "*" || p.t[m+1].Text == "&" || m > j && (p.t[m-1].Text == "*" || p.t[m-1].Text == "&") {
				typ = append(typ, t)
			} else {
				d.Qualifiers = append(d.Qualifiers, t.Text)
			}
			continue
		}
		typ = append(typ, t)
	}
	// Trailing qualifiers on the type ("float const x") are qualifiers.
	for len(typ) > 1 && (typ[len(typ)-1].Text == "const" || typ[len(typ)-1].Text == "volatile") {
		d.Qualifiers = append(d.Qualifiers, typ[len(typ)-1].Text)
		typ = typ[:len(typ)-1]
	}
	if len(typ) == 0 {
		return nil
	}
	d.Type = joinTokenPtrs(typ)
	d.TypeSpan = Span{p.t[j].Pos, p.t[te-1].End}
	m := te
	for m < k {
		for m < k && (p.t[m].Text == "*" || p.t[m].Text == "&") {
			m++
		}
		if !p.isIdent(m, k) {
			break
		}
		dc := &Declarator{Name: p.t[m].Text, NamePos: p.t[m].Pos}
		m++
		for m < k {
			t := p.t[m]
			switch {
			case t.Kind == Attribute:
				d.Attrs = appendAttrs(d.Attrs, p.attrs(*t))
				m++
				continue
			case t.Text == "[":
				e := p.after(m)
				if e-1 < k && p.t[e-1].Text == "]" {
					dc.Dims = append(dc.Dims, p.span(m+1, e-1))
				}
				m = e
				continue
			}
			break
		}
		switch {
		case p.is(m, k, "="):
			e := m + 1
			for e < k && p.t[e].Text != "," {
				if p.t[e].Kind == Ident && p.is(e+1, k, "<") {
					// Template arguments hold commas: f<float, 8>(x).
					if a := p.angleEnd(e+1, k); a > 0 && (p.is(a+1, k, "(") || p.is(a+1, k, "::") || p.is(a+1, k, "{")) {
						e = a + 1
						continue
					}
				}
				e = p.after(e)
			}
			e = min(e, k)
			if e > m+1 {
				dc.Init = p.span(m+1, e)
			} else {
				dc.Init = Span{p.t[m].End, p.t[m].End}
			}
			m = e
		case p.is(m, k, "{"), p.is(m, k, "("):
			e := min(p.after(m), k)
			dc.Init = p.span(m, e)
			m = e
		}
		d.Names = append(d.Names, dc)
		if p.is(m, k, ",") {
			m++
			continue
		}
		break
	}
	if len(d.Names) == 0 {
		return nil
	}
	return d
}

// qualifierMacro reports whether t names an object-like macro in effect
// whose replacement is empty, an address space or a declaration
// qualifier, and returns that replacement.
func (p *parser) qualifierMacro(t *Token) (string, bool) {
	d := p.def(t.Text, t.Pos)
	if d == nil || d.FuncLike {
		return "", false
	}
	q := strings.TrimSpace(d.Body)
	if _, ok := addrSpaces[q]; ok || q == "" || declQualifiers[q] {
		return q, true
	}
	return "", false
}

// def returns the macro name in effect at offset at (see lookupDefine), or
// a -D define of it, or nil.
func (p *parser) def(name string, at int) *Define {
	if d := p.f.lookupDefine(name, at); d != nil {
		return d
	}
	if v, ok := p.f.CmdDefines[name]; ok {
		if d := p.cmdDefs[name]; d != nil {
			return d
		}
		if v == "" {
			v = "1"
		}
		d := &Define{Name: name, Body: v}
		if p.cmdDefs == nil {
			p.cmdDefs = map[string]*Define{}
		}
		p.cmdDefs[name] = d
		return d
	}
	return nil
}
