package spec

import (
	"crypto/sha256"
	"fmt"
	"go/token"
	"slices"
	"sort"
	"strconv"
	"strings"

	"metalab/internal/inputfile"
	"metalab/msl"
)

// CheckKernels checks that the stages of in fit the kernels they run, so
// that a spec cannot silently run a kernel on something other than what it
// says. source returns the text of a stage's source path (the baseline, or
// a variant that replaces it). For each stage it reads the entry's
// parameters with the stage's defines and reports, at the spec position at
// fault (file:line:col, with the kernel's own position in the message):
//
//   - a [[buffer(n)]] or [[threadgroup(n)]] parameter with no buffer bound
//     at n in its index space (buffer and threadgroup indices are separate);
//     a device or constant parameter without an attribute takes the next
//     index no [[buffer(n)]] names, in parameter order, as the cpu
//     translator binds it; a parameter whose [[function_constant(c)]] is
//     false is absent and needs no buffer;
//   - a buffer whose element type does not fit the parameter (see
//     ElementFits), or one too small for a reference parameter;
//   - a buffer bound at several indices of which one is a writable device
//     pointer: each binding is a copy on the cpu backend, so a write
//     through one would not be seen through another;
//   - a function constant the entry (or a helper, global constant or macro
//     it reaches) uses with no value in the case, unless the source guards
//     it with is_function_constant_defined(name) somewhere: unset, it
//     would silently read as zero;
//   - a constant given a value that no stage's source declares (a typo), or
//     with a type other than its declaration's.
//
// A stage's source that cannot be read, does not parse or lacks the entry
// is an error too. The errors are an ErrorList.
func (in *Instance) CheckKernels(source func(path string) ([]byte, error)) error {
	kc := &kernelChecker{in: in, source: source, files: map[string]*msl.File{}, declared: map[string]fcDecl{}}
	for _, st := range in.Stages {
		kc.stage(st)
	}
	kc.undeclaredConstants()
	return kc.errs.Err()
}

type kernelChecker struct {
	in       *Instance
	source   func(string) ([]byte, error)
	files    map[string]*msl.File // parsed sources by path, text and defines
	declared map[string]fcDecl    // function constants of every stage's source, by name
	unread   bool                 // a stage's source could not be read or parsed
	errs     ErrorList
}

// An fcDecl is a function constant as a source declares it.
type fcDecl struct {
	typ string // canonical scalar name, or the declared text when unknown
	at  string // file:line:col of the name
}

func (kc *kernelChecker) errorf(pos token.Position, format string, args ...any) {
	c := kc.in.Case
	kc.errs = append(kc.errs, &Error{Pos: pos, Msg: fmt.Sprintf("case %s/%s: ", c.Set, c.Name) + fmt.Sprintf(format, args...)})
}

// file parses the source of st with its defines and include directories
// (headers in the source's own directory are read too, as the compiler
// reads them), once per text, defines and directories.
func (kc *kernelChecker) file(st *Stage) (*msl.File, error) {
	text, err := kc.source(st.Source)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write(text)
	var defs []string
	for k, v := range st.Defines {
		defs = append(defs, k+"="+v)
	}
	sort.Strings(defs)
	fmt.Fprintf(h, "\x00%s\x00%s\x00%s", st.Source, strings.Join(defs, "\x00"), strings.Join(st.IncludeDirs, "\x00"))
	key := string(h.Sum(nil))
	if f, ok := kc.files[key]; ok {
		return f, nil
	}
	f, err := msl.ParseOptions(st.Source, text, msl.Options{Defines: st.Defines, IncludeDirs: st.IncludeDirs, ReadFile: inputfile.ReadFile})
	if err != nil {
		return nil, err
	}
	kc.files[key] = f
	return f, nil
}

// A kparam is a kernel parameter that takes a binding.
type kparam struct {
	p           *msl.Param
	threadgroup bool
	index       int
	implicit    bool // no attribute: the next free buffer index
}

func (k kparam) attr() string {
	if k.implicit {
		return fmt.Sprintf("implicit [[buffer(%d)]]", k.index)
	}
	if k.threadgroup {
		return fmt.Sprintf("[[threadgroup(%d)]]", k.index)
	}
	return fmt.Sprintf("[[buffer(%d)]]", k.index)
}

