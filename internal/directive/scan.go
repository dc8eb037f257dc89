package directive

import (
	"bytes"
	"strings"
)

// LF returns src as a string with each lone carriage return (a classic Mac
// line break, CR without LF) made a line feed, as the C preprocessor reads
// them. The length and every offset stay the same. The other functions of
// this package take text so prepared: their line breaks are LF or CRLF.
func LF(src []byte) string {
	k := bytes.IndexByte(src, '\r')
	for k >= 0 && k+1 < len(src) && src[k+1] == '\n' {
		j := bytes.IndexByte(src[k+1:], '\r')
		if j < 0 {
			k = -1
			break
		}
		k += 1 + j
	}
	if k < 0 {
		return string(src)
	}
	b := []byte(string(src))
	for i := k; i < len(b); i++ {
		if b[i] == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			b[i] = '\n'
		}
	}
	return string(b)
}

// SpliceLen returns the length of the line splice (a backslash followed by
// a line break) at s[i], 2 or 3, or 0 when there is none.
func SpliceLen(s string, i int) int {
	if i >= len(s) || s[i] != '\\' {
		return 0
	}
	if i+1 < len(s) && s[i+1] == '\n' {
		return 2
	}
	if i+2 < len(s) && s[i+1] == '\r' && s[i+2] == '\n' {
		return 3
	}
	return 0
}

// Join removes the line splices of s, as the preprocessor's second phase
// does.
func Join(s string) string {
	k := strings.IndexByte(s, '\\')
	if k < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:k])
	for i := k; i < len(s); i++ {
		if n := SpliceLen(s, i); n > 0 {
			i += n - 1
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// SpliceAt returns the offset of the first line splice in s, or -1.
func SpliceAt(s string) int {
	for k := strings.IndexByte(s, '\\'); k >= 0; {
		if SpliceLen(s, k) > 0 {
			return k
		}
		n := strings.IndexByte(s[k+1:], '\\')
		if n < 0 {
			break
		}
		k += 1 + n
	}
	return -1
}

// LineCommentEnd returns the offset of the line break that ends the //
// comment starting at i (or len(s)); a splice continues the comment onto
// the next line.
func LineCommentEnd(s string, i int) int {
	for j := i + 2; ; {
		k := strings.IndexByte(s[j:], '\n')
		if k < 0 {
			return len(s)
		}
		e := j + k
		switch {
		case e > j && s[e-1] == '\\':
		case e > j+1 && s[e-1] == '\r' && s[e-2] == '\\':
		default:
			return e
		}
		j = e + 1
	}
}

// BlockCommentEnd returns the offset after the */ that closes the block
// comment starting at i, and false (with len(s)) when none does.
func BlockCommentEnd(s string, i int) (int, bool) {
	if k := strings.Index(s[i+2:], "*/"); k >= 0 && SpliceAt(s[i+2:i+2+k]) < 0 {
		return i + 2 + k + 2, true // the common case: no splice to look through
	}
	for j := i + 2; j < len(s); j++ {
		if s[j] != '*' {
			continue
		}
		k := j + 1
		for n := SpliceLen(s, k); n > 0; n = SpliceLen(s, k) {
			k += n
		}
		if k < len(s) && s[k] == '/' {
			return k + 1, true
		}
	}
	return len(s), false
}

// QuoteEnd returns the offset after the string or character literal whose
// opening quote is at q: after its closing quote, or at the line break
// that ends an unterminated one (or len(s)). Splices continue it.
func QuoteEnd(s string, q int) int {
	quote := s[q]
	for j := q + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if n := SpliceLen(s, j); n > 0 {
				j += n - 1
				continue
			}
			if j+1 < len(s) && s[j+1] != '\n' {
				j++
			}
		case quote:
			return j + 1
		case '\n':
			if j > q+1 && s[j-1] == '\r' {
				return j - 1
			}
			return j
		}
	}
	return len(s)
}

// End returns the end of the directive whose '#' is at i: end is after its
// last character but trailing blanks, next the offset of the line break
// that ends it (or len(s)). Splices continue a directive, and a block
// comment may span lines inside one; open is the offset of such a comment
// left unterminated, or -1.
func End(s string, i int) (end, next, open int) {
	n := len(s)
	j := i
	open = -1
loop:
	for j < n {
		switch c := s[j]; {
		case c == '\\' && SpliceLen(s, j) > 0:
			j += SpliceLen(s, j)
		case c == '\n':
			break loop
		case c == '/' && j+1 < n && s[j+1] == '*':
			e, ok := BlockCommentEnd(s, j)
			if !ok {
				open, j = j, e
				break loop
			}
			j = e
		case c == '/' && j+1 < n && s[j+1] == '/':
			j = LineCommentEnd(s, j)
		case c == '"' || c == '\'':
			j = QuoteEnd(s, j)
		default:
			j++
		}
	}
	end = j
	for end > i && isSpace(s[end-1]) {
		end--
	}
	return end, j, open
}

