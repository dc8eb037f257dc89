package mutate

import (
	"strings"

	"metalab/msl"
)

// LineStart returns the offset of the first byte of the line holding off,
// and whether only spaces and tabs precede off on that line.
func LineStart(src []byte, off int) (start int, first bool) {
	i := off
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	if i == 0 || src[i-1] == '\n' {
		return i, true
	}
	for i > 0 && src[i-1] != '\n' {
		i--
	}
	return i, false
}

// LineEnd returns the offset just past the newline ending the line holding
// off (len(src) on the last line without one), and whether only spaces,
// tabs and a carriage return follow off on that line.
func LineEnd(src []byte, off int) (next int, last bool) {
	i := off
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r') {
		i++
	}
	last = i == len(src) || src[i] == '\n'
	for i < len(src) && src[i] != '\n' {
		i++
	}
	if i < len(src) {
		i++
	}
	return i, last
}

// EOL returns the line terminator used by the line holding off: "\r\n" if
// that line ends in one, else "\n".
func EOL(src []byte, off int) string {
	for i := off; i < len(src); i++ {
		if src[i] == '\n' {
			if i > 0 && src[i-1] == '\r' {
				return "\r\n"
			}
			return "\n"
		}
	}
	return "\n"
}

// Indent returns the indentation (the leading spaces and tabs) of the line
// holding off.
func Indent(src []byte, off int) string {
	start, _ := LineStart(src, off)
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// IndentUnit returns one level of indentation as the block b uses it: the
// indentation of its first statement's line beyond that of the line of
// its '{' ("    " when that cannot be told).
func IndentUnit(src []byte, b *msl.Block) string {
	outer := Indent(src, b.Lbrace)
	if len(b.Stmts) > 0 {
		p, _ := b.Stmts[0].Span()
		if _, first := LineStart(src, p); first {
			inner := Indent(src, p)
			if len(inner) > len(outer) && strings.HasPrefix(inner, outer) {
				return inner[len(outer):]
			}
		}
	}
	if strings.HasPrefix(outer, "\t") {
		return "\t"
	}
	return "    "
}

// Reindent returns text with add inserted after every line break, so that
// every line but the first moves one level deeper.
func Reindent(text, add string) string {
	return strings.ReplaceAll(text, "\n", "\n"+add)
}

// LineSpan returns the byte range of the whole lines holding [pos, end),
// line breaks included, and whether only blanks share those lines with
// [pos, end) (so the lines can be removed or moved as a unit). Comment
// lines directly above pos, with no blank line between, belong to it and
// are included when withComments is set.
func LineSpan(f *msl.File, pos, end int, withComments bool) (start, next int, whole bool) {
	src := f.Src
	start, first := LineStart(src, pos)
	next, last := LineEnd(src, end)
	if !last && lineCommentFollows(src, end) {
		last = true
	}
	whole = first && last
	if whole && withComments {
		for start > 0 {
			prevEnd := start - 1 // the '\n' ending the line above
			ps, _ := LineStart(src, prevEnd)
			for ps > 0 && src[ps-1] != '\n' {
				ps--
			}
			line := strings.TrimSpace(string(src[ps:prevEnd]))
			if !strings.HasPrefix(line, "//") {
				break
			}
			start = ps
		}
	}
	return start, next, whole
}

// lineCommentFollows reports whether only spaces and tabs separate off
// from a // comment.
func lineCommentFollows(src []byte, off int) bool {
	for off < len(src) && (src[off] == ' ' || src[off] == '\t') {
		off++
	}
	return off+1 < len(src) && src[off] == '/' && src[off+1] == '/'
}

// DeclPoint returns where declarations that must run just before loop (a
// for, while or do statement) go: the start of the loop's line, or of the
// line of the first pragma before it, and the indentation to use. It
// reports false with a reason when the loop is not a statement of a block
// (the body of an if or another loop without braces) or shares its line
// with code before it.
func DeclPoint(f *msl.File, parents map[msl.Stmt]msl.Stmt, loop msl.Stmt) (at int, indent string, why string) {
	if _, ok := parents[loop].(*msl.Block); !ok {
		return 0, "", "the loop is not a statement of a block (the body of a statement without braces)"
	}
	pos, _ := loop.Span()
	for _, pr := range LoopPragmas(loop) {
		if pr.Pos < pos {
			pos = pr.Pos
		}
	}
	start, first := LineStart(f.Src, pos)
	if !first {
		return 0, "", "other code precedes the loop on its line"
	}
	if start > 0 && start >= 2 && f.Src[start-1] == '\n' && (f.Src[start-2] == '\\' || start >= 3 && f.Src[start-2] == '\r' && f.Src[start-3] == '\\') {
		return 0, "", "the loop's line continues a backslash-continued line"
	}
	return start, Indent(f.Src, pos), ""
}

// LoopPragmas returns the pragmas recorded on a loop statement.
func LoopPragmas(loop msl.Stmt) []*msl.Pragma {
	switch l := loop.(type) {
	case *msl.For:
		return l.Pragmas
	case *msl.While:
		return l.Pragmas
	case *msl.Do:
		return l.Pragmas
	}
	return nil
}

// LoopPragma returns the first of pragmas that tells the compiler how to
// treat a loop (unroll, nounroll, clang loop ..., GCC unroll/ivdep), or
// nil. Other pragmas before a loop (diagnostics, messages) do not count.
func LoopPragma(pragmas []*msl.Pragma) *msl.Pragma {
	for _, pr := range pragmas {
		if IsLoopPragma(pr) {
			return pr
		}
	}
	return nil
}

// IsLoopPragma reports whether pr tells the compiler how to treat a loop.
func IsLoopPragma(pr *msl.Pragma) bool {
	w := strings.Fields(pr.Text)
	if len(w) == 0 {
		return false
	}
	first := w[0]
	if i := strings.IndexByte(first, '('); i >= 0 {
		first = first[:i] // unroll(4)
	}
	switch first {
	case "unroll", "nounroll", "unroll_and_jam", "nounroll_and_jam", "loop":
		return true
	case "clang", "GCC":
		return len(w) > 1 && (w[1] == "loop" || w[1] == "unroll" || w[1] == "ivdep")
	}
	return false
}

// HeaderEnd returns the end of a loop statement's header (after the `)` of
// a for or while, after `do`), the range a loop's site names.
func HeaderEnd(s msl.Stmt) int {
	switch l := s.(type) {
	case *msl.For:
		return l.Rparen + 1
	case *msl.While:
		return l.Cond.End + 1
	case *msl.Do:
		return l.Pos + len("do")
	}
	p, _ := s.Span()
	return p
}
