package patches

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

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
	// Guarded says the #define is a default: it sits directly in the first
	// branch of #ifndef NAME or #if !defined(NAME), so that a -D of the
	// host overrides it.
	Guarded bool
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
	if !isIdent(name) {
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
	type frame struct{ guard string } // the macro an #ifndef's first branch is guarded by, or ""
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
		dir, rest, restAt := directive(t.Text)
		switch dir {
		case "if", "ifdef", "ifndef":
			conds = append(conds, frame{guard: guardOf(dir, rest)})
		case "elif", "elifdef", "elifndef", "else":
			if len(conds) > 0 {
				conds[len(conds)-1].guard = ""
			}
		case "endif":
			if len(conds) > 0 {
				conds = conds[:len(conds)-1]
			}
		case "define":
			d, fl := parseDefine(t.Text, restAt, name)
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
			d.Guarded = len(conds) > 0 && conds[len(conds)-1].guard == name
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
	if d.ValueStart == d.ValueEnd {
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

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func isIdentByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// directive splits a directive's text into its name and the text after
// it, with the offset of that text in the directive.
func directive(text string) (name, rest string, restAt int) {
	i := skipBlanks(text, 1) // after '#'
	j := i
	for j < len(text) && isIdentByte(text[j]) {
		j++
	}
	return text[i:j], text[j:], j
}

// skipBlanks skips spaces, tabs and backslash-newline continuations in s
// from i.
func skipBlanks(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v':
			i++
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i += 2
		case s[i] == '\\' && i+2 < len(s) && s[i+1] == '\r' && s[i+2] == '\n':
			i += 3
		case strings.HasPrefix(s[i:], "/*"):
			e := strings.Index(s[i+2:], "*/")
			if e < 0 {
				return len(s)
			}
			i += e + 4
		default:
			return i
		}
	}
	return i
}

// guardOf returns the macro whose absence guards the first branch of an
// #ifndef X or #if !defined(X) / #if !defined X, or "".
func guardOf(dir, rest string) string {
	r := strings.TrimSpace(stripLineComment(joinContinuations(rest)))
	switch dir {
	case "ifndef":
		if isIdent(r) {
			return r
		}
	case "if":
		if m := notDefined.FindStringSubmatch(r); m != nil {
			return m[1] + m[2] // defined(X) or defined X
		}
	}
	return ""
}

var notDefined = regexp.MustCompile(`^!\s*defined\s*(?:\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)|\s([A-Za-z_][A-Za-z0-9_]*))$`)

func joinContinuations(s string) string {
	s = strings.ReplaceAll(s, "\\\r\n", "")
	return strings.ReplaceAll(s, "\\\n", "")
}

func stripLineComment(s string) string {
	if i := strings.Index(s, "//"); i >= 0 {
		s = s[:i]
	}
	for {
		i := strings.Index(s, "/*")
		if i < 0 {
			return s
		}
		e := strings.Index(s[i+2:], "*/")
		if e < 0 {
			return s[:i]
		}
		s = s[:i] + " " + s[i+2+e+2:]
	}
}

// parseDefine parses the #define directive text, whose text after
// "define" starts at restAt. It returns the Define, with offsets in text,
// when the directive defines name as an object-like macro, and funcLike
// when it defines name as a function-like one.
func parseDefine(text string, restAt int, name string) (d *Define, funcLike bool) {
	i := skipBlanks(text, restAt)
	j := i
	for j < len(text) && isIdentByte(text[j]) {
		j++
	}
	if text[i:j] != name {
		return nil, false
	}
	if j < len(text) && text[j] == '(' {
		return nil, true
	}
	d = &Define{Name: name}
	vs := skipBlanks(text, j)
	ve := valueEnd(text, vs)
	if ve <= vs {
		vs, ve = j, j
	}
	d.ValueStart, d.ValueEnd, d.Value = vs, ve, text[vs:ve]
	return d, false
}

// valueEnd returns the end of the last byte of s[i:] that is neither a
// blank, a continuation nor in a comment.
func valueEnd(s string, i int) int {
	end := len(s)
	last := i
	for i < end {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < end && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = min(j+1, end)
			last = i
		case strings.HasPrefix(s[i:end], "//"):
			return last
		case strings.HasPrefix(s[i:end], "/*"):
			e := strings.Index(s[i+2:end], "*/")
			if e < 0 {
				return last
			}
			i += e + 4
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\':
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
	off := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		t := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(t, "#") {
			dir, rest, _ := directive(t)
			if dir == "define" {
				r := skipBlanks(rest, 0)
				k := r
				for k < len(rest) && isIdentByte(rest[k]) {
					k++
				}
				if rest[r:k] == name {
					out = append(out, off+len(line)-len(t))
				}
			}
		}
		off += len(line)
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
