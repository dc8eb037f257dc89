package msl

import (
	"strings"
)

// scalarSizes are the sizes (and alignments) of Metal scalar types.
var scalarSizes = map[string]int64{
	"bool": 1, "char": 1, "uchar": 1, "int8_t": 1, "uint8_t": 1,
	"short": 2, "ushort": 2, "half": 2, "bfloat": 2, "int16_t": 2, "uint16_t": 2,
	"int": 4, "uint": 4, "float": 4, "int32_t": 4, "uint32_t": 4, "unsigned": 4,
	"long": 8, "ulong": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8, "ptrdiff_t": 8,
	"atomic_int": 4, "atomic_uint": 4, "atomic_float": 4, "atomic_bool": 1,
	"unsigned int": 4, "unsigned char": 1, "unsigned short": 2, "unsigned long": 8,
	"signed char": 1, "long long": 8, "unsigned long long": 8,
}

// Layout returns the size and alignment in bytes of a Metal type: scalars,
// vectors (a 3-vector is laid out like a 4-vector), packed vectors, matrices,
// atomics, pointers, arrays, metal::array, typedefs and the file's
// non-template structs. ok is false for anything else (simdgroup matrices,
// unbound template parameters, ...).
func (e *Env) Layout(typ string) (size, align int64, ok bool) {
	return e.withBudget().layout(typ, 0)
}

func (e *Env) layout(typ string, depth int) (size, align int64, ok bool) {
	if depth > maxDepth || !e.spend() {
		return 0, 0, false
	}
	typ = normType(typ)
	if typ == "" {
		return 0, 0, false
	}
	if a, ok := e.TemplateArgs[typ]; ok {
		return e.layout(a, depth+1)
	}
	if s, ok := scalarSizes[typ]; ok {
		return s, s, true
	}
	// Pointers and references.
	if strings.HasSuffix(typ, "*") {
		return 8, 8, true
	}
	// Arrays: T[N].
	if strings.HasSuffix(typ, "]") {
		i := matchingOpen(typ, len(typ)-1, '[', ']')
		if i <= 0 {
			return 0, 0, false
		}
		n, ok := e.Eval(typ[i+1 : len(typ)-1])
		if !ok || n < 0 {
			return 0, 0, false
		}
		s, a, ok := e.layout(typ[:i], depth+1)
		return s * n, a, ok
	}
	// Templates: vec<T,N>, packed_vec<T,N>, array<T,N>, atomic<T>.
	if strings.HasSuffix(typ, ">") {
		i := strings.IndexByte(typ, '<')
		if i <= 0 {
			return 0, 0, false
		}
		name := typ[:i]
		args := splitTop(typ[i+1:len(typ)-1], ',')
		switch {
		case name == "atomic" && len(args) == 1:
			return e.layout(args[0], depth+1)
		case (name == "vec" || name == "packed_vec" || name == "array") && len(args) == 2:
			n, ok := e.Eval(args[1])
			if !ok || n < 1 {
				return 0, 0, false
			}
			s, a, ok := e.layout(args[0], depth+1)
			if !ok {
				return 0, 0, false
			}
			switch name {
			case "vec":
				return vecLayout(s, n)
			case "packed_vec":
				return s * n, a, true
			}
			return s * n, a, true
		}
		// A template struct: MD<float>.
		if st, targs := e.structInst(typ, depth+1); st != nil {
			return e.structLayoutArgs(st, targs, depth+1)
		}
		return 0, 0, false
	}
	// Vectors and matrices: float4, packed_half3, float4x4.
	if s, a, ok := vectorLayout(typ); ok {
		return s, a, true
	}
	if e.Func != nil {
		if t, ok := e.Func.Types[typ]; ok {
			return e.layout(t, depth+1)
		}
	}
	if e.File != nil {
		if t, ok := e.File.typeAlias(typ); ok {
			return e.layout(t, depth+1)
		}
		if i := strings.LastIndex(typ, "::"); i > 0 {
			// A member type of a struct, dependent or not:
			// typename K::acc_type, MD<float>::type.
			if st, targs := e.structInst(typ[:i], depth+1); st != nil {
				if t, ok := st.Types[typ[i+2:]]; ok {
					sub := e.inStruct(st, targs)
					return sub.layout(t, depth+1)
				}
				if inner := e.File.structExactly(typ[i+2:]); inner != nil {
					return e.structLayout(inner, depth+1)
				}
				return 0, 0, false
			}
		}
		if st := e.File.structNamed(typ); st != nil {
			return e.structLayout(st, depth+1)
		}
	}
	return 0, 0, false
}

