package msl

import (
	"bytes"
	"fmt"
	"go/token"
	"strings"
	"unicode/utf8"

	"metalab/internal/directive"
)

// Lex splits src into tokens. Whitespace (and backslash-newline pairs outside
// directives) is trivia between tokens; everything else, including comments,
// directives and inactive #if branches, is a token, so the tokens and the
// gaps between them reproduce src byte for byte. Lex never fails outright:
// malformed input yields tokens plus a non-nil ErrorList.
func Lex(filename string, src []byte) ([]Token, error) {
	l := newLexer(filename, src, nil)
	l.run()
	return l.toks, l.errs.dedupe().Err()
}

// A lexer holds the state of one Lex call.
type lexer struct {
	str  string // the source; token texts are substrings of it
	file *token.File
	toks []Token
	errs ErrorList

	// Conditional compilation: a stack of open #if groups and the object-like
	// macros seen so far, to decide which branches are certainly inactive.
	conds   []*directive.Group
	defines map[string]*lexDefine
	quiet   bool // no errors; used to lex expression strings

	name        string    // the file's name, for resolving #include "..."
	inc         *includer // reads #include'd headers; nil: includes are recorded, not read
	owner       *File     // the file being lexed, which its headers fall back on
	incs        []*Include
	defs        []*Define // #define and #undef directives lexed, in order, for the parser
	warns       ErrorList // things a compiler would accept that the front end cannot see through
	baseLenient bool      // the whole file is inside an undecided branch of its includer
}

// A lexDefine is an object-like macro as far as #if evaluation trusts it.
type lexDefine struct {
	body      string
	certain   bool    // defined once outside undecided branches (or -D), or certainly #undef'd
	undefined bool    // with certain: #undef'd outside undecided branches, so not defined
	cmd       bool    // given on the command line (-D)
	def       *Define // the directive, nil for -D
}

func newLexer(filename string, src []byte, tf *token.File) *lexer {
	if tf == nil {
		tf = newTokenFile(filename, src)
	}
	// Metal source averages four to five bytes a token; a generous first
	// guess avoids regrowing (and rescanning) a large token slice.
	return &lexer{str: lfLines(src), file: tf, defines: map[string]*lexDefine{}, name: filename,
		toks: make([]Token, 0, len(src)/4+16)}
}

// lfLines returns src as a string with each lone carriage return made a
// line feed, as the C preprocessor reads them (directive.LF); offsets stay.
func lfLines(src []byte) string { return directive.LF(src) }

func newTokenFile(filename string, src []byte) *token.File {
	tf := token.NewFileSet().AddFile(filename, -1, len(src))
	tf.SetLines(lineStarts(src))
	return tf
}

// lineStarts returns the offsets at which src's lines start, the table
// token.File.SetLinesForContent builds, sized once rather than grown.
func lineStarts(src []byte) []int {
	if len(src) == 0 {
		return nil
	}
	lines := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
	for off := 0; ; {
		// A line ends at LF, CRLF or a lone CR.
		k := bytes.IndexAny(src[off:], "\r\n")
		if k < 0 {
			break
		}
		if src[off+k] == '\r' && off+k+1 < len(src) && src[off+k+1] == '\n' {
			k++
		}
		off += k + 1
		if off >= len(src) {
			break
		}
		lines = append(lines, off)
	}
	return lines
}

func (l *lexer) errorf(off int, format string, args ...any) {
	if l.quiet {
		return
	}
	l.errs.Add(l.file.Position(l.file.Pos(off)), fmt.Sprintf(format, args...))
}

// warnf records a warning at off.
func (l *lexer) warnf(off int, format string, args ...any) {
	if l.quiet {
		return
	}
	l.warns.Add(l.file.Position(l.file.Pos(off)), fmt.Sprintf(format, args...))
}

// lenient reports whether the lexer is inside a branch whose condition is
// unknown; such branches may hold text that is not Metal, so stray bytes are
// tolerated there.
func (l *lexer) lenient() bool {
	if l.quiet || l.baseLenient {
		return true
	}
	return directive.Region(l.conds) == directive.Unknown
}

