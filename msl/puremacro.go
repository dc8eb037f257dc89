package msl

// IsPureMacro reports whether name is a function-like macro of the file
// or its headers that computes a value from its arguments and nothing
// else: every #define of it has a replacement made only of its
// parameters, literals, parentheses and operators other than assignments,
// increments and decrements, and calls of pure functions and of other
// such macros (ggml's MAX(x, y) ((x) > (y) ? (x) : (y))). A use of it is
// then a pure expression of its arguments, each of which may be evaluated
// once, several times or (through ?:) not at all.
func (f *File) IsPureMacro(name string) bool {
	if f.pureMacros == nil {
		f.pureMacros = map[string]bool{}
	}
	if v, ok := f.pureMacros[name]; ok {
		return v
	}
	f.pureMacros[name] = false // against recursive macros
	var ds []*Define
	for _, g := range append([]*File{f}, f.headers()...) {
		for _, d := range g.Defines {
			if d.Name == name && !d.undef {
				ds = append(ds, d)
			}
		}
	}
	v := len(ds) > 0
	for _, d := range ds {
		if !d.FuncLike || d.uncertain || !f.pureBody(d) {
			v = false
		}
	}
	f.pureMacros[name] = v
	return v
}

// pureBody reports whether macro d's replacement is a pure expression of
// its parameters (IsPureMacro).
func (f *File) pureBody(d *Define) bool {
	params := map[string]bool{}
	for _, p := range d.Params {
		params[p] = true
	}
	b := d.Body
	if len(b) == 0 {
		return false
	}
	isIdent := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9':
			j := i
			for j < len(b) && (isIdent(b[j]) || b[j] == '.') {
				j++
			}
			i = j
		case isIdent(c):
			j := i
			for j < len(b) && isIdent(b[j]) {
				j++
			}
			word := b[i:j]
			k := j
			for k < len(b) && (b[k] == ' ' || b[k] == '\t') {
				k++
			}
			called := k < len(b) && b[k] == '('
			switch {
			case params[word] && !called:
			case called && (pureBuiltins[word] || f.IsTypeName(word) || word != d.Name && f.IsPureMacro(word)):
			case !called && f.IsTypeName(word):
			default:
				return false
			}
			i = j
		default:
			if !pureOperator(b, &i) {
				return false
			}
		}
	}
	return true
}

// pureOperator steps over the operator or punctuation at b[*i] and
// reports whether it is one a pure expression may hold: no assignment,
// increment, decrement, statement, string, stringizing or pasting.
func pureOperator(b string, i *int) bool {
	c := b[*i]
	next := byte(0)
	if *i+1 < len(b) {
		next = b[*i+1]
	}
	switch c {
	case '(', ')', '?', ':', ',', '~':
		*i++
	case '^', '%', '*', '/':
		if next == '=' {
			return false
		}
		*i++
	case '&', '|':
		switch next {
		case '=':
			return false
		case c:
			*i += 2
		default:
			*i++
		}
	case '+', '-':
		if next == c || next == '=' {
			return false
		}
		*i++
	case '<', '>':
		j := *i + 1
		if next == c {
			j++ // << >>
			if j < len(b) && b[j] == '=' {
				return false
			}
		} else if next == '=' {
			j++ // <= >=
		}
		*i = j
	case '=', '!':
		if next == '=' {
			*i += 2
			return true
		}
		if c == '=' {
			return false
		}
		*i++
	default:
		return false
	}
	return true
}
