package translate

import (
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"metalab/internal/directive"
	"metalab/internal/inputfile"
	"metalab/msl"
)

// This file decides #if conditions for the vetting pass, the way the C++
// compiler will, before msl sees the source. msl decides each file alone,
// blind to the macros of the files included before it. A branch msl skips
// is vetted only for what reaches the host, so the vetting pass must not
// skip a branch the compiler takes. It therefore walks the directives of
// the source and its includes in the compiler's order, tracking which
// macros are certainly defined, certainly undefined or unknown (a
// directive.Table), decides each condition with package directive, which
// answers only where the compiler's preprocessor would compute the same,
// and rewrites each condition to 1, 0 or an unknown name of the same or
// shorter length, so that msl skips exactly the branches the compiler
// certainly skips and keeps both sides of every undecided one. Where
// directives are, what they mean and how conditions evaluate are package
// directive's, as they are msl's.

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

// prep reads one inclusion of a file: it decides its conditions, follows
// its includes in order and updates the macro knowledge. unknown says the
// inclusion itself is undecided, so its #defines leave names unknown.
func (v *vetter) prep(wf *wfile, text []byte, key string, unknown bool, depth int) *finst {
	src := directive.LF(text)
	tf := token.NewFileSet().AddFile(wf.name, -1, len(text))
	tf.SetLinesForContent(text)
	in := &finst{wf: wf, text: text, decided: []byte(string(text)), pf: &msl.File{Name: wf.name, Src: text, TokFile: tf},
		children: map[int]*finst{}, key: key, uncertain: map[int]bool{}, seen: map[int]bool{}}
	dirs := directive.Scan(src)
	q := unknownName(src, dirs)
	var stack []*directive.Group
	for _, d := range dirs {
		name, rest := directive.Split(src[d.Pos:d.End])
		at := srcPos{f: in.pf, off: d.Pos}
		in.seen[d.Pos] = true
		reg := directive.Region(stack)
		switch name {
		case "if", "ifdef", "ifndef":
			v.probeCheck(at, rest)
			g := &directive.Group{Pos: d.Pos}
			stack = append(stack, g)
			if reg == directive.No {
				g.Taken, g.Branch = true, directive.No // the whole group is skipped
				rewrite(in.decided, d, "#if "+q)
				continue
			}
			g.Enter(directive.Cond(name, rest, v.macroState))
			rewrite(in.decided, d, "#if "+condLiteral(g.Branch, q))
		case "elif", "elifdef", "elifndef":
			v.probeCheck(at, rest)
			if len(stack) == 0 {
				continue // msl reports it
			}
			g := stack[len(stack)-1]
			decided := !g.Taken && !g.Unknown
			g.Elif(func() directive.Tri { return directive.Cond(name, rest, v.macroState) })
			if !decided {
				rewrite(in.decided, d, "#elif "+q) // msl's lexer decides it as the walk did
				continue
			}
			rewrite(in.decided, d, "#elif "+condLiteral(g.Branch, q))
		case "else":
			if len(stack) > 0 {
				stack[len(stack)-1].Else()
			}
		case "endif":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case "define", "undef":
			if reg == directive.No {
				continue
			}
			sure := reg == directive.Yes && !unknown
			if !sure {
				in.uncertain[d.Pos] = true
			}
			if name == "define" {
				if def, msg := directive.ParseDefine(rest); msg == "" {
					v.ms.Define(def, sure)
				}
			} else if n, ok := directive.UndefName(rest); ok {
				v.ms.Undef(n, sure)
			}
		case "pragma":
			if reg == directive.Yes && !unknown && directive.Operand(rest) == "once" {
				v.once[key] = true
			}
		case "include":
			if child, entered := v.includeA(in, at, rest, reg, unknown, depth); entered {
				in.children[d.Pos] = child
			}
		}
	}
	return in
}

// condLiteral is the condition text msl is given for a decision.
func condLiteral(c directive.Tri, unknown string) string {
	switch c {
	case directive.Yes:
		return "1"
	case directive.No:
		return "0"
	}
	return unknown
}

// unknownName returns a one-letter name the file never #defines, which
// msl therefore finds undecided.
func unknownName(src string, dirs []directive.Span) string {
	defined := map[string]bool{}
	for _, d := range dirs {
		if name, rest := directive.Split(src[d.Pos:d.End]); name == "define" {
			if def, msg := directive.ParseDefine(rest); msg == "" {
				defined[def.Name] = true
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
func rewrite(b []byte, d directive.Span, text string) {
	k := 0
	for i := d.Pos; i < d.End; i++ {
		switch {
		case b[i] == '\n' || b[i] == '\r':
			continue
		case b[i] == '\\' && i+1 < d.End && (b[i+1] == '\n' || b[i+1] == '\r'):
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

// macroState says what is known of a macro name: a directive.Lookup.
// Names no directive, -D or the prelude has defined are certainly
// undefined, except those beginning with an underscore, which the
// compiler may predefine; the compiler defines __cplusplus.
func (v *vetter) macroState(name string) directive.Macro { return v.ms.Lookup(name) }

// compilerDefault is what the vetting pass knows of a name before any
// directive: the Table's Default.
func compilerDefault(name string) directive.Macro {
	switch {
	case name == "__cplusplus":
		return directive.Macro{Defined: directive.Yes, Body: "201703L"}
	case strings.HasPrefix(name, "_"):
		return directive.Macro{Defined: directive.Unknown}
	}
	return directive.Macro{Defined: directive.No}
}

// includeA handles an #include for prep: it refuses what may not be
// included and enters the file. entered is false when the directive
// enters nothing (a refusal, an inactive branch, Metal's own headers).
func (v *vetter) includeA(in *finst, at srcPos, rest string, reg directive.Tri, unknown bool, depth int) (child *finst, entered bool) {
	spec, angle, ok := includeSpec(rest)
	switch {
	case !ok:
		v.refuse(at, "", "#include %s: computed includes are not allowed; write the path in quotes", strings.TrimSpace(rest))
		return nil, false
	case angle:
		if reg != directive.No && !metalHeader(spec) {
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
		if err != nil || reg == directive.No {
			return nil, false // mtl_rt.h lives beside the prelude, not in it
		}
		return v.enterA(&wfile{name: p, dir: path.Dir(p)}, p, p, body, unknown || reg == directive.Unknown, depth)
	}
	found, size, dirs := v.resolve(wf.dir, spec)
	if len(dirs) == 0 {
		if reg != directive.No {
			v.fail(at, "include %q: no include directory given", spec)
		}
		return nil, false
	}
	if found == "" {
		switch {
		case !v.inside(filepath.Join(dirs[0], spec), false):
			v.refuse(at, "", "#include %q: the path leaves the kernel's directory and the include directories", spec)
		case reg != directive.No:
			v.fail(at, "include %q: file not found", spec)
		}
		return nil, false
	}
	if !v.inside(found, true) {
		v.refuse(at, "", "#include %q: the file lies outside the kernel's directory and the include directories", spec)
		return nil, false
	}
	if reg == directive.No {
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
	return v.enterA(&wfile{name: name, dir: filepath.Dir(found)}, key, found, body, unknown || reg == directive.Unknown, depth)
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
