package patches

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"metalab/internal/directive"
	"metalab/internal/edit"
	"metalab/msl"
)

// A Define is the object-like #define of a macro in a Metal source, found
// by FindDefine: the one place a change of the macro's value is a patch.
type Define struct {
	Name     string
	Pos, End int // the #define directive's bytes
	Line     int // the directive's line, from 1
	// ValueStart and ValueEnd are the value's bytes: the body after the
	// name, surrounding blanks and trailing comments excluded; both are
	// the end of the name when the body is empty.
	ValueStart, ValueEnd int
	Value                string
	// Guarded says the #define is a default: it sits directly in a branch
	// compiled exactly when the macro is not yet defined (#ifndef NAME,
	// #if !defined(NAME), the #else of #ifdef NAME), so that a -D of the
	// host overrides it.
	Guarded bool

	glued bool // nothing but splices between the name and the value (or no value)
}

// ErrNoDefine is wrapped by FindDefine's error when the source has no
// #define of the macro the compiler sees: the value comes from the host
// (a -D, a specialisation), and a change to it is the host's to make.
var ErrNoDefine = errors.New("no #define of the macro")

// FindDefine returns the #define of the object-like macro name in src,
// deciding #if conditions without host defines (FindDefineWith nil).
func FindDefine(src []byte, name string) (*Define, error) {
	return FindDefineWith(src, name, nil)
}

// FindDefineWith returns the #define of the object-like macro name in src
// as a host compiling it with the -D defines (a stage's Defines) sees it.
// The defines decide #if conditions, so that a branch skipped under them
// is skipped here too; a define of name itself is left out, so that the
// file's own default (#ifndef NAME) stays the branch it is.
// It refuses, with an error that wraps ErrNoDefine, a source with no
// #define of name and one whose only #defines of name are in branches the
// preprocessor certainly skips (#if 0); and it refuses a function-like
// macro and a macro defined more than once outside skipped branches (its
// value would depend on other macros, or the last definition wins), naming
// the lines. Only src itself is read: a #define in an included header is
// not found.
func FindDefineWith(src []byte, name string, defines map[string]string) (*Define, error) {
	if !directive.IsIdent(name) {
		return nil, fmt.Errorf("#define %q: not a macro name", name)
	}
	var toks []msl.Token
	if len(defines) == 0 {
		toks, _ = msl.Lex("", src) // Lex never fails outright; a malformed line is a token all the same
	} else {
		ds := make(map[string]string, len(defines))
		for k, v := range defines {
			if k != name {
				ds[k] = v
			}
		}
		f, _ := msl.ParseOptions("", src, msl.Options{Defines: ds}) // a File however malformed; only its tokens are read
		toks = f.Tokens
	}
	lines := newLineIndex(src)
	// A frame is an open #if group: its opening directive, whether an
	// #elif has come, and whether the current branch is compiled exactly
	// when name is undefined.
	type frame struct {
		dir, rest string
		elif      bool
		guard     bool
	}
	var conds []frame
	var found []*Define
	var disabled []int
	var funcLike []int
	for _, t := range toks {
		switch t.Kind {
		case msl.Skipped:
			for _, off := range skippedDefines(t.Text, name) {
				disabled = append(disabled, lines.line(t.Pos+off))
			}
			continue
		case msl.Directive:
		default:
			continue
		}
		dir, rest := directive.Split(t.Text)
		switch dir {
		case "if", "ifdef", "ifndef":
			conds = append(conds, frame{dir: dir, rest: rest, guard: guardOf(dir, rest, name) == directive.No})
		case "elif", "elifdef", "elifndef":
			if len(conds) > 0 {
				f := &conds[len(conds)-1]
				f.elif, f.guard = true, false
			}
		case "else":
			if len(conds) > 0 {
				f := &conds[len(conds)-1]
				f.guard = !f.elif && guardOf(f.dir, f.rest, name) == directive.Yes // #ifdef NAME ... #else
			}
		case "endif":
			if len(conds) > 0 {
				conds = conds[:len(conds)-1]
			}
		case "define":
			d, fl := parseDefine(t.Text, len(t.Text)-len(rest), name)
			if fl {
				funcLike = append(funcLike, lines.line(t.Pos))
				continue
			}
			if d == nil {
				continue
			}
			d.Pos, d.End = t.Pos, t.End
			d.ValueStart += t.Pos
			d.ValueEnd += t.Pos
			d.Line = lines.line(t.Pos)
			d.Guarded = len(conds) > 0 && conds[len(conds)-1].guard
			found = append(found, d)
		}
	}
	switch {
	case len(funcLike) > 0:
		return nil, fmt.Errorf("#define %s (line %d): a function-like macro has no value to set", name, funcLike[0])
	case len(found) > 1:
		var ls []string
		for _, d := range found {
			ls = append(ls, fmt.Sprint(d.Line))
		}
		return nil, fmt.Errorf("%s is defined %d times (lines %s): which value holds depends on other macros or on the order, so no one #define can be patched", name, len(found), strings.Join(ls, ", "))
	case len(found) == 1:
		return found[0], nil
	case len(disabled) > 0:
		return nil, fmt.Errorf("%w %s: its #define (line %d) is in a branch the preprocessor skips (#if 0), so the compiler never sees it", ErrNoDefine, name, disabled[0])
	}
	return nil, fmt.Errorf("%w %s in the source", ErrNoDefine, name)
}

