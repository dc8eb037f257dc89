package msl

import (
	"strings"

	"metalab/internal/directive"
)

// This file expands function-like and object-like macros far enough to see
// the explicit instantiations a macro use at file scope produces, as MLX
// and ggml write their kernel instantiations:
//
//	#define INST(T) template [[host_name("k_" #T)]] kernel void k<T>(device T*, uint);
//	INST(float)
//
// The expansion is a bounded subset of the C preprocessor: parameter
// substitution (arguments macro-expanded first), # stringising, ##
// pasting, __VA_ARGS__, and nested macros to a fixed depth. It works on
// its own copy of the text; the source is never edited.

// A ppTok is one preprocessing token of a macro expansion.
type ppTok struct {
	text  string
	kind  Kind // Ident, Int (any pp-number), String, Char or Punct
	space bool // whitespace (or a comment) precedes it
	paste bool // a ## operator from a macro body, pending pasting
	pos   int  // offset in the file the text came from (the #define body or the use), or -1
}

// Bounds of one macro use's expansion, so that recursive or exponential
// macros fail quickly instead of exhausting time or memory.
const (
	maxMacroDepth  = 16      // nested expansions
	maxMacroSteps  = 4096    // macro expansions in all
	maxMacroOutput = 1 << 16 // tokens produced, intermediate expansions included
	maxFileMacro   = 1 << 20 // tokens produced by all the macro uses of one file
)

// ppLex splits s into preprocessing tokens; comments count as whitespace.
func ppLex(s string) []ppTok { return ppLexAt(s, -1) }

// ppLexAt is ppLex for text that starts at offset base of the file (its
// tokens' pos are offsets there), or comes from nowhere when base is -1.
func ppLexAt(s string, base int) []ppTok {
	var out []ppTok
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isSpace(c) || c == '\\':
			space = true
			i++
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			space = true
			i = directive.LineCommentEnd(s, i)
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			space = true
			i, _ = directive.BlockCommentEnd(s, i)
			continue
		}
		j := i + 1
		kind := Punct
		switch {
		case isIdentStart(c):
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			kind = Ident
			if j < len(s) && (s[j] == '"' || s[j] == '\'') && (s[i:j] == "L" || s[i:j] == "u" || s[i:j] == "U" || s[i:j] == "u8") {
				j, kind = ppQuoted(s, j)
			}
		case isDigit(c) || c == '.' && j < len(s) && isDigit(s[j]):
			for j < len(s) && (isIdentChar(s[j]) || s[j] == '.' || (s[j] == '+' || s[j] == '-') && strings.ContainsRune("eEpP", rune(s[j-1]))) {
				j++
			}
			kind = Int
		case c == '"' || c == '\'':
			j, kind = ppQuoted(s, i)
		default:
			if k := punctLen(s[i:]); k > 0 {
				j = i + k
			}
		}
		pos := -1
		if base >= 0 {
			pos = base + i
		}
		out = append(out, ppTok{text: s[i:j], kind: kind, space: space, pos: pos})
		space = false
		i = j
	}
	return out
}

// ppQuoted returns the end of the string or character literal whose quote
// is at q, and its kind; an unterminated one runs to the end of the line.
func ppQuoted(s string, q int) (int, Kind) {
	if s[q] == '\'' {
		return directive.QuoteEnd(s, q), Char
	}
	return directive.QuoteEnd(s, q), String
}

// ppJoin renders tokens as text, a space where the source had one or where
// two words would otherwise run together.
func ppJoin(toks []ppTok) string {
	s, _ := ppJoinOrigin(toks)
	return s
}

// ppJoinOrigin is ppJoin that also returns, for each token, the pair
// (offset in the text, offset in the file it came from or -1).
func ppJoinOrigin(toks []ppTok) (string, []int32) {
	var b strings.Builder
	origin := make([]int32, 0, 2*len(toks))
	for i, t := range toks {
		if i > 0 && (t.space || isIdentChar(toks[i-1].text[len(toks[i-1].text)-1]) && isIdentChar(t.text[0])) {
			b.WriteByte(' ')
		}
		origin = append(origin, int32(b.Len()), int32(t.pos))
		b.WriteString(t.text)
	}
	return b.String(), origin
}

// A macroExpander expands the macros in effect at one offset of a file.
type macroExpander struct {
	f     *File
	at    int
	find  func(name string) *Define // when set, the macros in effect instead of f's
	steps int
	size  int
	file  *int // tokens left for the whole file's expansions
	fail  bool // a bound was exceeded; the expansion is incomplete
}

// lookup returns the macro named name in effect, or nil. Command-line
// defines stand in for names the file does not define.
func (m *macroExpander) lookup(name string) *Define {
	if m.find != nil {
		return m.find(name)
	}
	if d := m.f.lookupDefine(name, m.at); d != nil {
		return d
	}
	if v, ok := m.f.CmdDefines[name]; ok {
		if v == "" {
			v = "1"
		}
		return &Define{Name: name, Body: v}
	}
	return nil
}

