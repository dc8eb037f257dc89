package msl

import (
	"fmt"
	"path/filepath"
	"strings"

	"metalab/internal/inputfile"
)

// An Include is one #include directive of a file.
type Include struct {
	Pos, End int
	Name     string // as written, without quotes or angle brackets: "ggml-common.h"
	System   bool   // written <...>
	Metal    bool   // one of Metal's own headers (<metal_stdlib>, <simd/simd.h>, ...): nothing to read
	Path     string // the file read, "" when none was
	File     *File  // the header as parsed; nil when not read (Metal's own, not found, or an include cycle)
}

// An Expansion is a file-scope use of a macro whose expansion defines
// functions, as candle writes whole kernels inside #define bodies:
//
//	#define UNARY(NAME, FN) kernel void NAME(device float *x, uint i [[thread_position_in_grid]]) { x[i] = FN(x[i]); }
//	UNARY(usqrt, sqrt)
//
// File is the expansion parsed as a file of its own, whose Src is the
// expanded text; its functions are the macro-made ones, entry points for
// ThreadgroupMemory and EntryPoints, and every statement in them lies
// inside a macro body, where no edit can be made (see MacroCaveat).
type Expansion struct {
	Pos, End int    // the macro use in this file
	Macro    string // the macro's name
	File     *File
}

// maxIncludeDepth bounds nested #includes, as compilers do, against a
// header that includes itself without a guard.
const maxIncludeDepth = 64

// An includer reads and parses the headers of one Parse call, each once.
type includer struct {
	opts  Options
	read  func(string) ([]byte, error)
	done  map[string]*File // by cleaned path; nil while the header is being read (a cycle)
	depth int
}

// metalHeader reports whether an <...> include names one of Metal's own
// headers, which the front end knows without reading.
func metalHeader(name string) bool {
	return strings.HasPrefix(name, "metal_") || strings.HasPrefix(name, "simd/") || name == "metal" || strings.HasPrefix(name, "metal/")
}

// include handles `#include` at pos: it records the directive and, when
// the lexer reads includes, lexes and parses the header with the macros
// defined so far, whose own definitions then apply to the rest of the file.
func (l *lexer) include(pos, end int, rest string) {
	arg := strings.TrimSpace(stripComments(joinLines(rest)))
	in := &Include{Pos: pos, End: end}
	switch {
	case strings.HasPrefix(arg, `"`):
		k := strings.IndexByte(arg[1:], '"')
		if k < 0 {
			l.errorf(pos, "unterminated #include name")
			return
		}
		in.Name = arg[1 : 1+k]
	case strings.HasPrefix(arg, "<"):
		k := strings.IndexByte(arg, '>')
		if k < 0 {
			l.errorf(pos, "unterminated #include name")
			return
		}
		in.Name, in.System = arg[1:k], true
		in.Metal = metalHeader(in.Name)
	default:
		l.warnf(pos, "#include %s: computed include names are not followed; its macros, types and constants are unknown", arg)
		return
	}
	l.incs = append(l.incs, in)
	if in.Metal || l.inc == nil || in.Name == "" {
		return
	}
	l.inc.load(l, in)
}

// load finds, reads and parses the header in names, for lexer l.
func (inc *includer) load(l *lexer, in *Include) {
	var cands []string
	if filepath.IsAbs(in.Name) {
		cands = []string{in.Name}
	} else {
		if !in.System {
			cands = append(cands, filepath.Join(filepath.Dir(l.name), in.Name))
		}
		for _, d := range inc.opts.IncludeDirs {
			cands = append(cands, filepath.Join(d, in.Name))
		}
	}
	var src []byte
	var path string
	for _, c := range cands {
		c = filepath.Clean(c)
		if h, ok := inc.done[c]; ok {
			in.Path, in.File = c, h // read already (or a cycle, when nil): once is enough
			return
		}
		b, err := inc.read(c)
		if err == nil {
			src, path = b, c
			break
		}
		if inputfile.IsInputError(err) {
			// There, but not a header anyone can read: a device, a
			// FIFO, a directory or a file over the input limit.
			if l.lenient() {
				l.warnf(in.Pos, "#include %s: %v", in.Name, err)
			} else {
				l.errorf(in.Pos, "#include %s: %v", in.Name, err)
			}
			return
		}
	}
	if path == "" {
		if in.System || l.lenient() {
			// A system header (<stdint.h>) or an include in a branch that
			// may be inactive: nothing to say unless its macros are
			// missed, which the parser reports.
			return
		}
		var dirs []string
		if !in.System {
			dirs = append(dirs, dirOrDot(filepath.Dir(l.name)))
		}
		dirs = append(dirs, inc.opts.IncludeDirs...)
		q := `"` + in.Name + `"`
		if in.System {
			q = "<" + in.Name + ">"
		}
		where := "searched " + strings.Join(dirs, ", ")
		if len(dirs) == 0 {
			where = "no include directories given"
		}
		l.warnf(in.Pos, "cannot find #include %s (%s): its macros, types and constants are unknown; pass -I DIR", q, where)
		return
	}
	if inc.depth >= maxIncludeDepth {
		l.warnf(in.Pos, "#include %q nested more than %d deep: not read", in.Name, maxIncludeDepth)
		return
	}
	in.Path = path
	inc.done[path] = nil
	inc.depth++
	defer func() { inc.depth-- }()
	outer := make(map[string]*Define, len(l.defines))
	for name, d := range l.defines {
		if d.def != nil && !d.undefined {
			outer[name] = d.def
		}
	}
	h := parseFile(path, src, inc.opts, inc, func(hl *lexer) {
		hl.defines = l.defines // the header sees, and adds to, the includer's macros
		hl.baseLenient = l.lenient()
	}, func(h *File) {
		h.outer = outer
		h.includer = l.owner
	})
	inc.done[path] = h
	in.File = h
	// The header's own problems are the includer's to report.
	l.warns = append(l.warns, h.Warnings...)
	if err, ok := h.parseErr.(ErrorList); ok {
		for _, e := range err {
			l.warns.Add(e.Pos, "in included header: "+e.Msg)
		}
	}
	h.Warnings = nil
}

