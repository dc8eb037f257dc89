package translate

import (
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"metalab/internal/inputfile"
	"metalab/msl"
)

// This file decides #if conditions for the vetting pass, the way the C++
// compiler will, before msl sees the source. msl's own #if evaluation is an
// estimate for mutation: it decides each file alone, blind to the macros
// of the files included before it. A branch msl skips is vetted
// only for what reaches the host, so the vetting pass must not skip a
// branch the compiler takes. It therefore walks the directives of the
// source and its includes in the compiler's order, tracking which macros
// are certainly defined, certainly undefined or unknown, evaluates each
// condition with an evaluator that answers only for an exact subset
// (defined, !, &&, ||, ==, != and orderings of small decimal integers) and
// "unknown" otherwise, and rewrites each condition to 1, 0 or an unknown
// name of the same or shorter length, so that msl skips exactly the
// branches the compiler certainly skips and keeps both sides of every
// undecided one.

// A tri is a three-valued truth.
type tri int8

const (
	triUnknown tri = iota
	triYes
	triNo
)

// A mstate is what the vetting pass knows of one macro name.
type mstate struct {
	defined  tri
	body     string // for certainly defined object-like macros
	funcLike bool
}

// A finst is one inclusion of a file: its text with each #if condition
// replaced by the vetting pass's decision, and the files its #include
// directives enter.
type finst struct {
	wf       *wfile
	text     []byte         // as read
	decided  []byte         // text with the conditions rewritten; same length and lines
	pf       *msl.File      // the line table, for positions
	children map[int]*finst // by the offset of the #include directive; nil: not entered again (#pragma once)
	key      string         // identity of the file (its real path)

	// uncertain holds the offsets of the #define and #undef directives in
	// undecided branches: the macro may or may not be what they make it.
	uncertain map[int]bool
	// seen holds the offsets of the directives prep found, so that the
	// walk can tell a directive prep missed (and fail rather than let msl
	// decide a condition or the translator read an include unvetted).
	seen map[int]bool
}

// A dirSpan is the byte range of one preprocessor directive, from its '#'
// to the end of its last line (continuations included, newline excluded).
type dirSpan struct{ pos, end int }

// findDirectives returns the directives of src, in order, as the C
// preprocessor finds them: at the start of a line, after whitespace and
// comments, outside comments and string literals, with line splices.
func findDirectives(src string) []dirSpan {
	var out []dirSpan
	n := len(src)
	lineStart := true
	splice := func(i int) int { // length of a backslash-newline at i, or 0
		if i < n && src[i] == '\\' {
			if i+1 < n && src[i+1] == '\n' {
				return 2
			}
			if i+2 < n && src[i+1] == '\r' && src[i+2] == '\n' {
				return 3
			}
		}
		return 0
	}
	// skipComment returns the end of the comment at i, or i.
	skipComment := func(i int) int {
		if i+1 >= n || src[i] != '/' {
			return i
		}
		switch src[i+1] {
		case '*':
			if k := strings.Index(src[i+2:], "*/"); k >= 0 {
				return i + 2 + k + 2
			}
			return n
		case '/':
			j := i + 2
			for j < n && src[j] != '\n' {
				if k := splice(j); k > 0 {
					j += k
					continue
				}
				j++
			}
			return j
		}
		return i
	}
	for i := 0; i < n; {
		c := src[i]
		if k := splice(i); k > 0 {
			i += k
			continue
		}
		if j := skipComment(i); j > i {
			i = j
			continue
		}
		switch {
		case c == '\n':
			lineStart = true
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#' && lineStart:
			j := i + 1
			for j < n && src[j] != '\n' {
				if k := splice(j); k > 0 {
					j += k
					continue
				}
				if k := skipComment(j); k > j {
					j = k
					continue
				}
				j++
			}
			end := j
			for end > i && (src[end-1] == '\r' || src[end-1] == ' ' || src[end-1] == '\t') {
				end--
			}
			out = append(out, dirSpan{i, end})
			i = j
		case c == '"' || c == '\'':
			lineStart = false
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' && j+1 < n {
					j++
				}
				j++
			}
			if j < n && src[j] == c {
				j++
			}
			i = j
		case isWordByte(c):
			lineStart = false
			j := i
			for j < n && isWordByte(src[j]) {
				j++
			}
			word := src[i:j]
			if j < n && src[j] == '"' && (word == "R" || word == "LR" || word == "uR" || word == "UR" || word == "u8R") {
				if k := strings.IndexByte(src[j:], '('); k > 0 && k <= 17 {
					closing := ")" + src[j+1:j+k] + "\""
					if e := strings.Index(src[j+k:], closing); e >= 0 {
						j += k + e + len(closing)
					}
				}
			}
			i = j
		default:
			lineStart = false
			i++
		}
	}
	return out
}