func (l *lexer) emit(k Kind, pos, end int) {
	l.toks = append(l.toks, Token{Kind: k, Pos: pos, End: end, Text: l.str[pos:end]})
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (l *lexer) run() {
	src := l.str
	n := len(src)
	lineStart := true
	i := 0
	if strings.HasPrefix(src, "\xEF\xBB\xBF") {
		i = 3 // a UTF-8 byte order mark is trivia, as in clang
	}
	for i < n {
		c := src[i]
		if isSpace(c) {
			if c == '\n' {
				lineStart = true
			}
			i++
			continue
		}
		if k := directive.SpliceLen(src, i); k > 0 {
			i += k
			continue
		}
		if c == '#' && lineStart {
			i = l.directive(i)
			lineStart = true // a directive runs to the end of its line
			continue
		}
		if c == '/' && i+1 < n && src[i+1] == '*' {
			i = l.blockComment(i)
			continue // a block comment keeps lineStart
		}
		lineStart = false
		switch {
		case c == '/' && i+1 < n && src[i+1] == '/':
			j := directive.LineCommentEnd(src, i) // a splice continues the comment
			end := j
			if end > i && src[end-1] == '\r' {
				end--
			}
			l.emit(Comment, i, end)
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentChar(src[j]) {
				j++
			}
			if j < n && (src[j] == '"' || src[j] == '\'') {
				if k, ok := l.prefixedLiteral(i, j); ok {
					i = k
					continue
				}
			}
			l.emit(Ident, i, j)
			i = j
		case isDigit(c) || c == '.' && i+1 < n && isDigit(src[i+1]):
			i = l.number(i)
		case c == '"':
			i = l.quoted(i, i, '"', String)
		case c == '\'':
			i = l.quoted(i, i, '\'', Char)
		case c == '[' && i+1 < n && src[i+1] == '[':
			if j, ok := l.attribute(i); ok {
				l.emit(Attribute, i, j)
				i = j
			} else {
				l.emit(Punct, i, i+1)
				i++
			}
		default:
			if k := punctLen(src[i:]); k > 0 {
				l.emit(Punct, i, i+k)
				i += k
				continue
			}
			// A stray byte or non-ASCII character: keep it as a token so the
			// round trip holds, and report it.
			r, size := utf8.DecodeRuneInString(src[i:])
			if !l.lenient() {
				if r < utf8.RuneSelf && c >= ' ' && c < 0x7f {
					l.errorf(i, "invalid character %q", string(rune(c)))
				} else if r == utf8.RuneError && size <= 1 {
					l.errorf(i, "invalid byte 0x%02x", c)
				} else {
					l.errorf(i, "invalid character %U", r)
				}
			}
			l.emit(Punct, i, i+size)
			i += size
		}
	}
	for _, c := range l.conds {
		l.errorf(c.Pos, "unterminated #if")
	}
}

func (l *lexer) blockComment(i int) int {
	end, ok := directive.BlockCommentEnd(l.str, i)
	if !ok {
		l.errorf(i, "unterminated comment")
	}
	l.emit(Comment, i, end)
	return end
}

// prefixedLiteral lexes a string or character literal with an encoding
// prefix (L, u, U, u8) or a raw string (R"delim(...)delim") starting at i,
// whose prefix ends at j.
func (l *lexer) prefixedLiteral(i, j int) (int, bool) {
	prefix := l.str[i:j]
	q := l.str[j]
	switch prefix {
	case "L", "u", "U", "u8":
		if q == '"' {
			return l.quoted(i, j, '"', String), true
		}
		return l.quoted(i, j, '\'', Char), true
	case "R", "LR", "uR", "UR", "u8R":
		if q != '"' {
			return 0, false
		}
		end, raw, closed := directive.RawStringEnd(l.str, i, j)
		if !raw {
			return 0, false
		}
		if !closed {
			l.errorf(i, "unterminated raw string literal")
		}
		l.emit(String, i, end)
		return end, true
	}
	return 0, false
}

// quoted lexes a string or character literal starting at pos whose opening
// quote is at q.
func (l *lexer) quoted(pos, q int, quote byte, k Kind) int {
	src := l.str
	for j := q + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if n := directive.SpliceLen(src, j); n > 0 {
				j += n - 1 // a splice continues the literal
				continue
			}
			if j+1 < len(src) && src[j+1] != '\n' {
				j++
			}
		case quote:
			l.emit(k, pos, j+1)
			return j + 1
		case '\n':
			return l.unterminated(pos, q, j, k)
		}
	}
	return l.unterminated(pos, q, len(src), k)
}