func (kc *kernelChecker) stage(st *Stage) {
	what := fmt.Sprintf("stage %q", st.Entry)
	f, err := kc.file(st)
	if err != nil {
		kc.errorf(st.SourcePos, "%s: %s", what, firstLine(err.Error()))
		kc.unread = true
		return
	}
	for _, d := range functionConstants(f) {
		if _, ok := kc.declared[d.name]; !ok {
			kc.declared[d.name] = fcDecl{typ: d.typ, at: d.at}
		}
	}
	fn, targs, err := f.Entry(st.Entry)
	if err != nil {
		kc.errorf(st.Pos, "%s: %v in %s", what, err, st.Source)
		return
	}
	env := &msl.Env{File: f, Func: fn, Defines: st.Defines, TemplateArgs: targs}
	params, fcUses := kc.params(st, f, fn, env, what)
	kc.bindings(st, f, env, params, what)
	kc.constants(st, f, fn, fcUses, what)
}

// params lists the parameters of fn that take a buffer or threadgroup
// binding, with their indices, following the cpu translator's rule for
// parameters without an attribute. It also returns the function constants
// that decide conditional parameters.
func (kc *kernelChecker) params(st *Stage, f *msl.File, fn *msl.Func, env *msl.Env, what string) ([]kparam, []string) {
	used := map[int]bool{}
	for _, p := range fn.Params {
		for _, a := range p.Attrs {
			if a.Name == "buffer" && len(a.Args) == 1 {
				if n, err := strconv.Atoi(a.Args[0]); err == nil {
					used[n] = true
				}
			}
		}
	}
	var out []kparam
	var fcUses []string
	next := 0
	for _, p := range fn.Params {
		var bound *kparam
		present, other := true, false
		for _, a := range p.Attrs {
			switch a.Name {
			case "buffer", "threadgroup":
				k := kparam{p: p, threadgroup: a.Name == "threadgroup"}
				if len(a.Args) != 1 {
					kc.errorf(st.Pos, "%s: kernel parameter %q (%s): [[%s]] needs one index", what, p.Name, f.Position(p.NamePos), a.Name)
					present = false
					continue
				}
				v, ok := env.Eval(a.Args[0])
				if !ok || v < 0 || v > MaxIndex {
					kc.errorf(st.Pos, "%s: kernel parameter %q (%s): cannot evaluate the index of [[%s(%s)]] to 0..%d, so its binding cannot be checked",
						what, p.Name, f.Position(p.NamePos), a.Name, clip(a.Args[0]), MaxIndex)
					present = false
					continue
				}
				k.index = int(v)
				bound = &k
			case "function_constant":
				if len(a.Args) == 1 {
					name := strings.TrimSpace(a.Args[0])
					fcUses = append(fcUses, name)
					if v, ok := st.Constants[name]; ok && v.Bits == 0 {
						present = false
					}
				}
			case "maybe_unused", "restrict":
			default:
				other = true // a thread position, stage_in, ...: no buffer
			}
		}
		if !present {
			continue
		}
		if bound == nil && !other && (p.AddrSpace == msl.Device || p.AddrSpace == msl.Constant) {
			for used[next] {
				next++
			}
			bound = &kparam{p: p, index: next, implicit: true}
			next++
		}
		if bound != nil {
			out = append(out, *bound)
		}
	}
	return out, fcUses
}