// inStruct returns an Env for names inside struct st instantiated with
// targs: its template parameters bound, no function's locals.
func (e *Env) inStruct(st *Struct, targs map[string]string) *Env {
	sub := *e
	sub.Func = nil
	sub.At = 0
	sub.File = e.File
	sub.TemplateArgs = targs
	sub.st = st
	return &sub
}

// structInst resolves a type naming a struct to the struct and its
// template arguments (bound from the type's arguments, then from the
// template's defaults): a struct's name, a template instance MD<float>,
// or a template parameter or alias that names one (K bound to
// Kern<float, 4>; using gemm = GEMM<T, 32>). It returns nil for anything
// else.
func (e *Env) structInst(typ string, depth int) (*Struct, map[string]string) {
	if e.File == nil || depth > maxDepth {
		return nil, nil
	}
	for n := 0; n < 8; n++ {
		typ = normType(typ)
		if a, ok := e.TemplateArgs[typ]; ok && a != typ {
			typ = a
			continue
		}
		if e.Func != nil {
			if a, ok := e.Func.Types[typ]; ok && a != typ {
				typ = substitute(a, e.TemplateArgs)
				continue
			}
		}
		if a, ok := e.File.typeAlias(typ); ok && a != typ {
			typ = a
			continue
		}
		break
	}
	name := typ
	var args []string
	if strings.HasSuffix(typ, ">") {
		i := strings.IndexByte(typ, '<')
		if i <= 0 {
			return nil, nil
		}
		name = strings.TrimSpace(typ[:i])
		if inner := strings.TrimSpace(typ[i+1 : len(typ)-1]); inner != "" {
			args = splitTop(inner, ',')
		}
	}
	st := e.File.structNamed(name)
	if st == nil {
		return nil, nil
	}
	targs := map[string]string{}
	for i, p := range st.Template {
		switch {
		case i < len(args):
			targs[p] = substitute(args[i], e.TemplateArgs)
		case i < len(st.TemplateDefaults) && st.TemplateDefaults[i] != "":
			targs[p] = substitute(st.TemplateDefaults[i], targs)
		}
	}
	return st, targs
}

// normType strips qualifiers and namespaces that do not affect layout.
func normType(typ string) string {
	typ = strings.TrimSpace(typ)
	for {
		t := typ
		for _, p := range []string{"const ", "volatile ", "typename ", "struct ", "metal::", "::"} {
			typ = strings.TrimPrefix(typ, p)
		}
		typ = strings.TrimSuffix(typ, " const")
		typ = strings.TrimSpace(typ)
		if t == typ {
			break
		}
	}
	if strings.Contains(typ, " <") || strings.Contains(typ, "< ") || strings.Contains(typ, ", ") {
		typ = collapseSpaces(typ)
	}
	return typ
}