func (l *lexer) unterminated(pos, q, end int, k Kind) int {
	if l.lenient() {
		// Prose in an undecided branch ("don't"): keep the quote alone.
		l.emit(Punct, pos, q+1)
		return q + 1
	}
	if k == String {
		l.errorf(pos, "unterminated string literal")
	} else {
		l.errorf(pos, "unterminated character literal")
	}
	if end > pos && l.str[end-1] == '\r' {
		end--
	}
	l.emit(k, pos, end)
	return end
}

// number lexes a numeric literal as a preprocessing number: digits, letters,
// dots, digit separators and exponent signs.
func (l *lexer) number(i int) int {
	src := l.str
	n := len(src)
	j := i
	hex := i+1 < n && src[i] == '0' && (src[i+1] == 'x' || src[i+1] == 'X')
	isFloat := false
	for j < n {
		c := src[j]
		switch {
		case isIdentChar(c):
			if (!hex && (c == 'e' || c == 'E')) || (hex && (c == 'p' || c == 'P')) {
				isFloat = true
				if j+1 < n && (src[j+1] == '+' || src[j+1] == '-') {
					j++
				}
			}
			j++
		case c == '.':
			isFloat = true
			j++
		case c == '\'' && j+1 < n && isIdentChar(src[j+1]) && j > i:
			j++
		default:
			goto done
		}
	}
done:
	if !hex && !isFloat {
		last := src[j-1]
		if last == 'f' || last == 'F' || last == 'h' || last == 'H' {
			isFloat = true
		}
	}
	if isFloat {
		l.emit(Float, i, j)
	} else {
		l.emit(Int, i, j)
	}
	return j
}

// attribute finds the end of a [[...]] attribute list starting at i. It
// reports false when the brackets are not an attribute (a lambda capture
// inside a subscript, say), so the caller lexes a plain '['.
func (l *lexer) attribute(i int) (int, bool) {
	src := l.str
	depth := 0
	for j := i + 2; j < len(src); j++ {
		switch src[j] {
		case '[', '(':
			depth++
		case ')':
			depth--
		case ']':
			if depth > 0 {
				depth--
				continue
			}
			if j+1 < len(src) && src[j+1] == ']' {
				return j + 2, true
			}
			return 0, false
		case '"', '\'':
			q := src[j]
			for j++; j < len(src) && src[j] != q && src[j] != '\n'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			if j >= len(src) || src[j] != q {
				return 0, false
			}
		case ';', '{', '}':
			return 0, false
		}
		if depth < 0 {
			return 0, false
		}
	}
	return 0, false
}

// punctLen returns the length of the longest operator or punctuator at the
// start of b, or 0: one of { } [ ] ( ) ; : , . ? ~ ! + - * / % ^ & | = < > #,
// the two-byte :: -> ++ -- << >> <= >= == != && || += -= *= /= %= &= |= ^=
// .* ## or the three-byte <<= >>= ->* ... <=>.
func punctLen(b string) int {
	var c1, c2 byte
	if len(b) > 1 {
		c1 = b[1]
	}
	if len(b) > 2 {
		c2 = b[2]
	}
	switch b[0] {
	case '{', '}', '[', ']', '(', ')', ';', ',', '?', '~':
	case ':':
		if c1 == ':' {
			return 2
		}
	case '.':
		if c1 == '.' && c2 == '.' {
			return 3
		}
		if c1 == '*' {
			return 2
		}
	case '<':
		if c1 == '<' && c2 == '=' || c1 == '=' && c2 == '>' {
			return 3
		}
		if c1 == '<' || c1 == '=' {
			return 2
		}
	case '>':
		if c1 == '>' && c2 == '=' {
			return 3
		}
		if c1 == '>' || c1 == '=' {
			return 2
		}
	case '-':
		if c1 == '>' && c2 == '*' {
			return 3
		}
		if c1 == '>' || c1 == '-' || c1 == '=' {
			return 2
		}
	case '+':
		if c1 == '+' || c1 == '=' {
			return 2
		}
	case '&':
		if c1 == '&' || c1 == '=' {
			return 2
		}
	case '|':
		if c1 == '|' || c1 == '=' {
			return 2
		}
	case '#':
		if c1 == '#' {
			return 2
		}
	case '*', '/', '%', '^', '!', '=':
		if c1 == '=' {
			return 2
		}
	default:
		return 0
	}
	return 1
}

