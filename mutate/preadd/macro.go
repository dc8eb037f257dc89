package preadd

import (
	"fmt"
	"strconv"
	"strings"

	"metalab/msl"
)

// This file types the macros a subscript uses (`#define K_TILE 128u`, then
// a[i + K_TILE]): msl types variables, literals and operators, not macro
// names. A macro is typed by its expansion where it is used, which must be
// an integer constant expression: integer literals, parentheses,
// arithmetic and bitwise operators and other such macros. Every macro the
// expansion reaches must have one meaning in the file and its headers (a
// single replacement text), so that the type is the same whichever
// #define an undecided #if keeps.

// maxMacroChain bounds the macros followed from one use.
const maxMacroChain = 32

// typeOf returns the type of the integer expression x as sc.TypeOf does,
// and where x uses macros, with each macro typed by its expansion; reason
// says why a macro's type cannot be known ("" when x is simply untyped).
func typeOf(sc *msl.Scope, x msl.Expr) (typ, reason string) {
	if t := sc.TypeOf(x); t != "" {
		return t, ""
	}
	switch x := x.(type) {
	case *msl.NameExpr:
		if sc.Lookup(x.Name, x.Pos) == nil {
			return macroType(sc.File, x.Name, x.Pos)
		}
	case *msl.ParenExpr:
		return typeOf(sc, x.X)
	case *msl.UnaryExpr:
		if x.Postfix || x.Op != "-" && x.Op != "+" && x.Op != "~" {
			return "", ""
		}
		t, r := typeOf(sc, x.X)
		if !msl.IsIntegerType(t) {
			return "", r
		}
		return msl.Promote(t), ""
	case *msl.BinaryExpr:
		switch x.Op {
		case "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>":
		default:
			return "", ""
		}
		a, ra := typeOf(sc, x.X)
		if ra != "" {
			return "", ra
		}
		b, rb := typeOf(sc, x.Y)
		if rb != "" {
			return "", rb
		}
		if !msl.IsIntegerType(a) || !msl.IsIntegerType(b) {
			return "", ""
		}
		if x.Op == "<<" || x.Op == ">>" {
			return msl.Promote(a), ""
		}
		return msl.ArithType(a, b), ""
	}
	return "", ""
}

// macroType types a use of the macro name at offset at of f: the type of
// its expansion there. It returns "" and no reason when name is not a
// macro there.
func macroType(f *msl.File, name string, at int) (typ, reason string) {
	if f.DefineAt(name, at) == nil && !hasCmdDefine(f, name) {
		return "", ""
	}
	if r := oneMeaning(f, name, at, map[string]bool{}); r != "" {
		return "", r
	}
	lookup := func(n string) *msl.Define {
		if d := f.DefineAt(n, at); d != nil {
			return d
		}
		if v, ok := f.CmdDefines[n]; ok {
			if v == "" {
				v = "1"
			}
			return &msl.Define{Name: n, Body: v}
		}
		return nil
	}
	text, ok := msl.ExpandMacros(name, lookup)
	if !ok || strings.TrimSpace(text) == "" {
		return "", fmt.Sprintf("macro %s does not expand to an expression", name)
	}
	mf, _ := msl.Parse("macro", []byte(text))
	x, err := mf.ParseExpr(0, len(text))
	if err != nil || x == nil {
		return "", fmt.Sprintf("macro %s expands to %q, not an expression", name, text)
	}
	if r := constantInt(x); r != "" {
		return "", fmt.Sprintf("macro %s expands to %q, %s", name, text, r)
	}
	t := msl.ScopeOf(mf, &msl.Func{}).TypeOf(x)
	if !msl.IsIntegerType(t) {
		return "", fmt.Sprintf("macro %s expands to %q, whose type is not a known integer type", name, text)
	}
	return t, ""
}

// constantInt returns why x is not an integer constant expression of
// literals and arithmetic, or "".
func constantInt(x msl.Expr) string {
	switch x := x.(type) {
	case *msl.LitExpr:
		switch x.Kind {
		case msl.Int:
			if unsureLiteral(x.Text) {
				return "a non-decimal literal above INT_MAX, which C++ may make unsigned"
			}
			return ""
		case msl.Float:
			return "a floating-point value"
		}
		return "not an integer"
	case *msl.ParenExpr:
		return constantInt(x.X)
	case *msl.UnaryExpr:
		if x.Postfix || x.Op != "-" && x.Op != "+" && x.Op != "~" {
			return "not a constant integer expression"
		}
		return constantInt(x.X)
	case *msl.BinaryExpr:
		switch x.Op {
		case "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>":
		default:
			return "not a constant integer expression"
		}
		if r := constantInt(x.X); r != "" {
			return r
		}
		return constantInt(x.Y)
	case *msl.NameExpr:
		return fmt.Sprintf("which uses %s, not a constant", x.Name)
	}
	return "not a constant integer expression"
}

// oneMeaning returns why the macro name, or one its replacement reaches,
// may mean different things at different points or under different #if
// decisions: several replacement texts in the file and its headers, a -D
// beside a #define, a function-like definition. It returns "" when each
// has one object-like meaning.
func oneMeaning(f *msl.File, name string, at int, seen map[string]bool) string {
	if seen[name] || len(seen) > maxMacroChain {
		return ""
	}
	seen[name] = true
	bodies := map[string]bool{}
	for _, g := range append([]*msl.File{f}, f.Headers()...) {
		for _, d := range g.Defines {
			if d.Name != name {
				continue
			}
			if d.FuncLike {
				return fmt.Sprintf("macro %s is function-like", name)
			}
			bodies[strings.Join(strings.Fields(d.Body), " ")] = true
		}
	}
	if v, ok := f.CmdDefines[name]; ok {
		if v == "" {
			v = "1"
		}
		bodies[strings.Join(strings.Fields(v), " ")] = true
	}
	if len(bodies) > 1 {
		return fmt.Sprintf("macro %s has %d different definitions", name, len(bodies))
	}
	for b := range bodies {
		for _, w := range strings.FieldsFunc(b, func(r rune) bool {
			return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			if w[0] >= '0' && w[0] <= '9' {
				continue
			}
			if f.DefineAt(w, at) != nil || hasCmdDefine(f, w) {
				if r := oneMeaning(f, w, at, seen); r != "" {
					return r
				}
			}
		}
	}
	return ""
}

// unsureLiteral reports whether the integer literal s is hexadecimal,
// octal or binary without a u suffix and above INT_MAX: C++ gives it the
// first of int, unsigned int, long, unsigned long that holds it, and msl
// types such literals as long.
func unsureLiteral(s string) bool {
	low := strings.ToLower(strings.ReplaceAll(s, "'", ""))
	digits := strings.TrimRight(low, "ul")
	if strings.Contains(low[len(digits):], "u") || len(digits) < 2 || digits[0] != '0' {
		return false
	}
	base, d := 8, digits[1:]
	switch digits[1] {
	case 'x':
		base, d = 16, digits[2:]
	case 'b':
		base, d = 2, digits[2:]
	}
	n, err := strconv.ParseUint(d, base, 64)
	return err != nil || n > 0x7fffffff
}

func hasCmdDefine(f *msl.File, name string) bool {
	_, ok := f.CmdDefines[name]
	return ok
}