// collapseSpaces removes spaces next to punctuation.
func collapseSpaces(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			var prev, next byte
			if b.Len() > 0 {
				prev = b.String()[b.Len()-1]
			}
			if i+1 < len(s) {
				next = s[i+1]
			}
			if isIdentChar(prev) && isIdentChar(next) {
				b.WriteByte(' ')
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func matchingOpen(s string, close int, open, closeB byte) int {
	depth := 0
	for i := close; i >= 0; i-- {
		switch s[i] {
		case closeB:
			depth++
		case open:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTop splits s at sep outside brackets.
func splitTop(s string, sep byte) []string {
	var out []string
	depth := 0
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '<', '{':
			depth++
		case ')', ']', '>', '}':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// vecLayout lays out an n-vector of a scalar of size s.
func vecLayout(s, n int64) (int64, int64, bool) {
	switch n {
	case 2:
		return 2 * s, 2 * s, true
	case 3, 4:
		return 4 * s, 4 * s, true
	}
	return 0, 0, false
}

// vectorLayout lays out vector, packed vector and matrix type names.
func vectorLayout(typ string) (int64, int64, bool) {
	packed := strings.HasPrefix(typ, "packed_")
	t := strings.TrimPrefix(typ, "packed_")
	i := len(t)
	for i > 0 && (isDigit(t[i-1]) || t[i-1] == 'x') {
		i--
	}
	base, dims := t[:i], t[i:]
	s, ok := scalarSizes[base]
	if !ok || dims == "" || strings.HasPrefix(base, "atomic") {
		return 0, 0, false
	}
	if len(dims) == 1 {
		n := int64(dims[0] - '0')
		if n < 2 || n > 4 {
			return 0, 0, false
		}
		if packed {
			return s * n, s, true
		}
		return vecLayout(s, n)
	}
	if len(dims) == 3 && dims[1] == 'x' && !packed && (base == "float" || base == "half") {
		c, r := int64(dims[0]-'0'), int64(dims[2]-'0')
		if c < 2 || c > 4 || r < 2 || r > 4 {
			return 0, 0, false
		}
		vs, va, _ := vecLayout(s, r)
		return c * vs, va, true
	}
	return 0, 0, false
}

// structLayout lays out a struct like C: each field at its alignment, the
// size rounded up to the largest alignment. Template structs are unknown.
func (e *Env) structLayout(st *Struct, depth int) (int64, int64, bool) {
	if st.Template != nil {
		return 0, 0, false
	}
	return e.structLayoutArgs(st, nil, depth)
}

// structLayoutArgs lays out struct st with its template parameters bound
// to targs.
func (e *Env) structLayoutArgs(st *Struct, targs map[string]string, depth int) (int64, int64, bool) {
	for _, p := range st.Template {
		if targs[p] == "" {
			return 0, 0, false
		}
	}
	if st.Template != nil {
		e = e.inStruct(st, targs)
	}
	var off, maxAlign int64 = 0, 1
	for _, d := range st.Fields {
		if hasQual(d, "static") || hasQual(d, "constexpr") || hasQual(d, "typedef") {
			continue
		}
		s, a, ok := e.layout(d.Type, depth+1)
		if !ok || a <= 0 {
			return 0, 0, false
		}
		for _, n := range d.Names {
			size := s
			for _, dim := range n.Dims {
				v, ok := e.Eval(e.File.structOwner(st).text(dim.Pos, dim.End))
				if !ok || v < 0 {
					return 0, 0, false
				}
				size *= v
			}
			if st.Union {
				off = max(off, size)
			} else {
				off = alignUp(off, a) + size
			}
			maxAlign = max(maxAlign, a)
		}
	}
	if st.Alignas != "" {
		a, ok := e.Eval(st.Alignas)
		if !ok {
			if s, sa, tok := e.layout(st.Alignas, depth+1); tok && s > 0 {
				a, ok = sa, true // alignas(type)
			}
		}
		if !ok || a <= 0 {
			return 0, 0, false
		}
		maxAlign = max(maxAlign, a)
	}
	return alignUp(off, maxAlign), maxAlign, true
}

func hasQual(d *Decl, q string) bool {
	for _, x := range d.Qualifiers {
		if x == q {
			return true
		}
	}
	return false
}

func alignUp(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}