// A condFrame is one open #if group, as msl's lexer keeps it.
type condFrame struct {
	taken, unknown, lenient, skipping bool
	dead                              bool // the whole group is inside a skipped branch
}

// region says whether code under the open groups is certainly skipped,
// undecided or certainly compiled.
func region(stack []*condFrame) tri {
	r := triYes
	for _, f := range stack {
		if f.dead || f.skipping {
			return triNo
		}
		if f.lenient {
			r = triUnknown
		}
	}
	return r
}

// enter starts a branch whose condition is v, as msl's lexer does.
func (f *condFrame) enter(v tri) {
	switch v {
	case triYes:
		f.taken, f.lenient, f.skipping = true, false, false
	case triUnknown:
		f.unknown, f.lenient, f.skipping = true, true, false
	default:
		f.lenient, f.skipping = false, true
	}
}

// prep reads one inclusion of a file: it decides its conditions, follows
// its includes in order and updates the macro knowledge. unknown says the
// inclusion itself is undecided, so its #defines leave names unknown.
func (v *vetter) prep(wf *wfile, text []byte, key string, unknown bool, depth int) *finst {
	src := string(text)
	tf := token.NewFileSet().AddFile(wf.name, -1, len(text))
	tf.SetLinesForContent(text)
	in := &finst{wf: wf, text: text, decided: []byte(src), pf: &msl.File{Name: wf.name, Src: text, TokFile: tf},
		children: map[int]*finst{}, key: key, uncertain: map[int]bool{}, seen: map[int]bool{}}
	dirs := findDirectives(src)
	q := unknownName(src, dirs)
	var stack []*condFrame
	for _, d := range dirs {
		line := joinLines(src[d.pos:d.end])
		name, rest := splitDirective(line)
		at := srcPos{f: in.pf, off: d.pos}
		in.seen[d.pos] = true
		reg := region(stack)
		switch name {
		case "if", "ifdef", "ifndef":
			v.probeCheck(at, rest)
			f := &condFrame{dead: reg == triNo}
			stack = append(stack, f)
			if f.dead {
				rewrite(in.decided, d, "#if "+q)
				continue
			}
			c := v.cond(name, rest)
			f.enter(c)
			rewrite(in.decided, d, "#if "+condLiteral(c, q))
		case "elif", "elifdef", "elifndef":
			v.probeCheck(at, rest)
			if len(stack) == 0 {
				continue // msl reports it
			}
			f := stack[len(stack)-1]
			if f.dead || f.taken || f.unknown {
				if !f.dead && f.taken {
					f.enter(triNo)
				} else if !f.dead {
					f.enter(triUnknown)
				}
				rewrite(in.decided, d, "#elif "+q)
				continue
			}
			c := v.cond(strings.TrimPrefix(name, "el"), rest)
			f.enter(c)
			rewrite(in.decided, d, "#elif "+condLiteral(c, q))
		case "else":
			if len(stack) == 0 {
				continue
			}
			f := stack[len(stack)-1]
			switch {
			case f.dead:
			case f.taken:
				f.enter(triNo)
			case f.unknown:
				f.enter(triUnknown)
			default:
				f.enter(triYes)
			}
		case "endif":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case "define", "undef":
			if reg == triNo {
				continue
			}
			r := strings.TrimLeft(stripComments(rest), " \t")
			w := words(r)
			if len(w) == 0 || !strings.HasPrefix(r, w[0]) {
				continue
			}
			st := &mstate{defined: triNo}
			if name == "define" {
				st.defined = triYes
				if body := r[len(w[0]):]; strings.HasPrefix(body, "(") {
					st.funcLike = true
				} else {
					st.body = strings.TrimSpace(body)
				}
			}
			if reg == triUnknown || unknown {
				st = &mstate{defined: triUnknown}
				in.uncertain[d.pos] = true
			}
			v.ms[w[0]] = st
		case "pragma":
			if reg == triYes && !unknown && strings.TrimSpace(stripComments(rest)) == "once" {
				v.once[key] = true
			}
		case "include":
			if child, entered := v.includeA(in, at, rest, reg, unknown, depth); entered {
				in.children[d.pos] = child
			}
		}
	}
	return in
}

