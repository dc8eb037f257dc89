package translate

import (
	"slices"
	"strings"

	"metalab/msl"
)

// instArgs returns the template arguments of the entry's instantiation,
// one per template parameter up to the last one it decides: those it
// writes, then those it leaves to deduction from its parameter list, as
// in `template [[host_name("x")]] [[kernel]] void f(device float* in,
// constant P<2>* p);` for template <typename T, int N> f(device T* in,
// constant P<N>* p) (MLX's naive_unfold_Nd). A parameter neither written
// nor deduced must have a default, and so must every one after it.
//
// Deduction matches each kernel parameter's type against the
// instantiation's, token by token, with the template parameters standing
// for the token sequences they bind: a declaration matches a
// specialisation when its function type is the specialisation's, so
// what one spelling binds is what C++ deduces. Top-level const and
// volatile, which a function type drops, are dropped first; a parameter
// bound twice must bind the same tokens both times, and the address
// spaces must agree. Anything else (another spelling of the same type, a
// count of parameters that differs) is an error, never a guess.
func (t *tr) instArgs() []string {
	g, in := t.entry, t.inst
	var args []string
	for _, a := range in.Args {
		args = append(args, t.exprText(a))
	}
	if len(in.Args) >= len(g.Template) {
		return args
	}
	fail := func(format string, a ...any) []string {
		t.errorf(in.Pos, "host_name %q instantiates %s without %s: "+format, append([]any{in.HostName, g.Name, strings.Join(g.Template[len(in.Args):], ", ")}, a...)...)
		return args
	}
	defaulted := func(from int) bool {
		for j := from; j < len(g.Template); j++ {
			if j >= len(g.TemplateDefaults) || g.TemplateDefaults[j] == "" {
				return false
			}
		}
		return true
	}
	params, ok := t.instParams(in)
	if !ok {
		if defaulted(len(in.Args)) {
			return args // decltype(f<float>) f<float>: the rest are defaults
		}
		return fail("it has no parameter list to deduce them from")
	}
	if len(params) != len(g.Params) {
		return fail("it has %d parameters, the kernel %d", len(params), len(g.Params))
	}
	bind := map[string][]string{}
	wild := map[string]bool{}
	for i, name := range g.Template {
		if i < len(in.Args) {
			toks, err := msl.Lex("", []byte(in.Args[i]))
			if err != nil {
				return fail("template argument %q: %v", in.Args[i], err)
			}
			bind[name] = texts(toks)
			continue
		}
		wild[name] = true
	}
	for i, p := range g.Params {
		q := params[i]
		if p.AddrSpace != q.AddrSpace {
			return fail("parameter %d is in another address space", i+1)
		}
		pt, err1 := typeTokens(p.Type)
		qt, err2 := typeTokens(q.Type)
		if err1 != nil || err2 != nil || !matchType(pt, qt, wild, bind) {
			return fail("parameter %d, %s, does not match %s", i+1, q.Type, p.Type)
		}
	}
	for i := len(in.Args); i < len(g.Template); i++ {
		name := g.Template[i]
		if b, ok := bind[name]; ok {
			args = append(args, t.exprText(strings.Join(b, " ")))
			continue
		}
		for j := i; j < len(g.Template); j++ {
			if _, ok := bind[g.Template[j]]; ok {
				// The default would have to be spelled in the
				// arguments, in terms of the others.
				return fail("its parameters decide %s but not %s before it", g.Template[j], name)
			}
			if j >= len(g.TemplateDefaults) || g.TemplateDefaults[j] == "" {
				return fail("its parameters do not decide %s, which has no default", g.Template[j])
			}
		}
		break
	}
	return args
}

// instParams parses the parameter list of instantiation in, or reports
// that it has none (the decltype form).
func (t *tr) instParams(in *msl.Instantiation) ([]*msl.Param, bool) {
	a, b := t.tokRange(in.Pos, in.End)
	for k := a; k < b; k++ {
		if t.toks[k].Kind == msl.Attribute {
			continue
		}
		if t.text(k) == "decltype" {
			return nil, false
		}
		if t.toks[k].Kind != msl.Ident || t.text(k) != in.Func {
			continue
		}
		lp := k + 1
		if lp < b && t.text(lp) == "<" {
			if m := t.matchAngle(lp); m > 0 {
				lp = m + 1
			}
		}
		if lp >= b || t.text(lp) != "(" {
			continue
		}
		rp := t.closing(lp)
		if rp < 0 || rp >= b {
			return nil, false
		}
		// msl parses the list as a declaration's, so the types are
		// spelled as the kernel's Param.Type is.
		decl := "void mtl_inst(" + string(t.pre.Text[t.toks[lp].End:t.toks[rp].Pos]) + ");"
		f, err := msl.Parse("", []byte(decl))
		if err != nil || f == nil || len(f.Funcs) != 1 {
			return nil, false
		}
		return f.Funcs[0].Params, true
	}
	return nil, false
}

func texts(toks []msl.Token) []string {
	out := make([]string, len(toks))
	for i, tk := range toks {
		out[i] = tk.Text
	}
	return out
}

// typeTokens lexes a parameter type and drops its top-level const and
// volatile: trailing ones after the last * or & at depth 0, or every one
// at depth 0 of a type that is no pointer or reference.
func typeTokens(s string) ([]string, error) {
	toks, err := msl.Lex("", []byte(s))
	if err != nil {
		return nil, err
	}
	ts := texts(toks)
	depth, indirect := 0, false
	for _, w := range ts {
		switch w {
		case "<", "(", "[":
			depth++
		case ">", ")", "]":
			depth--
		case ">>":
			depth -= 2
		case "*", "&", "&&":
			if depth == 0 {
				indirect = true
			}
		}
	}
	cv := func(w string) bool { return w == "const" || w == "volatile" }
	if indirect {
		for len(ts) > 0 && cv(ts[len(ts)-1]) {
			ts = ts[:len(ts)-1]
		}
		return ts, nil
	}
	var out []string
	depth = 0
	for _, w := range ts {
		switch w {
		case "<", "(", "[":
			depth++
		case ">", ")", "]":
			depth--
		case ">>":
			depth -= 2
		}
		if depth == 0 && cv(w) {
			continue
		}
		out = append(out, w)
	}
	return out, nil
}

// matchType matches type p, in which the names in wild stand for any
// balanced token sequence, against type a, extending bind; it reports
// whether they match. A name already in bind matches its tokens only.
func matchType(p, a []string, wild map[string]bool, bind map[string][]string) bool {
	if len(p) == 0 {
		return len(a) == 0
	}
	if b, ok := bind[p[0]]; ok {
		if len(a) < len(b) || !slices.Equal(a[:len(b)], b) {
			return false
		}
		return matchType(p[1:], a[len(b):], wild, bind)
	}
	if !wild[p[0]] {
		return len(a) > 0 && a[0] == p[0] && matchType(p[1:], a[1:], wild, bind)
	}
	for n := 1; n <= len(a); n++ {
		if !balanced(a[:n]) {
			continue
		}
		bind[p[0]] = a[:n]
		if matchType(p[1:], a[n:], wild, bind) {
			return true
		}
		delete(bind, p[0])
	}
	return false
}

// balanced reports whether ws opens and closes its brackets evenly, so it
// can be a template argument.
func balanced(ws []string) bool {
	depth := 0
	for _, w := range ws {
		switch w {
		case "<", "(", "[", "{":
			depth++
		case ">", ")", "]", "}":
			depth--
		case ">>":
			depth -= 2
		}
		if depth < 0 {
			return false
		}
	}
	return depth == 0
}