// bindings checks that every parameter is bound to a buffer that fits it.
func (kc *kernelChecker) bindings(st *Stage, f *msl.File, env *msl.Env, params []kparam, what string) {
	writers := map[string][]string{} // buffer → writable parameters bound to it
	for _, k := range params {
		pos := f.Position(k.p.NamePos)
		var bind *Binding
		for i := range st.Bindings {
			if b := &st.Bindings[i]; b.Threadgroup == k.threadgroup && b.Index == k.index {
				bind = b
			}
		}
		if bind == nil {
			hint := ""
			for _, b := range st.Bindings {
				if b.Index == k.index {
					hint = fmt.Sprintf(" (buffer %q is bound at %s index %d: buffer and threadgroup indices are separate)", b.Buffer, slotKey{b.Threadgroup, b.Index}.space(), b.Index)
				}
			}
			kc.errorf(st.Pos, "%s: kernel parameter %q %s (%s) is not bound%s", what, k.p.Name, k.attr(), pos, hint)
			continue
		}
		at := bind.Pos
		if !at.IsValid() {
			at = st.Pos
		}
		b := kc.in.Buffer(bind.Buffer)
		typ, ref, writable := pointee(k.p)
		if k.p.AddrSpace == msl.Device && writable {
			writers[b.Name] = append(writers[b.Name], fmt.Sprintf("%q %s", k.p.Name, k.attr()))
		}
		scalar, size, ok := kernelElem(env, typ)
		if !ok {
			continue // a type msl cannot lay out: the binding is all that is checked
		}
		if why := ElementFits(b.Type, scalar, int(size)); why != "" {
			kc.errorf(at, "%s: buffer %q (%s) bound to kernel parameter %q %s (%s, %s %s): %s",
				what, b.Name, b.Type.Name, k.p.Name, k.attr(), pos, spaceName(k.p.AddrSpace), k.p.Type, why)
			continue
		}
		if ref && int64(b.Size) < size {
			kc.errorf(at, "%s: buffer %q holds %d bytes, but kernel parameter %q %s (%s) is a reference to %d bytes",
				what, b.Name, b.Size, k.p.Name, k.attr(), pos, size)
		}
	}
	for _, b := range kc.in.Buffers {
		n := 0
		for _, bind := range st.Bindings {
			if bind.Buffer == b.Name && !bind.Threadgroup {
				n++
			}
		}
		if n > 1 && len(writers[b.Name]) > 0 {
			kc.errorf(st.Pos, "%s: buffer %q is bound at %d indices and written through %s; every binding is a separate copy on the cpu backend, so the write would not be seen through the others: bind a buffer a kernel writes once",
				what, b.Name, n, strings.Join(writers[b.Name], ", "))
		}
	}
}

func spaceName(s msl.AddrSpace) string {
	switch s {
	case msl.Device:
		return "device"
	case msl.Constant:
		return "constant"
	case msl.Threadgroup:
		return "threadgroup"
	case msl.ThreadSpace:
		return "thread"
	}
	return ""
}

// pointee returns the type a pointer or reference parameter points at,
// whether the parameter is a reference, and whether it may be written
// through (no const on the pointee).
func pointee(p *msl.Param) (typ string, ref, writable bool) {
	t := strings.TrimSpace(p.Type)
	for _, q := range []string{"const", "volatile", "restrict", "__restrict"} {
		t = strings.TrimSpace(strings.TrimSuffix(t, " "+q)) // T* const
	}
	switch {
	case strings.HasSuffix(t, "*"):
		t = strings.TrimSuffix(t, "*")
	case strings.HasSuffix(t, "&"):
		t, ref = strings.TrimSuffix(t, "&"), true
	}
	writable = true
	var words []string
	for _, w := range strings.Fields(t) {
		switch w {
		case "const":
			writable = false
		case "volatile", "restrict", "__restrict", "device", "constant", "threadgroup":
		default:
			words = append(words, strings.TrimPrefix(w, "metal::"))
		}
	}
	return strings.Join(words, " "), ref, writable
}

// kernelScalars maps the kernel-side spellings of scalar types that the
// spec does not know by those names to the spec's scalar names.
var kernelScalars = map[string]string{
	"unsigned": "uint", "unsigned int": "uint", "signed int": "int",
	"unsigned char": "uchar", "signed char": "char", "unsigned short": "ushort",
	"unsigned long": "ulong", "long long": "long", "unsigned long long": "ulong",
	"size_t": "ulong", "ptrdiff_t": "long",
	"atomic_int": "int", "atomic_uint": "uint", "atomic_float": "float", "atomic_bool": "bool",
	"void": "uchar",
}

