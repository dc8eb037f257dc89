package translate

import (
	"fmt"
	"strings"

	"metalab/msl"
)

// puncts lists multi-byte punctuators, longest first, so lexing takes the
// longest match the way a C++ compiler does.
var puncts = []string{
	">>=", "<<=", "...", "->*",
	"::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*",
}

// lex splits src into tokens with the msl token kinds: directives and
// [[...]] attribute lists are single tokens, whitespace and backslash-newline
// continuations are trivia between tokens. It keeps its own scanner so the
// translator depends only on msl's token contract.
func lex(name string, src []byte) ([]msl.Token, error) {
	var toks []msl.Token
	s := string(src)
	i := 0
	lineStart := true // only whitespace since the last newline
	emit := func(k msl.Kind, pos, end int) {
		toks = append(toks, msl.Token{Kind: k, Pos: pos, End: end, Text: s[pos:end]})
	}
	errAt := func(off int, msg string) error {
		line, col := 1, 1
		for j := 0; j < off && j < len(s); j++ {
			if s[j] == '\n' {
				line++
				col = 1
			} else {
				col++
			}
		}
		return fmt.Errorf("%s:%d:%d: %s", name, line, col, msg)
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '\\' && i+1 < len(s) && (s[i+1] == '\n' || (s[i+1] == '\r' && i+2 < len(s) && s[i+2] == '\n')):
			i += 2
			if s[i-1] == '\r' {
				i++
			}
			continue
		}
		start := i
		switch {
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			emit(msl.Comment, start, i)
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return nil, errAt(start, "unterminated comment")
			}
			i += 2 + j + 2
			emit(msl.Comment, start, i)
		case c == '#' && lineStart:
			for i < len(s) && s[i] != '\n' {
				if s[i] == '\\' && i+1 < len(s) && s[i+1] == '\n' {
					i += 2
					continue
				}
				if s[i] == '/' && i+1 < len(s) && s[i+1] == '*' {
					j := strings.Index(s[i+2:], "*/")
					if j < 0 {
						return nil, errAt(i, "unterminated comment")
					}
					i += 2 + j + 2
					continue
				}
				i++
			}
			end := i
			for end > start && (s[end-1] == ' ' || s[end-1] == '\t' || s[end-1] == '\r') {
				end--
			}
			emit(msl.Directive, start, end)
			i = end
		case c == '[' && i+1 < len(s) && s[i+1] == '[':
			j := strings.Index(s[i+2:], "]]")
			if j < 0 {
				return nil, errAt(start, "unterminated attribute")
			}
			i += 2 + j + 2
			emit(msl.Attribute, start, i)
		case isIdentStart(c):
			for i < len(s) && isIdentChar(s[i]) {
				i++
			}
			emit(msl.Ident, start, i)
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
			kind := msl.Int
			hex := c == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X')
			for i < len(s) {
				d := s[i]
				if (d == 'e' || d == 'E') && !hex || d == 'p' || d == 'P' {
					kind = msl.Float
					i++
					if i < len(s) && (s[i] == '+' || s[i] == '-') {
						i++
					}
					continue
				}
				if d == '.' {
					kind = msl.Float
					i++
					continue
				}
				if isIdentChar(d) {
					i++
					continue
				}
				break
			}
			if !hex {
				last := s[i-1]
				if last == 'f' || last == 'F' || last == 'h' || last == 'H' {
					kind = msl.Float
				}
			}
			emit(kind, start, i)
		case c == '"' || c == '\'':
			i++
			for i < len(s) && s[i] != c {
				if s[i] == '\\' {
					i++
				}
				if i < len(s) && s[i] == '\n' {
					return nil, errAt(start, "unterminated literal")
				}
				i++
			}
			if i >= len(s) {
				return nil, errAt(start, "unterminated literal")
			}
			i++
			k := msl.String
			if c == '\'' {
				k = msl.Char
			}
			emit(k, start, i)
		default:
			n := 1
			for _, p := range puncts {
				if strings.HasPrefix(s[i:], p) {
					n = len(p)
					break
				}
			}
			i += n
			emit(msl.Punct, start, i)
		}
		lineStart = false
	}
	return toks, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