// expand macro-expands toks; disabled names the macros being expanded,
// which are not expanded again.
func (m *macroExpander) expand(toks []ppTok, disabled []string, depth int) []ppTok {
	if depth > maxMacroDepth {
		m.fail = true
		return toks
	}
	var out []ppTok
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if m.fail || t.kind != Ident || slicesContains(disabled, t.text) {
			out = append(out, t)
			continue
		}
		d := m.lookup(t.text)
		if d == nil {
			out = append(out, t)
			continue
		}
		var args [][]ppTok
		next := i + 1
		if d.FuncLike {
			if next >= len(toks) || toks[next].text != "(" {
				out = append(out, t)
				continue
			}
			var ok bool
			args, next, ok = ppArgs(toks, next)
			if !ok {
				out = append(out, toks[i:]...)
				break
			}
		}
		if m.steps++; m.steps > maxMacroSteps {
			m.fail = true
			out = append(out, toks[i:]...)
			break
		}
		inner := append(disabled[:len(disabled):len(disabled)], d.Name)
		body := m.substitute(d, args, inner, depth)
		body = m.expand(body, inner, depth+1)
		if len(body) > 0 {
			body[0].space = t.space
		}
		if !m.spend(len(body)) {
			return out
		}
		out = append(out, body...)
		i = next - 1
	}
	return out
}

// bodyTokens lexes d's body, with the offsets of its tokens in the file
// when d is one of the file's own #defines.
func (m *macroExpander) bodyTokens(d *Define) []ppTok {
	f := m.f
	if f != nil && d.bodyPos > 0 && d.from == nil && d.End <= len(f.Src) && d.bodyPos < d.End {
		for _, x := range f.defs[d.Name] {
			if x == d {
				return ppLexAt(f.text(d.bodyPos, d.End), d.bodyPos)
			}
		}
	}
	return ppLex(d.Body)
}

// spend counts n tokens produced against the bounds and reports whether
// the expansion may go on.
func (m *macroExpander) spend(n int) bool {
	m.size += n
	if m.file != nil {
		*m.file -= n
	}
	if m.size > maxMacroOutput || m.file != nil && *m.file < 0 {
		m.fail = true
	}
	return !m.fail
}

// slicesContains reports whether list holds s.
func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ppArgs collects the arguments of a function-like macro use whose '(' is
// at toks[lp]: it returns them, the index after ')' and whether the ')'
// was found. A use with empty parentheses has one empty argument.
func ppArgs(toks []ppTok, lp int) ([][]ppTok, int, bool) {
	depth := 0
	args := [][]ppTok{nil}
	for k := lp + 1; k < len(toks); k++ {
		switch toks[k].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth == 0 && toks[k].text == ")" {
				return args, k + 1, true
			}
			depth--
		case ",":
			if depth == 0 {
				args = append(args, nil)
				continue
			}
		}
		args[len(args)-1] = append(args[len(args)-1], toks[k])
	}
	return nil, len(toks), false
}

// substitute replaces the parameters in d's body by args: stringised
// after #, raw beside ##, macro-expanded elsewhere; then pastes ##.
func (m *macroExpander) substitute(d *Define, args [][]ppTok, disabled []string, depth int) []ppTok {
	body := m.bodyTokens(d)
	// Parameter names as the body spells them: ... is __VA_ARGS__, and a
	// GNU named variadic args... is args.
	params := d.Params
	variadic := -1
	if n := len(params); n > 0 && strings.HasSuffix(params[n-1], "...") {
		variadic = n - 1
		params = append(params[:n-1:n-1], strings.TrimSpace(strings.TrimSuffix(params[n-1], "...")))
		if params[n-1] == "" {
			params[n-1] = "__VA_ARGS__"
		}
	}
	argOf := func(name string) (int, bool) {
		for k, p := range params {
			if p == name {
				return k, true
			}
		}
		return 0, false
	}
	arg := func(k int) []ppTok {
		if k == variadic && len(args) > k {
			// The variadic argument takes the rest, commas included.
			var out []ppTok
			for n, a := range args[k:] {
				if n > 0 {
					out = append(out, ppTok{text: ",", kind: Punct})
				}
				out = append(out, a...)
			}
			return out
		}
		if k < len(args) {
			return args[k]
		}
		return nil
	}
	expanded := map[int][]ppTok{}
	var out []ppTok
	for i := 0; i < len(body); i++ {
		t := body[i]
		if d.FuncLike && t.text == "#" && i+1 < len(body) && body[i+1].kind == Ident {
			if k, ok := argOf(body[i+1].text); ok {
				out = append(out, ppTok{text: stringise(arg(k)), kind: String, space: t.space, pos: t.pos})
				i++
				continue
			}
		}
		if t.text == "##" && t.kind == Punct {
			t.paste = true
			out = append(out, t)
			continue
		}
		k, ok := argOf(t.text)
		if t.kind != Ident || !ok {
			out = append(out, t)
			continue
		}
		var a []ppTok
		if i+1 < len(body) && body[i+1].text == "##" || i > 0 && body[i-1].text == "##" {
			a = arg(k)
		} else {
			e, done := expanded[k]
			if !done && !m.fail {
				e = m.expand(arg(k), disabled[:len(disabled)-1], depth+1)
				expanded[k] = e
			}
			a = e
		}
		if !m.spend(len(a)) {
			return nil
		}
		if len(a) > 0 {
			first := len(out)
			out = append(out, a...)
			out[first].space = t.space
		}
	}
	return paste(out)
}

