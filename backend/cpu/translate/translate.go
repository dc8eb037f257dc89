// Package translate turns Metal Shading Language source into one C++17
// translation unit for the cpu backend: it walks the token stream, copies
// tokens and the trivia between them, and rewrites only what the cpu
// conventions require (address spaces, attributes, threadgroup storage,
// swizzles, half literals, function constants, kernel entry wrappers).
// The result includes <metal_stdlib> from the cpu prelude and exports the
// mtl_kernels table declared in backend/cpu/runtime/mtl_rt.h.
//
// Translate first runs Vet, which refuses what a Metal kernel cannot
// contain and what would let an untrusted variant reach the host (see
// vet.go); IncludeClosure lists the files a source includes, resolved the
// same way, for the compile cache.
package translate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"metalab/backend"
	"metalab/msl"
)

// A Unit is a translated translation unit.
type Unit struct {
	CPP     []byte   // the translated TU
	Kernel  string   // entry name in the TU's mtl_kernels table (== src.Entry)
	Kernels []string // all entries exported
	Slots   []Slot   // static threadgroup slots of the entry, in layout order
	// Includes are the files the TU includes from the kernel's directory,
	// transitively, with the contents they had when vetted: a compile
	// cache keys on them.
	Includes []IncludedFile
}

// A Slot is one static threadgroup declaration reachable from a kernel; ID is
// the TU-wide id passed to mtl_rt::tg_slot.
type Slot struct {
	ID   int
	Func string // function whose body declares it
	Name string // declared name
	Type string // element type and dimensions, e.g. "float[4][64]"
}

// Translate translates src and checks that src.Entry names a kernel function
// or the host_name of a template instantiation. Bad input yields positioned
// errors (file:line:col: msg); a source Vet refuses yields its *Refusal.
func Translate(src backend.Source) (*Unit, error) {
	includes, err := vet(src, nil)
	if err != nil {
		return nil, err
	}
	t, err := run(src)
	if err != nil {
		return nil, err
	}
	var entry *kernelEntry
	for _, e := range t.entries {
		if e.name == src.Entry {
			entry = e
		}
	}
	if entry == nil {
		return nil, fmt.Errorf("%s:1:1: unknown entry %q (kernels: %s)", t.name, src.Entry, strings.Join(t.entryNames(), ", "))
	}
	if includes == nil {
		includes = []IncludedFile{}
	}
	u := &Unit{Kernel: src.Entry, Kernels: t.entryNames(), Includes: includes}
	for _, s := range entry.slots {
		u.Slots = append(u.Slots, Slot{ID: s.id, Func: s.fn.name, Name: s.name, Type: s.typ + s.dims})
	}
	u.CPP = t.emit()
	return u, nil
}

// CPP is Translate in the shape of the cpu backend's translator hook
// (cpu.TranslateFunc): the TU, the entry's name in its kernel table and
// the files it includes.
func CPP(src backend.Source) ([]byte, string, []IncludedFile, error) {
	u, err := Translate(src)
	if err != nil {
		return nil, "", nil, err
	}
	return u.CPP, u.Kernel, u.Includes, nil
}

// run translates src up to the choice of entry.
func run(src backend.Source) (*tr, error) {
	t := &tr{src: src, name: src.Name, fields: map[string]bool{}, included: map[string]bool{}}
	if t.name == "" {
		t.name = "kernel.metal"
	}
	if err := t.load(t.name, src.Dir, src.Text, 0); err != nil {
		return nil, err
	}
	for i, tk := range t.toks {
		if tk.Kind != msl.Comment && tk.Kind != msl.Directive && !tk.dead {
			t.sig = append(t.sig, i)
		}
	}
	t.rep = make([]*string, len(t.toks))
	t.ins = make([]string, len(t.toks))
	for i, tk := range t.toks {
		if tk.drop {
			t.setRep(i, "")
		}
	}
	t.tgMacros = map[string]bool{}
	for _, tk := range t.toks {
		if w := directiveWords(tk.Text); tk.Kind == msl.Directive && !tk.dead && len(w) == 3 && w[0] == "define" && w[2] == "threadgroup" {
			t.tgMacros[w[1]] = true
		}
	}
	t.scanScope(0, len(t.sig), "", "")
	t.buildKernels()
	t.rewriteAll()
	if len(t.errs) > 0 {
		return nil, errors.Join(t.errs...)
	}
	return t, nil
}