// condLiteral is the condition text msl is given for a decision.
func condLiteral(c tri, unknown string) string {
	switch c {
	case triYes:
		return "1"
	case triNo:
		return "0"
	}
	return unknown
}

// unknownName returns a one-letter name the file never #defines, which
// msl therefore finds undecided.
func unknownName(src string, dirs []dirSpan) string {
	defined := map[string]bool{}
	for _, d := range dirs {
		if name, rest := splitDirective(joinLines(src[d.pos:d.end])); name == "define" {
			if w := words(rest); len(w) > 0 {
				defined[w[0]] = true
			}
		}
	}
	for _, c := range "QZXYWVUTSRPONMLKJIHGFEDCBAqzxywvutsrponmlkjihgfedcba" {
		if !defined[string(c)] {
			return string(c)
		}
	}
	return "Q" // a file defining all 52 letters: msl may decide some branches
}

// rewrite replaces the directive d in b by text, keeping every line break
// and line splice where it is and blanking the rest, so that offsets and
// lines are unchanged.
func rewrite(b []byte, d dirSpan, text string) {
	k := 0
	for i := d.pos; i < d.end; i++ {
		switch {
		case b[i] == '\n' || b[i] == '\r':
			continue
		case b[i] == '\\' && i+1 < d.end && (b[i+1] == '\n' || b[i+1] == '\r'):
			continue
		}
		if k < len(text) {
			b[i] = text[k]
			k++
		} else {
			b[i] = ' '
		}
	}
}

// probeCheck refuses __has_include in a condition: it probes host files.
func (v *vetter) probeCheck(at srcPos, rest string) {
	for _, w := range words(rest) {
		if w == "__has_include" || w == "__has_include_next" {
			v.refuse(at, "", "%s is not allowed: it probes the host's files", w)
		}
	}
}

// cond decides the condition of #if (kind "if"), #ifdef or #ifndef.
func (v *vetter) cond(kind, rest string) tri {
	expr := strings.TrimSpace(stripComments(rest))
	switch kind {
	case "ifdef", "ifndef":
		w := words(expr)
		if len(w) != 1 {
			return triUnknown
		}
		d := v.macroState(w[0]).defined
		if kind == "ifndef" {
			d = not(d)
		}
		return d
	}
	e := &condEval{v: v, toks: condTokens(expr)}
	val, ok := e.or()
	if !ok || e.pos != len(e.toks) {
		return triUnknown
	}
	if val.unknown {
		return triUnknown
	}
	if val.n != 0 {
		return triYes
	}
	return triNo
}

func not(t tri) tri {
	switch t {
	case triYes:
		return triNo
	case triNo:
		return triYes
	}
	return triUnknown
}

// macroState returns what is known of a macro name. Names no directive,
// -D or the prelude has defined are certainly undefined, except those
// beginning with an underscore, which the compiler may predefine; the
// compiler defines __cplusplus.
func (v *vetter) macroState(name string) *mstate {
	if st := v.ms[name]; st != nil {
		return st
	}
	if name == "__cplusplus" {
		return &mstate{defined: triYes, body: "201703"}
	}
	if strings.HasPrefix(name, "_") {
		return &mstate{defined: triUnknown}
	}
	return &mstate{defined: triNo}
}

// condTokens splits a condition into identifiers, numbers and operators;
// anything else becomes a token the evaluator does not know.
func condTokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			op := s[i : i+1]
			if i+1 < len(s) {
				switch two := s[i : i+2]; two {
				case "&&", "||", "==", "!=", "<=", ">=":
					op = two
				}
			}
			out = append(out, op)
			i += len(op)
		}
	}
	return out
}

// A condVal is a value of the condition evaluator: a small non-negative
// integer, or unknown.
type condVal struct {
	n       int64
	unknown bool
}

// condEval evaluates the exact subset of #if expressions.
type condEval struct {
	v     *vetter
	toks  []string
	pos   int
	depth int
}

func (e *condEval) peek() string {
	if e.pos < len(e.toks) {
		return e.toks[e.pos]
	}
	return ""
}