// directive lexes a preprocessor line starting at the '#' at i, handles
// conditional compilation, and returns the offset after it.
func (l *lexer) directive(i int) int {
	end, next := l.lineEnd(i)
	l.emit(Directive, i, end)
	name, rest := directiveName(l.str[i:end])
	switch name {
	case "include", "include_next", "import":
		if !l.quiet {
			l.include(i, end, rest)
		}
	case "define":
		l.noteDefine(i, end, rest)
	case "undef":
		n := strings.TrimSpace(stripComments(joinLines(rest)))
		if directive.IsIdent(n) {
			l.defs = append(l.defs, &Define{Pos: i, End: end, Name: n, undef: true})
		}
		switch d := l.defines[n]; {
		case !l.lenient():
			l.define(n, &lexDefine{certain: true, undefined: true})
		case d != nil && d.certain && d.undefined:
			// Undefined either way.
		default:
			l.define(n, &lexDefine{})
		}
	case "if", "ifdef", "ifndef":
		g := &directive.Group{Pos: i}
		l.conds = append(l.conds, g)
		g.Enter(l.condValue(name, rest, next))
		return l.enterBranch(g, next)
	case "elif", "elifdef", "elifndef":
		if len(l.conds) == 0 {
			l.errorf(i, "#%s without #if", name)
			return next
		}
		g := l.conds[len(l.conds)-1]
		g.Elif(func() directive.Tri { return l.condValue(name, rest, next) })
		return l.enterBranch(g, next)
	case "else":
		if len(l.conds) == 0 {
			l.errorf(i, "#else without #if")
			return next
		}
		g := l.conds[len(l.conds)-1]
		g.Else()
		return l.enterBranch(g, next)
	case "endif":
		if len(l.conds) == 0 {
			l.errorf(i, "#endif without #if")
			return next
		}
		l.conds = l.conds[:len(l.conds)-1]
	}
	return next
}

// lineEnd returns the end of the directive starting at i (trailing blanks
// excluded) and the offset of the line break after it (directive.End).
func (l *lexer) lineEnd(i int) (end, next int) {
	end, next, open := directive.End(l.str, i)
	if open >= 0 {
		l.errorf(open, "unterminated comment")
	}
	return end, next
}

// directiveName splits a directive into its name and the rest of its text
// (directive.Split).
func directiveName(d string) (name, rest string) { return directive.Split(d) }

// joinLines removes backslash-newline pairs from a directive's text.
func joinLines(s string) string { return directive.Join(s) }

func (l *lexer) noteDefine(pos, end int, rest string) {
	def, msg := parseDefine(l.str, pos, end, rest)
	if def == nil {
		if msg != "" {
			l.errorf(pos, "%s", msg)
		}
		return
	}
	name := def.Name
	body := ""
	if def.FuncLike {
		body = "\x00" // function-like: never used by #if evaluation
	} else {
		body = strings.TrimSpace(stripComments(def.Body))
	}
	certain := !l.lenient()
	def.uncertain = !certain
	l.defs = append(l.defs, def)
	if old := l.defines[name]; old != nil && !(old.certain && old.undefined) {
		switch {
		case old.cmd && certain:
			// The file's own #define wins over -D from here on, as with
			// clang, which warns that the macro is redefined.
			if old.body != body {
				l.warnf(pos, "%s is defined here: the file's #define wins over -D %s=%s from here on, as with the compiler", name, name, old.body)
			}
		default:
			// A redefinition; one after a certain #undef is a fresh definition.
			certain = false
		}
	}
	l.define(name, &lexDefine{body: body, certain: certain, def: def})
}

