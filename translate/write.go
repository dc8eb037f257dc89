package translate

import (
	"bytes"
	"fmt"
	"strings"
)

// A writer writes a translation unit and keeps the compiler's idea of
// where each line comes from equal to the source's: before text from a
// source line it moves to that line with newlines when the line is a few
// lines ahead in the same file, and with a #line directive otherwise.
// Compiler errors and the checking mode's reports (through debug line
// tables) then name .metal lines.
type writer struct {
	b    bytes.Buffer
	file string // the file the compiler takes the current line to be from
	line int    // and its line
	bol  bool   // only blanks written on the current line
	last byte   // the last byte written
}

// maxGap is how many lines ahead sync moves with newlines rather than a
// #line directive.
const maxGap = 8

// sync prepares to write text from p and reports whether it started a new
// line. A zero p (text of no file) writes where the writer stands.
func (w *writer) sync(p Position) bool {
	if p.File == "" || p.File == w.file && p.Line == w.line {
		return false
	}
	if p.File == w.file && p.Line > w.line && p.Line-w.line <= maxGap {
		for w.line < p.Line {
			w.raw("\n")
		}
		return true
	}
	w.directive(p)
	return true
}

// directive writes a #line directive for p on a line of its own.
func (w *writer) directive(p Position) {
	if !w.bol {
		w.raw("\n")
	}
	fmt.Fprintf(&w.b, "#line %d %s\n", p.Line, cQuote(p.File))
	w.file, w.line, w.bol, w.last = p.File, p.Line, true, '\n'
}

// raw writes s, counting its lines.
func (w *writer) raw(s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\n':
			w.line++
			w.bol = true
		case ' ', '\t':
		default:
			w.bol = false
		}
	}
	if s != "" {
		w.last = s[len(s)-1]
	}
	w.b.WriteString(s)
}

// token writes the text of a token from p, preceded by the blanks
// (trivia) that preceded it in the preprocessed source: the indentation
// when the token starts a line here, a space when the source broke a line
// the output does not, the blanks themselves otherwise.
func (w *writer) token(p Position, trivia, text string) {
	if w.sync(p) {
		if i := strings.LastIndexByte(trivia, '\n'); i >= 0 {
			w.raw(strings.Trim(trivia[i+1:], "\r\n"))
		}
	} else if trivia != "" && !w.bol {
		if strings.ContainsAny(trivia, "\r\n") {
			w.raw(" ")
		} else {
			w.raw(trivia)
		}
	}
	if text == "" {
		return
	}
	if isWordByte(w.last) && isWordByte(text[0]) {
		w.raw(" ")
	}
	w.raw(text)
}

// line writes a preprocessor line (a #pragma) from p on a line of its own.
func (w *writer) pragma(p Position, text string) {
	if !w.bol {
		w.raw("\n")
	}
	w.sync(p)
	w.raw(text)
	w.raw("\n")
}

// generated writes text the translation made, on lines of its own, the
// first of them taken to be line p: compiler errors in it point at p.
func (w *writer) generated(p Position, text string) {
	if text == "" {
		return
	}
	if p.File != "" {
		if !w.bol || p.File != w.file || p.Line != w.line {
			w.directive(p)
		}
	} else if !w.bol {
		w.raw("\n")
	}
	w.raw(text)
	if !strings.HasSuffix(text, "\n") {
		w.raw("\n")
	}
}

// cQuote quotes a file name for a #line directive.
func cQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
