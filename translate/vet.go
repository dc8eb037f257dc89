package translate

import (
	"fmt"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"metalab/backend"
	"metalab/internal/directive"
	"metalab/msl"
)

// Vetting: the cpu backend compiles a kernel into a shared object that the
// runner loads and runs, so a kernel's source is untrusted code. Vet refuses,
// before translation, what a Metal kernel cannot contain and what would let
// it reach the host: inline assembly, GNU attributes that run or name code,
// compiler builtins, calls of functions nobody declares (the C library),
// std:: and ::-qualified names, extern declarations, includes of host files,
// pragmas that change compilation, and program-scope variables with dynamic
// initialisers (they run when the kernel is loaded). It works on the msl
// tokens of the source and of every file it includes, after expanding the
// source's own macros at each use, so token pasting cannot assemble what the
// rules refuse.

// A Refusal is the error Vet returns when the source contains constructs a
// Metal kernel may not: every one found, sorted by position, each printed as
// file:line:col: msg.
type Refusal struct {
	Errors msl.ErrorList
}

// Error prints the refusals one per line, at most msl.MaxShown of them.
func (r *Refusal) Error() string { return r.Errors.Error() }

// Report prints every refusal, one per line.
func (r *Refusal) Report() string {
	var b strings.Builder
	for _, e := range r.Errors {
		b.WriteString(e.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// An IncludedFile is one file a source includes, directly or through
// another include.
type IncludedFile struct {
	Name    string // name in diagnostics: the include path joined to the including file's name
	Path    string // the path it was read from
	Content []byte
}

// Vet checks src and the files it includes for constructs a Metal kernel
// cannot contain. Quoted includes resolve against the including file's
// directory, then src.Dir, then includeDirs, and must stay inside src.Dir
// and includeDirs once symlinks are resolved; <...> includes may only name
// Metal's headers. It returns nil, a *Refusal listing every refused
// construct, or another positioned error when the source cannot be vetted:
// it does not lex, or an include is missing.
func Vet(src backend.Source, includeDirs []string) error {
	_, err := vet(src, includeDirs)
	return err
}

// vet is Vet, returning also the include closure (see IncludeClosure).
func vet(src backend.Source, includeDirs []string) (closure []IncludedFile, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: vetting failed: %v", sourceName(src), r)
		}
	}()
	v := newVetter(src, includeDirs, true)
	v.run()
	if v.fatal != nil {
		return nil, v.fatal
	}
	v.check()
	if len(v.errs) == 0 {
		return v.closure, nil
	}
	return nil, &Refusal{Errors: dedupe(v.errs)}
}

// IncludeClosure returns every file src includes, transitively, resolved as
// Vet resolves them, in the order they are first included: the files the
// C++ compiler may read, so a compile cache keyed on them is invalidated
// when any changes. Includes in #if branches Vet finds certainly inactive
// are left out (the compiler skips them too); both sides of an undecided
// branch are followed. It fails with a positioned error when an include is
// missing, and with a *Refusal when one may not be read (an absolute path,
// one leaving src.Dir and includeDirs, a host header).
func IncludeClosure(src backend.Source, includeDirs []string) ([]IncludedFile, error) {
	v := newVetter(src, includeDirs, false)
	v.run()
	if v.fatal != nil {
		return nil, v.fatal
	}
	if len(v.errs) > 0 {
		return nil, &Refusal{Errors: dedupe(v.errs)}
	}
	return v.closure, nil
}

func sourceName(src backend.Source) string {
	if src.Name == "" {
		return "kernel.metal"
	}
	return src.Name
}

// Bounds that keep vetting of a hostile source cheap.
const (
	maxIncludeDepth = 32      // as the translator
	maxIncludeSize  = 8 << 20 // bytes of one included file
	maxExpansion    = 1 << 22 // bytes of macro expansion for a whole source
)

// A vtok is one token of the stream the rules run over: a token of a source
// file, or of a macro expansion, which is positioned at the macro's use.
type vtok struct {
	msl.Token           // Pos and End are offsets in the text the token was lexed from
	at        srcPos    // where diagnostics point
	origin    int       // identifies the text the token was lexed from, for adjacency
	skipped   bool      // in an #if branch msl finds certainly inactive
	macro     string    // the macro whose expansion produced the token, or ""
	def       *macroDef // for tokens of a macro body checked at its definition
}

// A srcPos is a position in a file, or on the command line for -D defines.
type srcPos struct {
	f   *msl.File
	off int
	cmd string // "-D NAME" for a command-line define
}

func (p srcPos) position() token.Position {
	if p.f == nil {
		return token.Position{Filename: p.cmd}
	}
	return p.f.Position(p.off)
}

// A wfile is one file being walked.
type wfile struct {
	name string // name in diagnostics
	dir  string // directory its quoted includes resolve against first
}

// A macroDef is a #define (or -D) whose body is checked where it is defined.
type macroDef struct {
	d       *msl.Define
	at      srcPos
	skipped bool
}

// A root is a directory includes may read from.
type root struct{ abs, real string }

// A vetter holds the state of one Vet or IncludeClosure call.
type vetter struct {
	src      backend.Source
	incDirs  []string
	roots    []root
	checking bool  // Vet: apply the rules; IncludeClosure: follow and vet includes only
	fsys     fs.FS // when set (the prelude scan), includes resolve here and nothing is checked
	macros   map[string]*msl.Define
	toks     []vtok
	files    []*msl.File // the live files walked, for their declarations
	defs     []*macroDef
	included map[string]bool
	closure  []IncludedFile
	inClos   map[string]bool
	origins  int
	budget   int
	errs     msl.ErrorList
	fatal    error
	defMsgs  map[string]bool // messages already given for a macro's definition

	provided       names // what metal_stdlib provides
	declared       names // what the source declares, at any scope
	global         names // what the source declares at file (namespace) scope
	constexprFuncs map[string]bool
	dynamicTypes   map[string]bool          // structs whose objects run code when made or destroyed
	ms             *directive.Table         // what prep knows of each macro, in include order
	alts           map[string][]*msl.Define // macros with several possible meanings (nil: undefined)
	side           [][]vtok                 // expansions under alternative meanings, vetted on their own
	once           map[string]bool          // files with #pragma once, by key
}

func newVetter(src backend.Source, includeDirs []string, checking bool) *vetter {
	v := &vetter{src: src, incDirs: includeDirs, checking: checking, macros: map[string]*msl.Define{},
		included: map[string]bool{}, inClos: map[string]bool{}, budget: maxExpansion, defMsgs: map[string]bool{},
		ms: &directive.Table{Default: compilerDefault}, once: map[string]bool{}, alts: map[string][]*msl.Define{}}
	for _, d := range append([]string{src.Dir}, includeDirs...) {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		v.roots = append(v.roots, root{abs: abs, real: real})
	}
	return v
}

// run walks the source and its includes into v.toks.
func (v *vetter) run() {
	for _, name := range sortedKeys(v.src.Defines) {
		at := srcPos{cmd: "-D " + name}
		if !isIdentifier(name) {
			v.refuse(at, "", "-D %s: a define's name must be an identifier", name)
			continue
		}
		body := v.src.Defines[name]
		if body == "" {
			body = "1"
		}
		d := &msl.Define{Name: name, Body: body}
		v.macros[name] = d
		v.defs = append(v.defs, &macroDef{d: d, at: at})
	}
	for name, d := range v.macros {
		v.ms.Set(name, directive.Macro{Defined: directive.Yes, Body: d.Body})
	}
	for name, d := range preludeMacros() {
		if _, ok := v.ms.Get(name); !ok {
			v.ms.Define(directive.Def{Name: name, FuncLike: d.FuncLike, Body: d.Body}, true)
		}
	}
	main := v.prep(&wfile{name: sourceName(v.src), dir: v.src.Dir}, v.src.Text, "", false, 0)
	v.toks = make([]vtok, 0, len(v.src.Text)/4+16)
	if v.fatal != nil || !v.checking {
		return
	}
	v.walk(main, false, 0)
}

func (v *vetter) refuse(at srcPos, macro, format string, args ...any) {
	if v.fsys != nil {
		return // the prelude is trusted
	}
	msg := fmt.Sprintf(format, args...)
	if macro != "" {
		if v.defMsgs[macro+"\x00"+msg] {
			return // said once, at the macro's definition
		}
		msg += " (in the expansion of macro " + macro + ")"
	}
	v.errs.Add(at.position(), msg)
}

// fail records an error that stops vetting.
func (v *vetter) fail(at srcPos, format string, args ...any) {
	if v.fatal == nil {
		v.fatal = &msl.Error{Pos: at.position(), Msg: fmt.Sprintf(format, args...)}
	}
}

// walk turns one inclusion of a file into tokens of the stream, with its
// conditions as prep decided them.
func (v *vetter) walk(in *finst, skipped bool, depth int) {
	if !skipped && v.fsys == nil {
		if _, err := msl.Lex(in.wf.name, in.text); err != nil {
			if v.fatal == nil {
				v.fatal = err
			}
			return
		}
	}
	f, _ := msl.Parse(in.wf.name, in.decided)
	if !skipped {
		v.files = append(v.files, f)
	}
	v.scan(in, f, 0, string(in.decided), f.Tokens, definesByPos(f), skipped, depth)
}

func definesByPos(f *msl.File) map[int]*msl.Define {
	m := make(map[int]*msl.Define, len(f.Defines))
	for _, d := range f.Defines {
		m[d.Pos] = d
	}
	return m
}

// scan walks the tokens of one text: a file, or an inactive branch of one
// (positioned in pf at base).
func (v *vetter) scan(in *finst, pf *msl.File, base int, text string, toks []msl.Token, defs map[int]*msl.Define, skipped bool, depth int) {
	v.origins++
	origin := v.origins
	prevEnd := 0
	for i := 0; i < len(toks) && v.fatal == nil; i++ {
		t := toks[i]
		if t.Pos >= prevEnd {
			if k := joiningSplice(text[prevEnd:t.Pos], i > 0); k >= 0 {
				v.refuse(srcPos{f: pf, off: base + prevEnd + k}, "", "a line splice (backslash-newline) outside a preprocessor directive is allowed only between tokens already apart (a blank or comment beside it): here it joins two pieces into one token")
			}
		}
		prevEnd = t.End
		switch t.Kind {
		case msl.Comment:
		case msl.Directive:
			v.directive(in, pf, base, t, defs, skipped, depth)
		case msl.Skipped:
			sub, _ := msl.Parse(in.wf.name, []byte(t.Text))
			v.scan(in, pf, base+t.Pos, t.Text, sub.Tokens, definesByPos(sub), true, depth)
		default:
			if t.Kind == msl.Ident && len(v.alts) > 0 && v.budget > 0 {
				v.sideExpand(pf, base, text, toks, i, skipped)
			}
			if t.Kind == msl.Ident && v.macros[t.Text] != nil && v.budget > 0 {
				if end, ok := v.expandUse(pf, base, text, toks, i, skipped); ok {
					i = end
					continue
				}
			}
			v.toks = append(v.toks, vtok{Token: t, at: srcPos{f: pf, off: base + t.Pos}, origin: origin, skipped: skipped})
		}
	}
}

// joiningSplice returns the offset of a backslash-newline in gap, the text
// between two tokens msl read apart, when the compiler could read the two
// as one token: the gap holds nothing but splices (so as, a backslash, a
// line break and m spell asm to the compiler). A splice beside a blank or a comment, as in a long
// expression continued on the next line, joins nothing and is kept; so is
// one before the first token (between is false).
func joiningSplice(gap string, between bool) int {
	k := directive.SpliceAt(gap)
	if k < 0 || !between || directive.Join(gap) != "" {
		return -1
	}
	return k
}

func (v *vetter) lookup(name string) *msl.Define { return v.macros[name] }

// redefine records a #define (d) or #undef (nil) of name. One in an
// undecided #if branch leaves the macro's earlier meaning possible, so both
// are kept as alternatives, and each use is vetted under each.
func (v *vetter) redefine(name string, d *msl.Define, uncertain bool) {
	if uncertain {
		if len(v.alts[name]) == 0 {
			v.alts[name] = []*msl.Define{v.macros[name]}
		}
		v.alts[name] = append(v.alts[name], d)
	} else {
		delete(v.alts, name)
	}
	if d == nil {
		delete(v.macros, name)
	} else {
		v.macros[name] = d
	}
}

// sideExpand vets the use of a macro name at toks[i] under the alternative
// definitions of the macros it involves that have several (see redefine):
// each alternative of each such macro in turn, the others as last defined.
// The expansions are vetted on their own, after the stream.
func (v *vetter) sideExpand(pf *msl.File, base int, text string, toks []msl.Token, i int, skipped bool) {
	end := i
	if j := nextCode(toks, i+1); j < len(toks) && toks[j].Kind == msl.Punct && toks[j].Text == "(" {
		if k := closeParen(toks, j); k > 0 {
			end = k
		}
	}
	use := text[toks[i].Pos:toks[end].End]
	// The ambiguous macros the use may reach: those named in it or in the
	// body of any definition of a macro it may reach.
	reach := map[string]bool{}
	queue := words(use)
	for len(queue) > 0 && len(reach) < 1024 {
		w := queue[0]
		queue = queue[1:]
		if reach[w] {
			continue
		}
		reach[w] = true
		for _, d := range append(v.alts[w], v.macros[w]) {
			if d != nil {
				queue = append(queue, words(d.Body)...)
			}
		}
	}
	at := srcPos{f: pf, off: base + toks[i].Pos}
	n := 0
	for name := range reach {
		for _, alt := range v.alts[name] {
			if n++; n > 64 || v.budget <= 0 {
				return
			}
			lookup := func(m string) *msl.Define {
				if m == name {
					return alt
				}
				return v.macros[m]
			}
			out, ok := msl.ExpandMacros(use, lookup)
			if !ok {
				v.refuse(at, "", "the expansion of macro %s is too large to vet", toks[i].Text)
				return
			}
			v.budget -= len(out)
			v.origins++
			etoks, _ := msl.Lex("", []byte("_ "+out))
			var side []vtok
			for _, t := range etoks[1:] {
				if t.Kind != msl.Comment {
					side = append(side, vtok{Token: t, at: at, origin: v.origins, skipped: skipped, macro: toks[i].Text})
				}
			}
			v.side = append(v.side, side)
		}
	}
}

// nextCode returns the index of the first token at or after i that is not
// a comment, or len(toks).
func nextCode(toks []msl.Token, i int) int {
	for i < len(toks) && toks[i].Kind == msl.Comment {
		i++
	}
	return i
}

// closeParen returns the index of the ')' closing the '(' at toks[i], or -1.
func closeParen(toks []msl.Token, i int) int {
	depth := 0
	for k := i; k < len(toks); k++ {
		if toks[k].Kind != msl.Punct {
			continue
		}
		switch toks[k].Text {
		case "(":
			depth++
		case ")":
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return -1
}

// expandUse expands the use of a macro at toks[i] and appends the
// expansion's tokens, positioned at the use. It returns the index of the
// use's last token, and false when toks[i] is not a use (a function-like
// macro's name without arguments).
func (v *vetter) expandUse(pf *msl.File, base int, text string, toks []msl.Token, i int, skipped bool) (int, bool) {
	name := toks[i].Text
	end := i
	if d := v.macros[name]; d.FuncLike {
		j := nextCode(toks, i+1)
		if j >= len(toks) || toks[j].Kind != msl.Punct || toks[j].Text != "(" {
			return i, false
		}
		if end = closeParen(toks, j); end < 0 {
			return i, false
		}
	}
	at := srcPos{f: pf, off: base + toks[i].Pos}
	var out string
	for n := 0; ; n++ {
		var ok bool
		out, ok = msl.ExpandMacros(text[toks[i].Pos:toks[end].End], v.lookup)
		if !ok {
			v.refuse(at, "", "the expansion of macro %s is too large to vet", name)
			return end, true
		}
		// A function-like macro ending the expansion takes its arguments
		// from the source after the use, as the preprocessor rescans.
		last := lastWord(out)
		d := v.macros[last]
		j := nextCode(toks, end+1)
		if n >= 8 || last == name || d == nil || !d.FuncLike || j >= len(toks) || toks[j].Text != "(" || toks[j].Kind != msl.Punct {
			break
		}
		k := closeParen(toks, j)
		if k < 0 {
			break
		}
		end = k
	}
	if v.budget -= len(out); v.budget < 0 {
		v.refuse(at, "", "macro expansions are too large to vet")
		return end, true
	}
	v.origins++
	etoks, _ := msl.Lex("", []byte("_ "+out))
	for _, t := range etoks[1:] {
		if t.Kind == msl.Comment {
			continue
		}
		v.toks = append(v.toks, vtok{Token: t, at: at, origin: v.origins, skipped: skipped, macro: name})
	}
	return end, true
}

// lastWord returns the identifier that ends s, or "".
func lastWord(s string) string {
	s = strings.TrimRight(s, " \t\n")
	k := len(s)
	for k > 0 && isWordByte(s[k-1]) {
		k--
	}
	if !isIdentifier(s[k:]) {
		return ""
	}
	return s[k:]
}

// directive handles one preprocessor line.
func (v *vetter) directive(in *finst, pf *msl.File, base int, t msl.Token, defs map[int]*msl.Define, skipped bool, depth int) {
	name, rest := directive.Split(t.Text)
	at := srcPos{f: pf, off: base + t.Pos}
	switch name {
	case "include", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef":
		if !skipped && !in.seen[base+t.Pos] {
			v.fail(at, "#%s: the vetting pass cannot tell where this directive is", name)
			return
		}
	}
	switch name {
	case "define":
		d := defs[t.Pos]
		if d == nil {
			return // malformed: the translator reports it
		}
		if !skipped {
			v.redefine(d.Name, d, in.uncertain[base+t.Pos])
		}
		v.defs = append(v.defs, &macroDef{d: d, at: at, skipped: skipped})
	case "undef":
		if !skipped {
			v.redefine(directive.Operand(rest), nil, in.uncertain[base+t.Pos])
		}
	case "include":
		// prep vetted the include and read the file it enters.
		if child := in.children[base+t.Pos]; child != nil {
			v.walk(child, skipped, depth+1)
		}
	case "include_next", "import", "embed":
		v.refuse(at, "", "#%s is not allowed in a Metal kernel", name)
	case "pragma":
		v.pragma(at, "", directive.Operand(rest))
	case "line":
		// #line N "file" renames the file: the compiler prints a line of
		// whatever file it names, read from the disk, under a message.
		if strings.Contains(rest, "\"") || strings.ContainsAny(directive.Operand(rest), " \t") {
			v.refuse(at, "", "#line may not name a file: the compiler would show that file's lines in its messages")
		}
	case "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif", "error", "warning", "":
		// prep decided (and vetted) the conditions.
	default:
		if !skipped {
			v.refuse(at, "", "#%s is not a directive Metal kernels may use", name)
		}
	}
}

// resolve finds the file a quoted include names: the first regular file
// spec names in the including file's directory, src.Dir or an include
// directory, in that order, as the compiler finds it. It returns the
// file's real path (every symlink resolved) and the directories searched.
//
// The compiler opens the directory and spec joined as text, and the
// operating system resolves that path a component at a time: in
// "a/../passwd" the ".." leaves wherever the symlink a points, not the
// directory holding a. So the path is never cleaned before it is looked
// up; filepath.EvalSymlinks, given it uncleaned, resolves the components
// in the same order.
func (v *vetter) resolve(fromDir, spec string) (found string, size int64, dirs []string) {
	for _, d := range append([]string{fromDir, v.src.Dir}, v.incDirs...) {
		if d != "" && !contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		p := compilerPath(d, spec)
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(compilerPath(abs, spec))
		if err != nil {
			continue
		}
		return real, st.Size(), dirs
	}
	return "", 0, dirs
}

// compilerPath joins a directory and an include's spec as the compiler
// does: as text, with a separator, never cleaned.
func compilerPath(dir, spec string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + filepath.FromSlash(spec)
	}
	return dir + string(filepath.Separator) + filepath.FromSlash(spec)
}

// inside reports whether p lies in one of the roots: lexically, and, when
// real is set, after resolving symlinks.
func (v *vetter) inside(p string, real bool) bool {
	abs, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	if real {
		if abs, err = filepath.EvalSymlinks(abs); err != nil {
			return false
		}
	}
	for _, r := range v.roots {
		dir := r.abs
		if real {
			dir = r.real
		}
		if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// includeSpec parses the operand of #include: "path" or <path>
// (directive.Include).
func includeSpec(rest string) (spec string, angle, ok bool) { return directive.Include(rest) }

// words returns the identifiers of s, in order.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r > 127 || !isWordByte(byte(r)) })
}

// dedupe sorts the list and drops repeated errors.
func dedupe(l msl.ErrorList) msl.ErrorList {
	l.Sort()
	var out msl.ErrorList
	for i, e := range l {
		if i > 0 && e.Pos == l[i-1].Pos && e.Msg == l[i-1].Msg {
			continue
		}
		out = append(out, e)
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