func (e *condEval) or() (condVal, bool) {
	x, ok := e.and()
	for ok && e.peek() == "||" {
		e.pos++
		var y condVal
		if y, ok = e.and(); !ok {
			break
		}
		switch {
		case !x.unknown && x.n != 0, !y.unknown && y.n != 0:
			x = condVal{n: 1}
		case x.unknown || y.unknown:
			x = condVal{unknown: true}
		default:
			x = condVal{}
		}
	}
	return x, ok
}

func (e *condEval) and() (condVal, bool) {
	x, ok := e.cmp()
	for ok && e.peek() == "&&" {
		e.pos++
		var y condVal
		if y, ok = e.cmp(); !ok {
			break
		}
		switch {
		case !x.unknown && x.n == 0, !y.unknown && y.n == 0:
			x = condVal{}
		case x.unknown || y.unknown:
			x = condVal{unknown: true}
		default:
			x = condVal{n: 1}
		}
	}
	return x, ok
}

func (e *condEval) cmp() (condVal, bool) {
	x, ok := e.unary()
	if !ok {
		return x, false
	}
	switch op := e.peek(); op {
	case "==", "!=", "<", ">", "<=", ">=":
		e.pos++
		y, ok := e.unary()
		if !ok {
			return y, false
		}
		if x.unknown || y.unknown {
			return condVal{unknown: true}, true
		}
		var r bool
		switch op {
		case "==":
			r = x.n == y.n
		case "!=":
			r = x.n != y.n
		case "<":
			r = x.n < y.n
		case ">":
			r = x.n > y.n
		case "<=":
			r = x.n <= y.n
		case ">=":
			r = x.n >= y.n
		}
		if r {
			return condVal{n: 1}, true
		}
		return condVal{}, true
	}
	return x, true
}

func (e *condEval) unary() (condVal, bool) {
	switch t := e.peek(); {
	case t == "!":
		e.pos++
		x, ok := e.unary()
		if !ok || x.unknown {
			return condVal{unknown: true}, ok
		}
		if x.n == 0 {
			return condVal{n: 1}, true
		}
		return condVal{}, true
	case t == "(":
		e.pos++
		x, ok := e.or()
		if !ok || e.peek() != ")" {
			return x, false
		}
		e.pos++
		return x, true
	case t == "defined":
		e.pos++
		paren := e.peek() == "("
		if paren {
			e.pos++
		}
		name := e.peek()
		if !isIdentifier(name) {
			return condVal{}, false
		}
		e.pos++
		if paren {
			if e.peek() != ")" {
				return condVal{}, false
			}
			e.pos++
		}
		switch e.v.macroState(name).defined {
		case triYes:
			return condVal{n: 1}, true
		case triNo:
			return condVal{}, true
		}
		return condVal{unknown: true}, true
	case isIdentifier(t):
		e.pos++
		if e.peek() == "(" {
			return condVal{}, false // a function-like macro or __has_include: not evaluated here
		}
		return e.ident(t), true
	case t != "" && t[0] >= '0' && t[0] <= '9':
		e.pos++
		return decimal(t), true
	}
	return condVal{}, false
}

// ident evaluates a name: a certainly undefined one is 0, a macro whose
// body is a small decimal literal (or such a macro's name) its value,
// true and false 1 and 0; anything else is unknown.
func (e *condEval) ident(name string) condVal {
	switch name {
	case "true":
		return condVal{n: 1}
	case "false":
		return condVal{}
	}
	st := e.v.macroState(name)
	switch st.defined {
	case triNo:
		return condVal{}
	case triUnknown:
		return condVal{unknown: true}
	}
	if st.funcLike || e.depth > 8 {
		return condVal{unknown: true}
	}
	b := strings.TrimSpace(st.body)
	if b != "" && b[0] >= '0' && b[0] <= '9' {
		return decimal(b)
	}
	if isIdentifier(b) {
		e.depth++
		defer func() { e.depth-- }()
		return e.ident(b)
	}
	return condVal{unknown: true}
}

// decimal is the value of a decimal literal without suffix below 2^31, or
// unknown: hexadecimal, octal, suffixed and large literals are left to the
// compiler.
func decimal(s string) condVal {
	if s == "0" {
		return condVal{}
	}
	if s[0] == '0' || len(s) > 9 {
		return condVal{unknown: true}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return condVal{unknown: true}
	}
	return condVal{n: n}
}