// kernelElem classifies a kernel element type: its component scalar in the
// spec's names ("" for a struct or anything else that is not a scalar or
// vector), and its size from msl's layout (ok false when unknown).
func kernelElem(env *msl.Env, typ string) (scalar string, size int64, ok bool) {
	for range 8 {
		if a, ok := env.TemplateArgs[typ]; ok {
			typ = strings.TrimSpace(a)
			continue
		}
		if a, ok := env.File.Types[typ]; ok {
			typ = strings.TrimSpace(a)
			continue
		}
		break
	}
	if s, ok := kernelScalars[typ]; ok {
		if typ == "void" {
			return "uchar", 1, true
		}
		scalar = s
	} else if t, ok := LookupType(typ); ok {
		scalar = t.Scalar
	} else if inner, ok := strings.CutPrefix(typ, "atomic<"); ok {
		if t, ok := LookupType(strings.TrimSpace(strings.TrimSuffix(inner, ">"))); ok {
			scalar = t.Scalar
		}
	} else if inner, ok := strings.CutPrefix(typ, "vec<"); ok {
		if t, ok := LookupType(strings.TrimSpace(strings.SplitN(inner, ",", 2)[0])); ok {
			scalar = t.Scalar
		}
	}
	size, _, ok = env.Layout(typ)
	return scalar, size, ok && size > 0
}

// ElementFits reports why a buffer of element type t cannot be bound to a
// kernel parameter whose element has component scalar kscalar (a spec
// scalar name; "" for a struct) and size ksize bytes, or "" when it can:
//
//   - a kernel element of bytes (char, uchar and their vectors, void)
//     views any buffer, and a buffer of bytes (char or uchar elements) may
//     hold anything;
//   - otherwise the component scalars must agree: the same floating type
//     (half, bfloat and float are not interchangeable) or integers of the
//     same width (signedness may differ, as hosts reinterpret freely), and
//     one element size must divide the other, so a half4 parameter may
//     read a half buffer and a half parameter a half4 buffer, but a
//     packed_float3 one may not read a float3 buffer;
//   - a struct on one side needs one size to divide the other; structs on
//     both sides need equal sizes.
func ElementFits(t *Type, kscalar string, ksize int) string {
	bytes := func(s string) bool { return s == "char" || s == "uchar" }
	if bytes(kscalar) || t.Kind != Struct && bytes(t.Scalar) {
		return ""
	}
	divides := ksize%t.Size == 0 || t.Size%ksize == 0
	switch {
	case t.Kind == Struct && kscalar == "":
		if t.Size != ksize {
			return fmt.Sprintf("the kernel's struct is %d bytes, the spec's %d", ksize, t.Size)
		}
	case t.Kind != Struct && kscalar != "":
		if kscalar != t.Scalar && (isFloat(kscalar) || isFloat(t.Scalar) || kscalar == "bool" || t.Scalar == "bool" || scalarSizes[kscalar] != scalarSizes[t.Scalar]) {
			return fmt.Sprintf("the kernel reads %s, the buffer holds %s", kscalar, t.Scalar)
		}
		if !divides {
			return fmt.Sprintf("the kernel's element is %d bytes, the buffer's %d, and neither divides the other", ksize, t.Size)
		}
	default:
		if !divides {
			return fmt.Sprintf("the kernel's element is %d bytes, the buffer's %d, and neither divides the other", ksize, t.Size)
		}
	}
	return ""
}

// An fcInfo is a function constant declared in a file.
type fcInfo struct {
	name, typ, at string
}

// functionConstants lists the function constants f and the headers it
// includes declare (MLX declares has_mask in sdpa_vector.h).
func functionConstants(f *msl.File) []fcInfo {
	var out []fcInfo
	for _, g := range append([]*msl.File{f}, f.Headers()...) {
		for _, d := range g.Globals {
			if !slices.ContainsFunc(d.Attrs, func(a *msl.Attr) bool { return a.Name == "function_constant" }) {
				continue
			}
			typ := strings.TrimSpace(d.Type)
			if s, ok := canonScalar(typ); ok {
				typ = s
			} else if s, ok := kernelScalars[typ]; ok {
				typ = s
			}
			for _, n := range d.Names {
				out = append(out, fcInfo{name: n.Name, typ: typ, at: g.Position(n.NamePos).String()})
			}
		}
	}
	return out
}

