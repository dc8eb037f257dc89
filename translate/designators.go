package translate

import (
	"strings"

	"metalab/msl"
)

// rangeDesignators lowers the array initialisers Metal takes from clang
// and C++ compilers refuse: GNU range designators and element designators
// of a local array, float S[NQ] = { [0 ... NQ-1] = 0.0f } (ggml's flash
// attention). g++ and nvcc have no designators for arrays in C++, so the
// declaration becomes value-initialised (every element zero, as the
// designators leave the others) and each designator an assignment loop
// after it, in source order (a later designator wins, as in the
// initialiser):
//
//	float S[NQ] = {}; for (int mtl_rd = 0; mtl_rd <= NQ-1; ++mtl_rd) S[mtl_rd] = 0.0f;
//
// Only a one-dimensional array declared as a statement of its own, not
// const, whose every designator's bounds and value are free of calls,
// assignments and increments (GNU evaluates a range's value once; a value
// with no effects may be evaluated for each element): anything else is
// left for the compiler to refuse. It runs after rewriteTokens, so the
// bounds and values are translated text.
func (t *tr) rangeDesignators() {
	ts := t.toks
	for i := 2; i+1 < len(ts); i++ {
		if t.skip[i] || ts[i].Text != "{" || t.text(i-1) != "=" || t.text(i+1) != "[" {
			continue
		}
		end := t.closing(i)
		if end < 0 || t.text(end+1) != ";" {
			continue
		}
		name, ok := t.arrayDeclarator(i - 1)
		if !ok {
			continue
		}
		loops, ok := t.designatorLoops(i+1, end, name)
		if !ok {
			continue
		}
		t.replace(i, end+1, "{}")
		semi := ";" + loops
		t.rep[end+1] = &semi
		i = end + 1
	}
}

// arrayDeclarator returns the name of the array declared by the tokens
// before eq, "T name [ dim ] =", when they are a statement of their own
// (after ";", "{", "}" or a label's ":") with no const, constexpr or
// constant among them.
func (t *tr) arrayDeclarator(eq int) (string, bool) {
	ts := t.toks
	if t.text(eq-1) != "]" {
		return "", false
	}
	lb := t.opening(eq - 1)
	if lb < 1 || ts[lb-1].Kind != msl.Ident || t.text(lb-2) == "]" {
		return "", false
	}
	for j := lb - 2; j >= 0; j-- {
		switch s := t.text(j); s {
		case ";", "{", "}", ":":
			return ts[lb-1].Text, j < lb-2
		case "const", "constexpr", "constant", "=", ",", "(", ")":
			return "", false
		}
	}
	return "", false
}

// designatorLoops makes the loops of the designators in tokens [a, end)
// ("[ lo ... hi ] = v", "[ k ] = v", separated by commas) for array name.
func (t *tr) designatorLoops(a, end int, name string) (string, bool) {
	var b strings.Builder
	for k := a; k < end; {
		if t.text(k) != "[" {
			return "", false
		}
		rb := t.closing(k)
		if rb < 0 || rb >= end || t.text(rb+1) != "=" {
			return "", false
		}
		dots := -1
		for j := k + 1; j < rb && dots < 0; j++ {
			switch t.text(j) {
			case "(", "[", "{":
				if j = t.closing(j); j < 0 || j >= rb {
					return "", false
				}
			case "...":
				dots = j
			}
		}
		// The value runs to the next top-level comma or the end.
		v, depth := rb+2, 0
		for ; v < end; v++ {
			s := t.text(v)
			if depth == 0 && s == "," {
				break
			}
			switch s {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
		}
		lo, hi := k+1, rb
		if dots >= 0 {
			hi = dots
		}
		if !t.effectFree(lo, hi) || !t.effectFree(rb+2, v) || dots >= 0 && !t.effectFree(dots+1, rb) || rb+2 == v {
			return "", false
		}
		val := t.outText(rb+2, v)
		if dots >= 0 {
			b.WriteString(" for (int mtl_rd = " + t.outText(lo, hi) + "; mtl_rd <= " + t.outText(dots+1, rb) + "; ++mtl_rd) " +
				name + "[mtl_rd] = " + val + ";")
		} else {
			b.WriteString(" " + name + "[" + t.outText(lo, hi) + "] = " + val + ";")
		}
		k = v
		if k < end && t.text(k) == "," {
			k++
		}
	}
	return b.String(), b.Len() > 0
}

// effectFree reports whether tokens [a, b) are an expression with no
// call, assignment, increment or decrement (a parenthesis after a name is
// a call) and not empty.
func (t *tr) effectFree(a, b int) bool {
	if a >= b {
		return false
	}
	for j := a; j < b; j++ {
		switch s := t.text(j); s {
		case "(":
			if j > a && t.toks[j-1].Kind == msl.Ident {
				return false
			}
		case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--", "{", "}", ";":
			return false
		}
	}
	return true
}