// A srcFile is one file of the translation: the main source or an include.
type srcFile struct {
	name       string // name for diagnostics and #line
	dir        string // directory includes resolve against
	src        []byte
	lineStarts []int
}

func (f *srcFile) lineCol(off int) (int, int) {
	lo, hi := 0, len(f.lineStarts)
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if f.lineStarts[m] <= off {
			lo = m
		} else {
			hi = m
		}
	}
	return lo + 1, off - f.lineStarts[lo] + 1
}

// A tok is a token of the combined stream (includes inlined), with the
// trivia that precedes it in its own file.
type tok struct {
	msl.Token
	f       *srcFile
	pre     string // trivia before the token
	preLine int    // line on which pre starts
	drop    bool   // directive consumed by the translator (#include "x", #pragma once)
	dead    bool   // inside an #if branch that is inactive under src.Defines: copied verbatim
}

// tr holds the state of one translation.
type tr struct {
	src      backend.Source
	name     string // main file name for diagnostics
	toks     []tok
	sig      []int     // indices of tokens that are neither comments nor directives
	pairs    []int     // matching bracket of each significant token, or -1
	rep      []*string // replacement text per token; nil keeps it
	ins      []string  // text inserted before a token on lines of its own
	funcs    []*fn
	byName   map[string][]*fn
	fields   map[string]bool // struct field names, never rewritten as swizzles
	insts    []*inst
	slots    []*slot
	entries  []*kernelEntry
	included map[string]bool
	tgMacros map[string]bool // object-like macros whose body is exactly "threadgroup"
	errs     []error
	tail     bytes.Buffer // generated wrappers and the kernel table
}

func (t *tr) errorf(k int, format string, args ...any) {
	tk := t.toks[t.sig[k]]
	t.errAtTok(tk, format, args...)
}

func (t *tr) errAtTok(tk tok, format string, args ...any) {
	line, col := tk.f.lineCol(tk.Pos)
	t.errs = append(t.errs, fmt.Errorf("%s:%d:%d: %s", tk.f.name, line, col, fmt.Sprintf(format, args...)))
}

// load lexes one file into the combined stream, inlining #include "x".
func (t *tr) load(name, dir string, text []byte, depth int) error {
	if depth > 32 {
		return fmt.Errorf("%s:1:1: includes nested too deeply", name)
	}
	f := &srcFile{name: name, dir: dir, src: text, lineStarts: []int{0}}
	for i, c := range text {
		if c == '\n' {
			f.lineStarts = append(f.lineStarts, i+1)
		}
	}
	toks, err := msl.Lex(name, text)
	if err != nil {
		return err
	}
	dead := inactiveRanges(name, text, t.src.Defines)
	prev := 0
	for _, mt := range toks {
		line, _ := f.lineCol(prev)
		tk := tok{Token: mt, f: f, pre: string(text[prev:mt.Pos]), preLine: line}
		prev = mt.End
		for len(dead) > 0 && dead[0][1] <= mt.Pos {
			dead = dead[1:]
		}
		if mt.Kind == msl.Skipped || len(dead) > 0 && dead[0][0] <= mt.Pos {
			tk.dead = true
			t.toks = append(t.toks, tk)
			continue
		}
		if mt.Kind != msl.Directive {
			t.toks = append(t.toks, tk)
			continue
		}
		words := directiveWords(mt.Text)
		switch {
		case len(words) >= 2 && words[0] == "pragma" && words[1] == "once":
			tk.drop = true
			t.toks = append(t.toks, tk)
		case len(words) >= 2 && words[0] == "include" && strings.HasPrefix(words[1], `"`):
			tk.drop = true
			t.toks = append(t.toks, tk)
			inc := strings.Trim(words[1], `"`)
			path, rel, err := t.resolve(f, inc)
			if err != nil {
				line, col := f.lineCol(mt.Pos)
				return fmt.Errorf("%s:%d:%d: include %q: %w", name, line, col, inc, err)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				line, col := f.lineCol(mt.Pos)
				return fmt.Errorf("%s:%d:%d: include %q: %w", name, line, col, inc, err)
			}
			if t.included[path] && hasPragmaOnce(body) {
				continue
			}
			t.included[path] = true
			if err := t.load(rel, filepath.Dir(path), body, depth+1); err != nil {
				return err
			}
		default:
			t.toks = append(t.toks, tk)
		}
	}
	return nil
}

