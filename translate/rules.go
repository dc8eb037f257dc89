package translate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"metalab/backend"
	"metalab/internal/f16"
	"metalab/msl"
)

// This file holds the token-local rules every target shares: numeric
// literals, swizzles, function-constant values.

// swizzleReaders are the tokens that, following a swizzle, show it is only
// read: it is an operand or an argument, never assigned to.
var swizzleReaders = map[string]bool{
	",": true, ";": true, "+": true, "-": true, "*": true, "/": true, "%": true, "?": true, ":": true,
	"<": true, ">": true, "<=": true, ">=": true, "==": true, "!=": true, "&&": true, "||": true,
	"&": true, "|": true, "^": true, "<<": true, ">>": true, "}": true, "]": true, ")": true,
}

// swizzleWriters are the tokens that make the expression before them
// (or, for ++ and --, after them) a target of assignment.
var swizzleWriters = map[string]bool{
	"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "&=": true, "|=": true,
	"^=": true, "<<=": true, ">>=": true, "++": true, "--": true,
}

// valueLiteral is a C++ expression for a function-constant value.
func valueLiteral(v backend.Value) (string, string) {
	switch v.Type {
	case "bool":
		if v.Bits&0xff != 0 {
			return "true", ""
		}
		return "false", ""
	case "char", "short", "int", "long", "int8_t", "int16_t", "int32_t", "int64_t":
		size := map[string]int{"char": 8, "int8_t": 8, "short": 16, "int16_t": 16, "int": 32, "int32_t": 32, "long": 64, "int64_t": 64}[v.Type]
		x := int64(v.Bits << (64 - size))
		x >>= 64 - size
		if x == math.MinInt64 {
			return "(-9223372036854775807LL - 1)", ""
		}
		return strconv.FormatInt(x, 10) + "LL", ""
	case "uchar", "ushort", "uint", "ulong", "uint8_t", "uint16_t", "uint32_t", "uint64_t":
		size := map[string]int{"uchar": 8, "uint8_t": 8, "ushort": 16, "uint16_t": 16, "uint": 32, "uint32_t": 32, "ulong": 64, "uint64_t": 64}[v.Type]
		x := v.Bits
		if size < 64 {
			x &= 1<<size - 1
		}
		return strconv.FormatUint(x, 10) + "ULL", ""
	case "float":
		return floatLiteral(float64(math.Float32frombits(uint32(v.Bits)))), ""
	case "half":
		return "metal::half(" + floatLiteral(f16.ToFloat64(uint16(v.Bits))) + ")", ""
	}
	return "", fmt.Sprintf("unsupported value type %q", v.Type)
}

// floatLiteral is an exact C++ double literal for x (a hex float), or a
// builtin for infinities and NaN.
func floatLiteral(x float64) string {
	switch {
	case math.IsNaN(x):
		return "__builtin_nan(\"\")"
	case math.IsInf(x, 1):
		return "__builtin_inf()"
	case math.IsInf(x, -1):
		return "(-__builtin_inf())"
	}
	return strconv.FormatFloat(x, 'x', -1, 64)
}

// literal rewrites a numeric literal whose meaning differs between Metal
// and C++: an h/H suffix becomes metal::half(x), and an unsuffixed floating
// literal, which is a float in Metal (there is no double), gets an f suffix
// so it does not turn the arithmetic around it into double arithmetic.
func literal(tk msl.Token) (string, bool) {
	if tk.Kind != msl.Float && tk.Kind != msl.Int {
		return "", false
	}
	s := tk.Text
	if tk.Kind == msl.Float && s != "" {
		if c := s[len(s)-1]; c == '.' || ('0' <= c && c <= '9') {
			return s + "f", true
		}
	}
	if len(s) < 2 || strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return "", false
	}
	if last := s[len(s)-1]; last != 'h' && last != 'H' {
		return "", false
	}
	num := s[:len(s)-1]
	if !strings.ContainsAny(num, ".eE") {
		num += ".0"
	}
	return "metal::half(" + num + ")", true
}

// isSwizzle reports whether name is a vector swizzle of 1 to 4 components
// spelled all in xyzw or all in rgba.
func isSwizzle(name string) bool {
	if len(name) < 1 || len(name) > 4 {
		return false
	}
	return strings.Trim(name, "xyzw") == "" || strings.Trim(name, "rgba") == ""
}

// xyzw spells a swizzle with xyzw letters.
func xyzw(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch c {
		case 'r':
			b[i] = 'x'
		case 'g':
			b[i] = 'y'
		case 'b':
			b[i] = 'z'
		case 'a':
			b[i] = 'w'
		}
	}
	return string(b)
}

// swizzleOnlyRead reports whether the multi-component swizzle at ts[i] is
// certainly only read, so the translator may spell it as a plain vector
// value (v.mtl_rv_xy()) instead of the write-back proxy (v.xy()). A plain
// value is what Metal has: a user template deduces float2 from it, where
// the proxy would deduce a different type. Anything else (followed by a
// member access, an index, an assignment, the end of a macro body;
// preceded by ++ or --) keeps the proxy, which behaves the same when read.
func swizzleOnlyRead(ts []msl.Token, i int) bool {
	j := i + 1
	for j < len(ts) && ts[j].Text == ")" {
		j++
	}
	if j < len(ts) && swizzleWriters[ts[j].Text] {
		return false // (v.xy) = w, v.xy++, ...
	}
	if i+1 >= len(ts) || !swizzleReaders[ts[i+1].Text] {
		return false
	}
	// Walk back over the postfix expression the swizzle applies to
	// (a, a.b, a->b, a[i], f(x), (e)) and look at the token before it.
	k := i - 2 // the token before the "." or "->"
	for k >= 0 {
		switch t := ts[k].Text; {
		case t == ")" || t == "]":
			k = openingBracket(ts, k) - 1
			continue
		case ts[k].Kind == msl.Ident:
			k--
			if k >= 0 && (ts[k].Text == "." || ts[k].Text == "->") {
				k--
				continue
			}
		}
		break
	}
	return k < 0 || (ts[k].Text != "++" && ts[k].Text != "--")
}

// openingBracket returns the index of the "(" or "[" that the ")" or "]" at
// ts[k] closes, or -1 if there is none.
func openingBracket(ts []msl.Token, k int) int {
	depth := 0
	for ; k >= 0; k-- {
		switch ts[k].Text {
		case ")", "]":
			depth++
		case "(", "[":
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// constPointee reports whether a pointer or reference type points to const
// data: a const before the last '*' or '&' ("const float *", "float const&").
func constPointee(typ string) bool {
	cut := strings.LastIndexAny(typ, "*&")
	if cut < 0 {
		cut = len(typ)
	}
	for _, f := range strings.FieldsFunc(typ[:cut], func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if f == "const" {
			return true
		}
	}
	return false
}

// zeroToken reports whether tok may appear in a zero-fill initialiser.
func zeroToken(tok string) bool {
	switch tok {
	case "{", "}", ",", "false":
		return true
	}
	if tok == "" || !isDigit(tok[0]) && tok[0] != '.' {
		return false
	}
	body := strings.TrimRight(strings.ToLower(tok), "fhul")
	if strings.HasPrefix(body, "0x") {
		return strings.Trim(body[2:], "0") == ""
	}
	return strings.Trim(body, "0.") == ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