func dirOrDot(d string) string {
	if d == "" {
		return "."
	}
	return d
}

// defaultRead is the ReadFile of Options that name include directories
// but no reader.
func defaultRead(name string) ([]byte, error) { return inputfile.ReadFile(name) }

// mergeInclude makes the header h, included by the directive at d, part of
// what p's file sees: its macros from the directive on, its aliases and
// enumerators; its structs, constants and functions are found through the
// index.
func (p *parser) mergeInclude(d Token, h *File) {
	for name, ds := range h.defs {
		for _, x := range ds {
			c := *x
			c.Pos, c.End = d.Pos, d.End
			if c.from == nil {
				c.from = h
			}
			p.f.defs[name] = append(p.f.defs[name], &c)
		}
	}
	for k, v := range h.Types {
		if _, ok := p.f.Types[k]; !ok {
			p.f.Types[k] = v
		}
	}
	for k, v := range h.Enums {
		if _, ok := p.f.Enums[k]; !ok && !p.enumSeen[k] {
			p.f.Enums[k] = v
		}
	}
}

// headers returns the files f reads names from besides itself, each once,
// in include order: its includes and theirs.
func (f *File) headers() []*File {
	var out []*File
	seen := map[*File]bool{}
	var walk func(g *File)
	walk = func(g *File) {
		for _, in := range g.Includes {
			if h := in.File; h != nil && !seen[h] {
				seen[h] = true
				out = append(out, h)
				walk(h)
			}
		}
	}
	walk(f)
	return out
}

// owner returns the file whose source fn's offsets refer to.
func (f *File) owner(fn *Func) *File {
	if fn != nil && fn.file != nil {
		return fn.file
	}
	return f
}

// structOwner returns the file whose source st's offsets refer to.
func (f *File) structOwner(st *Struct) *File {
	if st != nil && st.file != nil {
		return st.file
	}
	return f
}

// FileOf returns the file whose source fn's offsets refer to: f itself,
// a header it includes, or the expansion of a macro (see Expansion).
func (f *File) FileOf(fn *Func) *File { return f.owner(fn) }

// String names an include as written.
func (in *Include) String() string {
	if in.System {
		return fmt.Sprintf("<%s>", in.Name)
	}
	return fmt.Sprintf("%q", in.Name)
}

// MacroCaveat reports why the statement (or mutation site) starting at
// offset pos of f cannot be edited or taken at face value because of a
// macro, or ok false when nothing stands in the way:
//
//   - pos lies in the expansion of a macro (f is an Expansion's File): the
//     code is written inside a #define body, which no edit of one use can
//     change;
//   - the statement at pos directly follows a use of a macro the front end
//     cannot see (not defined in the file, its headers or by -D), which may
//     be a pragma, a condition or anything else.
//
// The mutate driver turns a site for which this reports a reason into a
// skip, for every mutation alike.
func (f *File) MacroCaveat(pos int) (reason string, ok bool) {
	if f == nil {
		return "", false
	}
	if f.parent != nil {
		p := f.parent.Position(f.parentAt)
		return fmt.Sprintf("inside the body of macro %s (expanded at %d:%d): edits are made to one use, never to a #define", f.macro, p.Line, p.Column), true
	}
	if name, ok := f.unknownAt[pos]; ok {
		return fmt.Sprintf("follows unknown macro %s, which may be a pragma or a condition: pass -I DIR for the header that defines it, or -D %s=...", name, name), true
	}
	return "", false
}

// OriginPos maps an offset of f to an offset in the file the user gave:
// for an Expansion's File, the byte of the #define body (or of the macro
// use) the text at pos came from; for any other file, pos itself.
func (f *File) OriginPos(pos int) int {
	if f == nil || f.parent == nil {
		return pos
	}
	o := f.origin
	// origin holds pairs (offset here, offset in parent), sorted by the first.
	lo, hi := 0, len(o)/2
	for lo < hi {
		m := (lo + hi) / 2
		if int(o[2*m]) <= pos {
			lo = m + 1
		} else {
			hi = m
		}
	}
	at := f.parentAt
	if lo > 0 && o[2*(lo-1)+1] >= 0 {
		at = int(o[2*(lo-1)+1])
	}
	return f.parent.OriginPos(at)
}

// Root returns the file the user gave: for an Expansion's File, the file
// the macro is used in (recursively); otherwise f.
func (f *File) Root() *File {
	for f != nil && f.parent != nil {
		f = f.parent
	}
	return f
}

// Headers returns the headers f reads names from, each once, in include
// order: its includes and theirs. Their functions, declarations and
// macros are in their own Files, positioned in their own sources.
func (f *File) Headers() []*File { return f.headers() }

// DefineAt returns the #define of name in effect at offset at of f (at >
// 0): the last one before it unless an #undef of name follows that, else
// what f's includer defined before including f; nil when none is.
func (f *File) DefineAt(name string, at int) *Define {
	if at <= 0 {
		at = 1
	}
	return f.lookupDefine(name, at)
}