// resolve finds an included file relative to the including file's
// directory, then to src.Dir. It returns the path to read and the name for
// diagnostics.
func (t *tr) resolve(from *srcFile, inc string) (string, string, error) {
	if t.src.Dir == "" {
		return "", "", errors.New("no include directory given")
	}
	rel := filepath.Join(filepath.Dir(from.name), inc)
	for _, dir := range []string{from.dir, t.src.Dir} {
		cand := filepath.Join(dir, inc)
		if st, err := os.Stat(cand); err == nil && !st.IsDir() {
			return cand, rel, nil
		}
	}
	return "", "", errors.New("file not found")
}

// inactiveRanges returns the byte ranges of #if branches that msl finds
// certainly inactive given defines (and the file's own #defines). Code there
// is copied verbatim and never scanned, so a kernel defined in both branches
// of an #if is seen once. msl is only a source of extra knowledge here: if
// it cannot parse the file, nothing is skipped.
func inactiveRanges(name string, text []byte, defines map[string]string) (out [][2]int) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	f, _ := msl.ParseWith(name, text, defines)
	if f == nil {
		return nil
	}
	for _, tk := range f.Tokens {
		if tk.Kind == msl.Skipped {
			out = append(out, [2]int{tk.Pos, tk.End})
		}
	}
	return out
}

func hasPragmaOnce(body []byte) bool {
	toks, err := msl.Lex("", body)
	if err != nil {
		return false
	}
	for _, tk := range toks {
		if tk.Kind == msl.Directive {
			w := directiveWords(tk.Text)
			if len(w) >= 2 && w[0] == "pragma" && w[1] == "once" {
				return true
			}
		}
	}
	return false
}

// directiveWords splits a directive into its name and the following words.
func directiveWords(d string) []string {
	d = strings.TrimPrefix(strings.TrimSpace(d), "#")
	return strings.Fields(d)
}

func (t *tr) setRep(i int, s string) { t.rep[i] = &s }

// text returns the text of significant token k ("" out of range).
func (t *tr) text(k int) string {
	if k < 0 || k >= len(t.sig) {
		return ""
	}
	return t.toks[t.sig[k]].Text
}

func (t *tr) kind(k int) msl.Kind {
	if k < 0 || k >= len(t.sig) {
		return msl.EOF
	}
	return t.toks[t.sig[k]].Kind
}

// replaceRange replaces significant tokens a..b (inclusive) and everything
// between them with s.
func (t *tr) replaceRange(a, b int, s string) {
	t.setRep(t.sig[a], s)
	for i := t.sig[a] + 1; i <= t.sig[b]; i++ {
		t.setRep(i, "")
	}
}

// emit writes the TU: the prelude include, the rewritten token stream with
// #line directives wherever generated lines or file switches would shift
// line numbers, and the generated tail.
func (t *tr) emit() []byte {
	var out bytes.Buffer
	out.WriteString("#include <metal_stdlib>\n")
	var cur *srcFile
	for i, tk := range t.toks {
		if tk.f != cur {
			fmt.Fprintf(&out, "\n#line %d %s\n", tk.preLine, cQuote(tk.f.name))
			cur = tk.f
		}
		if t.ins[i] != "" {
			fmt.Fprintf(&out, "\n%s\n#line %d %s\n", t.ins[i], tk.preLine, cQuote(tk.f.name))
		}
		out.WriteString(tk.pre)
		if r := t.rep[i]; r != nil {
			out.WriteString(*r)
			if n := strings.Count(tk.Text, "\n") - strings.Count(*r, "\n"); n > 0 {
				out.WriteString(strings.Repeat("\n", n))
			}
		} else {
			out.WriteString(tk.Text)
		}
	}
	out.WriteString("\n")
	out.Write(t.tail.Bytes())
	return out.Bytes()
}

// cQuote quotes a file name for a #line directive.
func cQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}