// Edit returns the edit that makes value the macro's value, keeping the
// rest of the directive (its comments, an #ifndef guard). When both the
// old value and value are integers, the old literal's suffix (4u, 128UL)
// and its parentheses are kept, so that the macro's type does not change.
func (d *Define) Edit(value string) edit.Edit {
	value = strings.TrimSpace(value)
	if value == d.Value {
		return edit.Edit{Start: d.ValueStart, End: d.ValueEnd, New: value} // no change
	}
	if d.glued {
		// No blank between the name and the value (#define N!, or an
		// empty body): one must come, or the value would lengthen the
		// name.
		return edit.Edit{Start: d.ValueStart, End: d.ValueEnd, New: " " + value}
	}
	if m := intLiteral.FindStringSubmatchIndex(d.Value); m != nil && plainInt.MatchString(value) {
		start, end := d.ValueStart+m[2], d.ValueStart+m[3] // the digits, prefix included
		suffix := d.Value[m[4]:m[5]]
		if suffix == "" || !strings.HasPrefix(value, "-") {
			return edit.Edit{Start: start, End: end, New: value}
		}
	}
	return edit.Edit{Start: d.ValueStart, End: d.ValueEnd, New: value}
}

// DefineEdit returns the edit of src that sets the macro name's #define to
// value (see FindDefine and Define.Edit).
func DefineEdit(src []byte, name, value string) (edit.Edit, error) {
	d, err := FindDefine(src, name)
	if err != nil {
		return edit.Edit{}, err
	}
	return d.Edit(value), nil
}

var (
	// intLiteral is an integer literal, with a suffix and in parentheses
	// or not: the digits are group 1 and the suffix group 2.
	intLiteral = regexp.MustCompile(`^\(*\s*((?:0[xX][0-9a-fA-F]+)|[0-9]+)([uUlL]*)\s*\)*$`)
	plainInt   = regexp.MustCompile(`^-?[0-9]+$`)
)

