package translate

import (
	"strings"

	"metalab/msl"
)

// anonScalars are the types a member of an anonymous struct may have in
// C++ as they are: the built-in scalars, whose values need no constructor.
var anonScalars = setOf(`bool char uchar short ushort int uint long ulong float double unsigned signed
	int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t size_t ptrdiff_t intptr_t uintptr_t`)

// anonMembers rewrites the member types of an anonymous struct inside an
// anonymous union, as ggml's block formats declare them:
//
//	union { struct { ggml_half d; ggml_half m; }; ggml_half2 dm; };
//
// Metal takes them as C11 does; C++ (GCC) refuses a member whose type has
// a constructor there, and the prelude's half, bfloat and vectors have
// them. Such a member becomes a metal::mtl_anon<T>: T's bytes, with no
// constructor, converting to T and assigned from T, so that the layout and
// the reads and writes through the member stay as they were.
func (t *tr) anonMembers() {
	for k := 0; k+1 < len(t.toks); k++ {
		if t.text(k) != "union" || t.text(k+1) != "{" {
			continue
		}
		u := t.closing(k + 1)
		if u < 0 {
			continue
		}
		for j := k + 2; j+1 < u; j++ {
			if t.text(j) != "struct" || t.text(j+1) != "{" {
				continue
			}
			s := t.closing(j + 1)
			if s < 0 || s >= u || t.text(s+1) != ";" {
				continue
			}
			t.wrapAnonMembers(j+2, s)
			j = s
		}
	}
}

// wrapAnonMembers wraps the types of the member declarations in tokens
// [a, b) (an anonymous struct's body) that are not scalars.
func (t *tr) wrapAnonMembers(a, b int) {
	start := a
	for i := a; i < b; i++ {
		switch t.text(i) {
		case "{", "(", "[":
			if c := t.closing(i); c > 0 {
				i = c
			}
			continue
		case ";":
		default:
			continue
		}
		d := start
		start = i + 1
		for d < i && t.toks[d].Kind == msl.Comment {
			d++
		}
		if d+1 >= i || t.toks[d].Kind != msl.Ident || t.toks[d+1].Kind != msl.Ident || t.rep[d] != nil {
			continue
		}
		if typ := t.text(d); !anonScalars[t.resolveAlias(typ)] && !cppKeywords[typ] && !metalKeywords[typ] {
			s := "metal::mtl_anon<" + typ + ">"
			t.rep[d] = &s
		}
	}
}

// resolveAlias follows typedef and using aliases of a one-word type name.
func (t *tr) resolveAlias(name string) string {
	for n := 0; n < 8; n++ {
		next, ok := t.f.Types[name]
		if !ok || next == name {
			break
		}
		name = next
	}
	return name
}

// memberSpecialisations turns an explicit specialisation of a member
// function template written inside its class into an overload:
//
//	struct FloorDivide {
//	  template <typename T> T operator()(T x, T y) thread { ... }
//	  template <> complex64_t operator()(complex64_t x, complex64_t y) thread { ... }
//	};
//
// Metal's compiler (clang) accepts the specialisation at class scope
// (C++17 DR 727); GCC does not. The non-template overload is chosen for
// the same calls, arguments of exactly its types, as the specialisation
// would be, and is called the same way (MLX's binary_ops.h).
func (t *tr) memberSpecialisations() {
	for k := 0; k+2 < len(t.toks); k++ {
		if t.text(k) != "template" || t.text(k+1) != "<" || t.text(k+2) != ">" || t.skip[k] {
			continue
		}
		if p := t.prevCode(k); p >= 0 && !strings.Contains(";{}:", t.text(p)) {
			continue
		}
		pos := t.toks[k].Pos
		if st := t.structAround(pos); st == nil || !strings.Contains(t.f.Text(st.Pos, pos), "{") || t.inBody(pos) {
			continue // not inside a class's braces (template <> struct S<int> {...} itself)
		}
		for j := k; j <= k+2; j++ {
			t.skip[j] = true
		}
	}
}

// prevCode returns the index of the last token before k that is not a
// comment, or -1.
func (t *tr) prevCode(k int) int {
	for j := k - 1; j >= 0; j-- {
		if t.toks[j].Kind != msl.Comment {
			return j
		}
	}
	return -1
}

// inBody reports whether offset pos lies inside a function's body.
func (t *tr) inBody(pos int) bool {
	for _, fn := range t.f.Funcs {
		if fn.Body != nil && fn.Body.Lbrace < pos && pos < fn.Body.Rbrace {
			return true
		}
	}
	return false
}
