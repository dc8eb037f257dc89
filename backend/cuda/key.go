package cuda

import "bytes"

// keyText is the text of a TU that its object's cache key covers when the
// object carries no line tables: the TU with its #line directives removed
// and every run of blanks and line breaks outside literals, comments and
// preprocessor lines made one space (a preprocessor line stays a line of
// its own, its blanks likewise made one space). Two TUs with the same key
// text are the same tokens in the same lines of preprocessor directives:
// nvcc makes the same object of them but for line information, which an
// object built without -lineinfo or -G holds only in what nvcc prints.
// Translations of variants that differ only in comments, blank lines or
// indentation (ablation variants often do) then share one nvcc run. Blanks
// are never removed where there were some, nor added where there were
// none.
func keyText(tu []byte) []byte {
	out := make([]byte, 0, len(tu))
	bol := true      // at the start of a line, blanks aside
	inDir := false   // in a preprocessor line
	pending := false // blanks seen since the last token
	emit := func(b ...byte) {
		if pending {
			out = append(out, ' ')
			pending = false
		}
		out = append(out, b...)
	}
	for i := 0; i < len(tu); {
		c := tu[i]
		switch {
		case c == '\n':
			if inDir {
				out = append(out, '\n')
				inDir, pending = false, false
			} else if len(out) > 0 && out[len(out)-1] != '\n' {
				pending = true
			}
			bol = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			if len(out) > 0 && out[len(out)-1] != '\n' {
				pending = true
			}
			i++
			continue
		case bol && c == '#':
			end := bytes.IndexByte(tu[i:], '\n')
			if end < 0 {
				end = len(tu) - i
			}
			line := tu[i : i+end]
			if isLineDirective(line) {
				i += end
				continue
			}
			// A directive starts a line of its own.
			if len(out) > 0 && out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			pending = false
			inDir = true
			out = append(out, '#')
			bol = false
			i++
			continue
		}
		bol = false
		// Literals and comments are copied as they are; a quote after a
		// letter or digit is a digit separator (1'000).
		if c == '\'' && i > 0 && isAlnum(tu[i-1]) {
			emit(c)
			i++
			continue
		}
		if n := literalLen(tu[i:]); n > 0 {
			emit(tu[i : i+n]...)
			i += n
			continue
		}
		emit(c)
		i++
	}
	return out
}

// isLineDirective reports whether line (starting with '#') is a #line
// directive or a GCC line marker ("# 12 "file"").
func isLineDirective(line []byte) bool {
	rest := bytes.TrimLeft(line[1:], " \t")
	if bytes.HasPrefix(rest, []byte("line")) && (len(rest) == 4 || rest[4] == ' ' || rest[4] == '\t') {
		return true
	}
	return len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9'
}

// literalLen returns the length of the string or character literal, raw
// string literal or comment that s starts with, or 0.
func literalLen(s []byte) int {
	switch {
	case bytes.HasPrefix(s, []byte("//")):
		if n := bytes.IndexByte(s, '\n'); n >= 0 {
			return n
		}
		return len(s)
	case bytes.HasPrefix(s, []byte("/*")):
		if n := bytes.Index(s[2:], []byte("*/")); n >= 0 {
			return n + 4
		}
		return len(s)
	}
	// Encoding prefixes: u8, u, U, L, then R for a raw string.
	p := 0
	for _, pre := range []string{"u8", "u", "U", "L"} {
		if bytes.HasPrefix(s, []byte(pre)) {
			p = len(pre)
			break
		}
	}
	if p < len(s) && s[p] == 'R' && p+1 < len(s) && s[p+1] == '"' {
		open := bytes.IndexByte(s[p+2:], '(')
		if open < 0 {
			return 0
		}
		delim := s[p+2 : p+2+open]
		end := bytes.Index(s[p+2+open:], append(append([]byte(")"), delim...), '"'))
		if end < 0 {
			return len(s)
		}
		return p + 2 + open + end + len(delim) + 2
	}
	if p < len(s) && (s[p] == '"' || s[p] == '\'') {
		q := s[p]
		for i := p + 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case q:
				return i + 1
			case '\n':
				return i
			}
		}
		return len(s)
	}
	return 0
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