// paste joins the tokens on either side of each pending ## into one.
func paste(toks []ppTok) []ppTok {
	var out []ppTok
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.paste {
			out = append(out, t)
			continue
		}
		if i+1 >= len(toks) || toks[i+1].paste {
			continue
		}
		r := toks[i+1]
		i++
		if len(out) == 0 {
			out = append(out, r)
			continue
		}
		l := out[len(out)-1]
		joined := ppLex(l.text + r.text)
		if len(joined) == 0 {
			continue
		}
		joined[0].space = l.space
		for k := range joined {
			joined[k].pos = l.pos
		}
		out = append(out[:len(out)-1], joined...)
	}
	return out
}

// stringise renders a macro argument as a string literal, as # does.
func stringise(arg []ppTok) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, t := range arg {
		if i > 0 && t.space {
			b.WriteByte(' ')
		}
		if t.kind == String || t.kind == Char {
			for k := 0; k < len(t.text); k++ {
				if t.text[k] == '"' || t.text[k] == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(t.text[k])
			}
			continue
		}
		b.WriteString(t.text)
	}
	b.WriteByte('"')
	return b.String()
}

// instMacro reports whether the macro name, or one its body uses, mentions
// the keyword template: only then may a use of it at file scope produce
// explicit instantiations worth expanding.
func (p *parser) instMacro(name string, depth int) bool {
	if v, ok := p.instMacros[name]; ok {
		return v
	}
	if p.instMacros == nil {
		p.instMacros = map[string]bool{}
	}
	p.instMacros[name] = false // against recursive macros
	d := p.def(name, 0)
	if d == nil || depth > maxMacroDepth {
		return false
	}
	v := false
	for _, t := range ppLex(d.Body) {
		if t.kind != Ident {
			continue
		}
		if t.text == "template" || t.text == "kernel" || t.text != name && p.def(t.text, 0) != nil && p.instMacro(t.text, depth+1) {
			v = true
			break
		}
	}
	p.instMacros[name] = v
	return v
}

// maxMacroNesting bounds how deep expansions found inside expansions are
// followed for instantiations.
const maxMacroNesting = 16

// macroInstantiations expands the use of macro name in tokens [i, end) of
// the significant tokens (end is one past its ')' or its name) and records
// the explicit instantiations of the expansion, each spanning the use, and
// an Expansion when it defines functions (kernels written inside #define
// bodies). It returns how many instantiations and functions it recorded.
func (p *parser) macroInstantiations(i, end int) int {
	if p.macroTokens == nil {
		n := maxFileMacro
		p.macroTokens = &n
	}
	if *p.macroTokens <= 0 {
		return 0
	}
	// An expansion whose text uses a macro again is parsed inside the one
	// before; a self-reproducing use would nest without end (each level's
	// name lookups walk every level above it), so nesting stops here.
	depth := 0
	for f := p.f; f != nil && f.macro != ""; f = f.parent {
		depth++
	}
	if depth >= maxMacroNesting {
		return 0
	}
	pos := p.t[i].Pos
	use := p.text(pos, p.t[end-1].End)
	m := &macroExpander{f: p.f, at: pos, file: p.macroTokens}
	toks := m.expand(ppLexAt(use, pos), nil, 0)
	if m.fail {
		return 0 // incomplete: better no instantiations than wrong ones
	}
	text, origin := ppJoinOrigin(toks)
	if !strings.Contains(text, "template") && !strings.Contains(text, "kernel") {
		return 0
	}
	sub := parseFile(p.f.Name, []byte(text), Options{Defines: p.f.CmdDefines}, nil, nil, func(x *File) {
		x.parent, x.parentAt, x.macro, x.origin = p.f, pos, p.t[i].Text, origin
		x.macroBudget = p.macroTokens
		x.CmdDefines = p.f.CmdDefines
	})
	n := 0
	for _, in := range sub.Instantiations {
		if in.HostName == "" {
			continue // not a kernel the host can name
		}
		in.Pos, in.End = pos, p.t[end-1].End
		p.f.Instantiations = append(p.f.Instantiations, in)
		n++
	}
	funcs := 0
	for _, fn := range sub.Funcs {
		if fn.Body != nil {
			funcs++
		}
	}
	if funcs > 0 {
		p.f.Expansions = append(p.f.Expansions, &Expansion{Pos: pos, End: p.t[end-1].End, Macro: p.t[i].Text, File: sub})
	}
	return n + funcs
}