// constants reports the function constants fn needs that the stage gives
// no value, and values whose type differs from the declaration.
func (kc *kernelChecker) constants(st *Stage, f *msl.File, fn *msl.Func, paramUses []string, what string) {
	decls := map[string]fcInfo{}
	for _, d := range functionConstants(f) {
		decls[d.name] = d
	}
	for name, v := range st.Constants {
		if d, ok := decls[name]; ok && d.typ != v.Type {
			pos := st.ConstantPos[name]
			if !pos.IsValid() {
				pos = st.Pos
			}
			kc.errorf(pos, "%s: constant %q is given as %s, but %s declares it %s", what, name, v.Type, d.at, d.typ)
		}
	}
	if len(decls) == 0 {
		return
	}
	guarded := guardedConstants(f)
	uses := reachedNames(f, fn)
	for _, n := range paramUses {
		uses[n] = true
	}
	var missing []string
	for name := range uses {
		if _, ok := decls[name]; !ok || guarded[name] {
			continue
		}
		if _, ok := st.Constants[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		kc.errorf(st.Pos, "%s: kernel %s uses function constant %q (%s), which has no value: give it one under constants: (unset, it would read as zero), or guard it with is_function_constant_defined(%s)",
			what, st.Entry, name, decls[name].at, name)
	}
}

// undeclaredConstants reports constants given a value that no stage's
// source declares.
func (kc *kernelChecker) undeclaredConstants() {
	seen := map[string]bool{}
	for _, st := range kc.in.Stages {
		var names []string
		for name := range st.Constants {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if _, ok := kc.declared[name]; ok || seen[name] || kc.unread {
				continue
			}
			seen[name] = true
			pos := st.ConstantPos[name]
			if !pos.IsValid() {
				pos = st.Pos
			}
			kc.errorf(pos, "constant %q: no stage's source declares a function constant of that name", name)
		}
	}
}

// sigTokens returns the tokens of toks that are not comments, directives
// or skipped text.
func sigTokens(toks []msl.Token) []msl.Token {
	var out []msl.Token
	for _, t := range toks {
		switch t.Kind {
		case msl.Comment, msl.Directive, msl.Skipped:
			continue
		}
		out = append(out, t)
	}
	return out
}

// guardedConstants returns the names X of every is_function_constant_defined(X)
// in f's active code and macro bodies.
func guardedConstants(f *msl.File) map[string]bool {
	out := map[string]bool{}
	scan := func(ts []msl.Token) {
		for i := 0; i+3 < len(ts); i++ {
			if ts[i].Text == "is_function_constant_defined" && ts[i+1].Text == "(" && ts[i+2].Kind == msl.Ident && ts[i+3].Text == ")" {
				out[ts[i+2].Text] = true
			}
		}
	}
	for _, g := range append([]*msl.File{f}, f.Headers()...) {
		scan(sigTokens(g.Tokens))
		for _, d := range g.Defines {
			if toks, err := msl.Lex(g.Name, []byte(d.Body)); err == nil {
				scan(sigTokens(toks))
			}
		}
	}
	return out
}

// reachedNames returns the identifiers that fn's body uses, directly or
// through the helpers, file-scope declarations and macros it names, in f
// and the headers it includes, except the arguments of
// is_function_constant_defined. Member names (after . or ->) do not lead
// to functions of that name; a qualified call (GEMVKernel::run, or
// GEMVKernel<T>::run) leads to the members of that struct only, where it
// has one of the name. A name leads to the macro of that name in effect
// where it is used (ggml #undefs and redefines its FC_ macros, and uses
// names as local variables that it #defines only further on), a macro's
// body to those in effect at the use that expanded it.
// fnAt is a function with the file its offsets refer to.
type fnAt struct {
	g    *msl.Func
	file *msl.File
}

func reachedNames(f *msl.File, fn *msl.Func) map[string]bool {
	type declAt struct {
		d    *msl.Decl
		file *msl.File
	}
	files := append([]*msl.File{f}, f.Headers()...)
	funcs := map[string][]fnAt{}
	globals := map[string][]declAt{}
	for _, file := range files {
		for _, g := range file.Funcs {
			if g.Body != nil {
				funcs[g.Name] = append(funcs[g.Name], fnAt{g, f.FileOf(g)})
			}
		}
		for _, d := range file.Globals {
			for _, n := range d.Names {
				globals[n.Name] = append(globals[n.Name], declAt{d, file})
			}
		}
	}
	// A piece of code to read: tokens of file (positioned in it), or of a
	// macro body expanded at offset at of file.
	type piece struct {
		file *msl.File
		toks []msl.Token
		at   int
		fn   *msl.Func // the function whose body the tokens are, or nil
	}
	names := map[string]bool{}
	seen := map[any]bool{}
	var queue []piece
	span := func(file *msl.File, lo, hi int) piece {
		i := sort.Search(len(file.Tokens), func(i int) bool { return file.Tokens[i].Pos >= lo })
		j := sort.Search(len(file.Tokens), func(j int) bool { return file.Tokens[j].Pos >= hi })
		return piece{file: file, toks: sigTokens(file.Tokens[i:max(i, j)]), at: -1}
	}
	body := func(g fnAt) piece {
		pc := span(g.file, g.g.Body.Lbrace, g.g.Body.Rbrace+1)
		pc.fn = g.g
		return pc
	}
	seen[fn] = true
	queue = append(queue, body(fnAt{fn, f.FileOf(fn)}))
	for len(queue) > 0 {
		pc := queue[0]
		queue = queue[1:]
		ts := pc.toks
		for i, t := range ts {
			if t.Kind != msl.Ident {
				continue
			}
			if i >= 2 && ts[i-1].Text == "(" && ts[i-2].Text == "is_function_constant_defined" {
				continue
			}
			names[t.Text] = true
			member := i >= 1 && (ts[i-1].Text == "." || ts[i-1].Text == "->")
			if !member {
				for _, g := range callTargets(funcs[t.Text], qualifier(ts, i), pc.fn) {
					if !seen[g.g] {
						seen[g.g] = true
						queue = append(queue, body(g))
					}
				}
			}
			for _, d := range globals[t.Text] {
				if !seen[d.d] {
					seen[d.d] = true
					queue = append(queue, span(d.file, d.d.Pos, d.d.End))
				}
			}
			at := pc.at
			if at < 0 {
				at = t.Pos
			}
			if d := pc.file.DefineAt(t.Text, at); d != nil && !seen[d] {
				seen[d] = true
				if toks, err := msl.Lex(f.Name, []byte(d.Body)); err == nil {
					queue = append(queue, piece{file: pc.file, toks: sigTokens(toks), at: at})
				}
			}
		}
	}
	return names
}

// callTargets narrows the functions of a called name to those the call can
// reach, as C++ name lookup does, and keeps them all when it cannot tell
// (a constant reached by one too many is asked for; one missed would read as
// zero): a call Q::name reaches the members of struct Q, or of the struct a
// type alias Q declared in the caller's body names (MLX's `using
// gemv_kernel = GEMVKernel<...>; gemv_kernel::run(...)` beside GemvWide::run);
// an unqualified call in a member function reaches its own struct's member
// of that name when there is one, which hides every other.
func callTargets(cands []fnAt, q string, caller *msl.Func) []fnAt {
	only := func(owner string) []fnAt {
		if owner == "" || !slices.ContainsFunc(cands, func(c fnAt) bool { return c.g.Owner == owner }) {
			return nil
		}
		return slices.DeleteFunc(slices.Clone(cands), func(c fnAt) bool { return c.g.Owner != owner })
	}
	if q != "" {
		if c := only(q); c != nil {
			return c
		}
		if caller != nil {
			if c := only(aliasedStruct(caller.Types[q])); c != nil {
				return c
			}
		}
		return cands
	}
	if caller != nil {
		if c := only(caller.Owner); c != nil {
			return c
		}
	}
	return cands
}

// aliasedStruct returns the struct name an alias's type text starts with:
// "typename GEMVKernel<T, BM>" gives GEMVKernel, "ns::S" gives S.
func aliasedStruct(text string) string {
	text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "typename "))
	if i := strings.IndexAny(text, "<( \t"); i >= 0 {
		text = text[:i]
	}
	if i := strings.LastIndex(text, "::"); i >= 0 {
		text = text[i+2:]
	}
	return text
}

// qualifier returns Q when the name at ts[i] is written Q::name or
// Q<...>::name, else "".
func qualifier(ts []msl.Token, i int) string {
	if i < 2 || ts[i-1].Text != "::" {
		return ""
	}
	k := i - 2
	if ts[k].Text == ">" || ts[k].Text == ">>" {
		depth := 0
		for ; k >= 0; k-- {
			switch ts[k].Text {
			case ">":
				depth++
			case ">>":
				depth += 2
			case "<":
				depth--
			}
			if depth <= 0 {
				break
			}
		}
		k--
	}
	if k < 0 || ts[k].Kind != msl.Ident {
		return ""
	}
	return ts[k].Text
}