// A Span is one directive's bytes: Pos is its '#', End follows its last
// character but trailing blanks (continuations included), Next is the
// offset of the line break that ends it. Line is where its line begins:
// after the last line break outside comments before it, so that only
// blanks and comments stand between Line and Pos.
type Span struct{ Line, Pos, End, Next int }

// Scan returns the directives of s, in order, as the C preprocessor finds
// them: a '#' first on a line (after blanks and comments), outside
// comments and literals, with line splices honoured everywhere. Inactive
// #if branches are not told apart: every directive is returned.
func Scan(s string) []Span {
	var out []Span
	i := 0
	if strings.HasPrefix(s, "\xEF\xBB\xBF") {
		i = 3
	}
	for {
		d, ok := Next(s, i)
		if !ok {
			return out
		}
		out = append(out, d)
		i = d.Next
	}
}

// Next returns the first directive of s at or after offset i, which must
// begin a line (or s), as Scan finds it; false when there is none.
func Next(s string, i int) (Span, bool) {
	n := len(s)
	lineStart := true
	line := i
	for i < n {
		c := s[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			line = i
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '\\' && SpliceLen(s, i) > 0:
			i += SpliceLen(s, i)
		case c == '/' && i+1 < n && s[i+1] == '*':
			i, _ = BlockCommentEnd(s, i) // a comment is a blank: lineStart stays
		case c == '/' && i+1 < n && s[i+1] == '/':
			i = LineCommentEnd(s, i)
		case c == '#' && lineStart:
			end, next, _ := End(s, i)
			return Span{line, i, end, next}, true
		case c == '"' || c == '\'':
			lineStart = false
			i = QuoteEnd(s, i)
		case isIdentChar(c):
			lineStart = false
			j := i
			for j < n && isIdentChar(s[j]) {
				j++
			}
			if j < n && s[j] == '"' {
				if k, raw, _ := RawStringEnd(s, i, j); raw {
					j = k
				}
			}
			i = j
		default:
			lineStart = false
			i++
		}
	}
	return Span{}, false
}

// RawStringEnd returns the end of the raw string literal whose prefix
// (R, LR, uR, UR or u8R) is s[i:j] and whose opening quote is at j; raw is
// false for another prefix or a malformed delimiter, closed false for an
// unterminated literal, which runs to len(s).
func RawStringEnd(s string, i, j int) (end int, raw, closed bool) {
	switch s[i:j] {
	case "R", "LR", "uR", "UR", "u8R":
	default:
		return 0, false, false
	}
	k := j + 1
	for k < len(s) && k-j <= 17 && s[k] != '(' && !isSpace(s[k]) && s[k] != ')' && s[k] != '\\' {
		k++
	}
	if k >= len(s) || s[k] != '(' {
		return 0, false, false
	}
	closing := ")" + s[j+1:k] + "\""
	e := strings.Index(s[k+1:], closing)
	if e < 0 {
		return len(s), true, false
	}
	return k + 1 + e + len(closing), true, true
}

// Split splits the text of a directive (from its '#') into its name and
// the rest, a suffix of d: blanks, block comments and splices may stand
// between the '#' and the name (`# /* x */ include`). A null directive
// has the name "".
func Split(d string) (name, rest string) {
	j := 0
	for j < len(d) && (d[j] == ' ' || d[j] == '\t') {
		j++
	}
	if j < len(d) && d[j] == '#' {
		j++
	}
	for j < len(d) {
		switch {
		case d[j] == ' ' || d[j] == '\t':
			j++
			continue
		case SpliceLen(d, j) > 0:
			j += SpliceLen(d, j)
			continue
		case strings.HasPrefix(d[j:], "/*"):
			if k := strings.Index(d[j+2:], "*/"); k >= 0 {
				j += 2 + k + 2
				continue
			}
			return "", ""
		}
		break
	}
	k := j
	var b []byte // the name with splices inside it removed, when it has any
	for k < len(d) {
		if n := SpliceLen(d, k); n > 0 {
			if b == nil {
				b = []byte(d[j:k])
			}
			k += n
			continue
		}
		if !isIdentChar(d[k]) {
			break
		}
		if b != nil {
			b = append(b, d[k])
		}
		k++
	}
	if b != nil {
		return string(b), d[k:]
	}
	return d[j:k], d[k:]
}

// StripComments replaces the comments in a directive's text by a space (a
// line comment ends the text).
func StripComments(s string) string {
	if !strings.Contains(s, "/") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"' || s[i] == '\'':
			e := QuoteEnd(s, i)
			b.WriteString(s[i:e])
			i = e - 1
			continue
		case s[i] == '/' && i+1 < len(s) && s[i+1] == '/':
			return b.String()
		case s[i] == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			b.WriteByte(' ')
			i += 2 + j + 1
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Operand returns the operand text of a directive whose text after its
// name is rest: splices joined, comments dropped, blanks trimmed.
func Operand(rest string) string {
	return strings.TrimSpace(StripComments(Join(rest)))
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

// IsIdent reports whether s is exactly one identifier.
func IsIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}