// parseDefine parses the #define directive src[pos:end], whose text after
// the directive name is rest (directive.ParseDefine). It returns nil and a
// message for a malformed one ("" when there is nothing to report).
func parseDefine(src string, pos, end int, rest string) (*Define, string) {
	d, msg := directive.ParseDefine(rest)
	if msg != "" {
		return nil, msg
	}
	def := &Define{Pos: pos, End: end, Name: d.Name, FuncLike: d.FuncLike, Params: d.Params, Body: d.Body}
	if d.BodyOff >= 0 && len(rest) <= end-pos {
		def.bodyPos = end - len(rest) + d.BodyOff
	}
	return def, ""
}

// define records a macro, making the table on first use: expression lexers
// start without one, as expressions rarely hold directives.
func (l *lexer) define(name string, d *lexDefine) {
	if l.defines == nil {
		l.defines = map[string]*lexDefine{}
	}
	l.defines[name] = d
}

// stripComments drops comments from a directive's text for evaluation.
func stripComments(s string) string { return directive.StripComments(s) }

// condValue decides an #if/#ifdef/#ifndef/#elif condition as far as the
// object-like macros seen so far allow (directive.Cond): a name the lexer
// has not seen, or saw defined in an undecided branch, is unknown.
func (l *lexer) condValue(name, rest string, next int) directive.Tri {
	if name == "ifndef" {
		if n := directive.Operand(rest); l.defines[n] == nil && l.guardFollows(n, next) {
			return directive.Yes // include guard
		}
	}
	return directive.Cond(name, rest, l.macro)
}

// macro says what the lexer knows of a name here: a directive.Lookup.
func (l *lexer) macro(name string) directive.Macro {
	d := l.defines[name]
	switch {
	case d == nil || !d.certain:
		return directive.Macro{}
	case d.undefined:
		return directive.Macro{Defined: directive.No}
	case d.body == "\x00":
		return directive.Macro{Defined: directive.Yes, FuncLike: true}
	}
	return directive.Macro{Defined: directive.Yes, Body: d.body}
}

// guardFollows reports whether the directive after offset next is
// "#define name", the shape of an include guard.
func (l *lexer) guardFollows(name string, next int) bool {
	j := next
	for j < len(l.str) && isSpace(l.str[j]) {
		j++
	}
	if j >= len(l.str) || l.str[j] != '#' {
		return false
	}
	end, _ := l.lineEnd(j)
	dn, rest := directiveName(l.str[j:end])
	if dn != "define" {
		return false
	}
	r := strings.TrimLeft(rest, " \t")
	k := 0
	for k < len(r) && isIdentChar(r[k]) {
		k++
	}
	return r[:k] == name
}

// enterBranch goes on after the directive that started g's current
// branch; an inactive branch is consumed as one Skipped token.
func (l *lexer) enterBranch(g *directive.Group, next int) int {
	if g.Branch == directive.No {
		return l.skipBranch(next)
	}
	return next
}

// skipBranch consumes lines from next up to the #elif/#else/#endif that ends
// the current branch, emitting them as one Skipped token. The directives
// of the skipped text are found as directive.Scan finds them: a '#' in a
// comment or a literal starts none.
func (l *lexer) skipBranch(next int) int {
	depth := 0
	for i := next; ; {
		d, ok := directive.Next(l.str, i)
		if !ok {
			break
		}
		name, _ := directive.Split(l.str[d.Pos:d.End])
		switch name {
		case "if", "ifdef", "ifndef":
			depth++
		case "elif", "elifdef", "elifndef", "else", "endif":
			if depth == 0 {
				l.emitSkipped(next, d.Line)
				return d.Line
			}
			if name == "endif" {
				depth--
			}
		}
		i = d.Next
	}
	l.emitSkipped(next, len(l.str))
	return len(l.str)
}

func (l *lexer) emitSkipped(pos, end int) {
	for pos < end && isSpace(l.str[pos]) {
		pos++
	}
	for end > pos && isSpace(l.str[end-1]) {
		end--
	}
	if end > pos {
		l.emit(Skipped, pos, end)
	}
}