// guardOf says how the condition of the conditional directive dir (its
// text after the name is rest) follows name alone, whatever any other
// macro is: Yes when it holds exactly when name is defined (#ifdef NAME),
// No when it holds exactly when name is not (#ifndef NAME, #if
// !defined(NAME), #if !defined NAME and their like), Unknown otherwise.
func guardOf(dir, rest, name string) directive.Tri {
	with := func(defined directive.Tri) directive.Lookup {
		return func(n string) directive.Macro {
			if n == name {
				return directive.Macro{Defined: defined, Body: "1"}
			}
			return directive.Macro{}
		}
	}
	undef, def := directive.Cond(dir, rest, with(directive.No)), directive.Cond(dir, rest, with(directive.Yes))
	switch {
	case undef == directive.Yes && def == directive.No:
		return directive.No
	case undef == directive.No && def == directive.Yes:
		return directive.Yes
	}
	return directive.Unknown
}

// parseDefine parses the #define directive text, whose operand (the text
// after "define") starts at restAt. It returns the Define, with offsets in
// text, when the directive defines name as an object-like macro, and
// funcLike when it defines name as a function-like one.
func parseDefine(text string, restAt int, name string) (d *Define, funcLike bool) {
	def, msg := directive.ParseDefine(text[restAt:])
	if msg != "" || def.Name != name {
		return nil, false
	}
	if def.FuncLike {
		return nil, true
	}
	d = &Define{Name: name}
	// The value starts at the body (BodyOff), or, when it is empty or
	// cannot be placed, right after the name.
	vs := restAt + nameEnd(text[restAt:])
	ve := vs
	if def.Body != "" && def.BodyOff >= 0 {
		vs = restAt + def.BodyOff
		ve = valueEnd(text, vs)
	}
	if ve <= vs {
		vs = restAt + nameEnd(text[restAt:])
		ve = vs
	}
	d.ValueStart, d.ValueEnd, d.Value = vs, ve, text[vs:ve]
	d.glued = directive.Join(text[restAt+nameEnd(text[restAt:]):vs]) == ""
	return d, false
}

// nameEnd returns the offset in a #define's operand after the macro name.
func nameEnd(rest string) int {
	i := 0
	for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t' || directive.SpliceLen(rest, i) > 0) {
		i += max(1, directive.SpliceLen(rest, i))
	}
	for i < len(rest) && isIdentByte(rest[i]) {
		i++
	}
	return i
}

func isIdentByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// valueEnd returns the end of the last byte of s[i:] that is neither a
// blank, a splice nor in a comment: the end of a #define's value.
func valueEnd(s string, i int) int {
	last := i
	for i < len(s) {
		switch c := s[i]; {
		case c == '"' || c == '\'':
			i = directive.QuoteEnd(s, i)
			last = i
		case strings.HasPrefix(s[i:], "//"):
			return last
		case strings.HasPrefix(s[i:], "/*"):
			e, ok := directive.BlockCommentEnd(s, i)
			if !ok {
				return last
			}
			i = e
		case directive.SpliceLen(s, i) > 0:
			i += directive.SpliceLen(s, i)
		case c == '\\' && i+1 == len(s):
			i++ // a splice whose line break ends the directive's text
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			i++
		default:
			i++
			last = i
		}
	}
	return last
}

// skippedDefines returns the offsets in a skipped branch's text of the
// #define lines of name.
func skippedDefines(text, name string) []int {
	var out []int
	for _, sp := range directive.Scan(text) {
		dir, rest := directive.Split(text[sp.Pos:sp.End])
		if dir != "define" {
			continue
		}
		if def, msg := directive.ParseDefine(rest); msg == "" && def.Name == name {
			out = append(out, sp.Pos)
		}
	}
	return out
}

// lineIndex maps byte offsets to lines.
type lineIndex []int // offsets of line starts

func newLineIndex(src []byte) lineIndex {
	l := lineIndex{0}
	for i, c := range src {
		if c == '\n' {
			l = append(l, i+1)
		}
	}
	return l
}

func (l lineIndex) line(off int) int {
	lo, hi := 0, len(l)
	for lo+1 < hi {
		m := (lo + hi) / 2
		if l[m] <= off {
			lo = m
		} else {
			hi = m
		}
	}
	return lo + 1
}