// includeA handles an #include for prep: it refuses what may not be
// included and enters the file. entered is false when the directive
// enters nothing (a refusal, an inactive branch, Metal's own headers).
func (v *vetter) includeA(in *finst, at srcPos, rest string, reg tri, unknown bool, depth int) (child *finst, entered bool) {
	spec, angle, ok := includeSpec(rest)
	switch {
	case !ok:
		v.refuse(at, "", "#include %s: computed includes are not allowed; write the path in quotes", strings.TrimSpace(rest))
		return nil, false
	case angle:
		if reg != triNo && !metalHeader(spec) {
			v.refuse(at, "", "#include <%s>: only Metal's headers (<metal_stdlib>, <metal_*>, <simd/simd.h>) may be included with <...>", spec)
		}
		return nil, false
	case spec == "" || strings.ContainsRune(spec, 0):
		v.refuse(at, "", "#include %q: not a file name", spec)
		return nil, false
	case filepath.IsAbs(spec) || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, `\`) || filepath.VolumeName(spec) != "":
		v.refuse(at, "", "#include %q: absolute include paths are not allowed", spec)
		return nil, false
	}
	wf := in.wf
	if v.fsys != nil {
		p := path.Join(wf.dir, spec)
		body, err := fs.ReadFile(v.fsys, p)
		if err != nil || reg == triNo {
			return nil, false // mtl_rt.h lives beside the prelude, not in it
		}
		return v.enterA(&wfile{name: p, dir: path.Dir(p)}, p, p, body, unknown || reg == triUnknown, depth)
	}
	found, size, dirs := v.resolve(wf.dir, spec)
	if len(dirs) == 0 {
		if reg != triNo {
			v.fail(at, "include %q: no include directory given", spec)
		}
		return nil, false
	}
	if found == "" {
		switch {
		case !v.inside(filepath.Join(dirs[0], spec), false):
			v.refuse(at, "", "#include %q: the path leaves the kernel's directory and the include directories", spec)
		case reg != triNo:
			v.fail(at, "include %q: file not found", spec)
		}
		return nil, false
	}
	if !v.inside(found, true) {
		v.refuse(at, "", "#include %q: the file lies outside the kernel's directory and the include directories", spec)
		return nil, false
	}
	if reg == triNo {
		return nil, false // the compiler skips it too
	}
	if size > maxIncludeSize {
		v.fail(at, "include %q: file larger than %d bytes", spec, maxIncludeSize)
		return nil, false
	}
	body, err := inputfile.ReadFile(found)
	if err != nil {
		v.fail(at, "include %q: %v", spec, err)
		return nil, false
	}
	key, err := filepath.Abs(found)
	if err != nil {
		key = found
	}
	if real, err := filepath.EvalSymlinks(key); err == nil {
		key = real
	}
	name := filepath.Join(filepath.Dir(wf.name), spec)
	if !sameFile(filepath.Join(wf.dir, spec), found) {
		// Found through the kernel's directory or an include directory,
		// not beside its includer: diagnostics name it by the include
		// text, as found there, not as the includer's directory joined to
		// it (MLX's mlx/backend/metal/kernels/mlx/backend/metal/kernels/bf16.h).
		name = filepath.Clean(spec)
	}
	return v.enterA(&wfile{name: name, dir: filepath.Dir(found)}, key, found, body, unknown || reg == triUnknown, depth)
}

// sameFile reports whether paths a and b name one existing file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// enterA enters an included file unless #pragma once says its second
// inclusion is empty.
func (v *vetter) enterA(wf *wfile, key, readPath string, body []byte, unknown bool, depth int) (*finst, bool) {
	if v.once[key] && v.included[key] {
		return nil, true
	}
	if depth+1 >= maxIncludeDepth {
		if v.fatal == nil {
			v.fatal = &msl.Error{Pos: token.Position{Filename: wf.name, Line: 1, Column: 1}, Msg: "includes nested too deeply"}
		}
		return nil, false
	}
	v.included[key] = true
	if !v.inClos[key] && v.fsys == nil {
		v.inClos[key] = true
		v.closure = append(v.closure, IncludedFile{Name: wf.name, Path: readPath, Content: body})
	}
	return v.prep(wf, body, key, unknown, depth+1), true
}
