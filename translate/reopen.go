package translate

import "metalab/msl"

// reopenMetal lets a source reopen namespace metal on a target that puts
// the source in a namespace of its own (the cuda target's metal::mtl_src,
// see Namespacer). There, the source's `namespace metal { ... }` (MLX's
// bf16_math.h adds its bfloat functions to metal) would declare
// metal::mtl_src::metal, a namespace of its own that hides Metal's: every
// later metal::half in the source then names nothing. So a file-scope
// `namespace metal {` leaves the source's namespace for metal itself, with
// a using-directive that keeps the source's names in view there (what the
// block refers to was declared in the source's namespace), and its
// closing brace goes back into the source's namespace, whose own
// using-directive of metal stands. On the cpu target the source is at
// global scope and its namespace metal is Metal's already.
func (t *tr) reopenMetal() {
	if _, ok := t.tgt.(Namespacer); !ok {
		return
	}
	var opens []bool // per open brace: a reopened namespace metal
	for k := 0; k < len(t.toks); k++ {
		tk := t.toks[k]
		if tk.Kind != msl.Punct && tk.Kind != msl.Ident || t.skip[k] {
			continue
		}
		switch tk.Text {
		case "{":
			opens = append(opens, false)
		case "}":
			if n := len(opens); n > 0 {
				if opens[n-1] {
					s := "namespace mtl_src {"
					t.rep[k] = &s
				}
				opens = opens[:n-1]
			}
		case "namespace":
			if len(opens) > 0 || t.text(k+1) != "metal" || t.text(k+2) != "{" {
				continue
			}
			s := "} using namespace ::metal::mtl_src;"
			t.rep[k] = &s
			t.skip[k+1] = true
			t.skip[k+2] = true
			opens = append(opens, true)
			k += 2
		}
	}
}

// specialiseMetal moves a file-scope specialisation of one of Metal's
// class templates (candle's `template <typename T> struct
// _numeric_limits_impl<indexed<T>> {...};`) into namespace metal on a
// Namespacer target: C++ admits a specialisation only in a namespace
// enclosing its template's, which metal::mtl_src is not. The source's
// names stay in view there through a using-directive. A template the
// source declares itself is specialised where it is; a type metal_stdlib
// declares (preludeNames) moves.
func (t *tr) specialiseMetal() {
	if _, ok := t.tgt.(Namespacer); !ok {
		return
	}
	own := map[string]bool{}
	for k := 0; k+1 < len(t.toks); k++ {
		if x := t.text(k); (x == "struct" || x == "class") && t.toks[k+1].Kind == msl.Ident && t.text(k+2) != "<" {
			own[t.text(k+1)] = true
		}
	}
	prelude := preludeNames()
	depth := 0
	for k := 0; k < len(t.toks); k++ {
		switch t.text(k) {
		case "{":
			depth++
			continue
		case "}":
			depth--
			continue
		case "template":
		default:
			continue
		}
		if depth != 0 || t.skip[k] || t.text(k+1) != "<" {
			continue
		}
		gt := t.matchAngle(k + 1)
		if gt < 0 || (t.text(gt+1) != "struct" && t.text(gt+1) != "class") || t.toks[gt+2].Kind != msl.Ident || t.text(gt+3) != "<" {
			continue
		}
		name := t.text(gt + 2)
		if own[name] || prelude[name]&nType == 0 {
			continue
		}
		open := -1
		for j := gt + 3; j < len(t.toks); j++ {
			if x := t.text(j); x == "{" {
				open = j
				break
			} else if x == ";" {
				break
			}
		}
		if open < 0 {
			continue
		}
		close, d := -1, 0
		for j := open; j < len(t.toks); j++ {
			switch t.text(j) {
			case "{":
				d++
			case "}":
				d--
			}
			if d == 0 {
				close = j
				break
			}
		}
		if close < 0 || t.text(close+1) != ";" {
			continue
		}
		t.prefix[k] += "} using namespace ::metal::mtl_src; "
		s := "; namespace mtl_src {"
		t.rep[close+1] = &s
		k = close + 1
	}
}
