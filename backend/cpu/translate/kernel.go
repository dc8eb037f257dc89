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

// A kernelEntry is one row of the exported mtl_kernels table.
type kernelEntry struct {
	name  string
	fn    *fn
	args  []string // template arguments for instantiations
	slots []*slot
}

func (t *tr) entryNames() []string {
	var out []string
	for _, e := range t.entries {
		out = append(out, e.name)
	}
	return out
}

// threadAttrs maps a thread-position attribute to its mtl_rt::ThreadCtx
// field and whether the field is a 3-vector.
var threadAttrs = map[string]struct {
	field  string
	vector bool
}{
	"thread_position_in_grid":        {"thread_position_in_grid", true},
	"thread_position_in_threadgroup": {"thread_position_in_threadgroup", true},
	"threadgroup_position_in_grid":   {"threadgroup_position_in_grid", true},
	"threads_per_threadgroup":        {"threads_per_threadgroup", true},
	"threadgroups_per_grid":          {"threadgroups_per_grid", true},
	"threads_per_grid":               {"threads_per_grid", true},
	"thread_index_in_threadgroup":    {"thread_index_in_threadgroup", false},
	"thread_index_in_simdgroup":      {"thread_index_in_simdgroup", false},
	"simdgroup_index_in_threadgroup": {"simdgroup_index_in_threadgroup", false},
	"simdgroups_per_threadgroup":     {"simdgroups_per_threadgroup", false},
	"threads_per_simdgroup":          {"threads_per_simdgroup", false},
	"thread_execution_width":         {"threads_per_simdgroup", false},
	"thread_index_in_quadgroup":      {"thread_index_in_quadgroup", false},
	"quadgroup_index_in_threadgroup": {"quadgroup_index_in_threadgroup", false},
	"quadgroups_per_threadgroup":     {"quadgroups_per_threadgroup", false},
}

// buildKernels resolves entries and their threadgroup slots (see
// reachableSlots), inserts slot aliases before their functions and
// generates wrappers and the kernel table.
func (t *tr) buildKernels() {
	t.byName = map[string][]*fn{}
	for _, f := range t.funcs {
		t.byName[f.name] = append(t.byName[f.name], f)
		if len(f.aliases) > 0 {
			t.ins[t.sig[f.start]] = strings.Join(f.aliases, "\n")
		}
	}
	seen := map[string]*kernelEntry{}
	wrapped := map[*fn]bool{}
	add := func(e *kernelEntry) {
		if prev := seen[e.name]; prev != nil {
			// A second definition, e.g. in the other branch of an #if
			// msl could not decide: the compiler picks one, so the table
			// lays out the slots of both.
			if e.fn != prev.fn {
				have := map[*slot]bool{}
				for _, s := range prev.slots {
					have[s] = true
				}
				for _, s := range t.reachableSlots(e.fn) {
					if !have[s] {
						prev.slots = append(prev.slots, s)
					}
				}
			}
			return
		}
		seen[e.name] = e
		e.slots = t.reachableSlots(e.fn)
		t.entries = append(t.entries, e)
		if !wrapped[e.fn] {
			wrapped[e.fn] = true
			t.wrapper(e.fn)
		}
	}
	for _, f := range t.funcs {
		if f.kind == kernelFn && f.tmpl == nil {
			add(&kernelEntry{name: f.name, fn: f})
			for _, a := range f.attrs {
				// [[host_name("x")]] on a kernel renames it for the host;
				// both names are exported.
				if a.name == "host_name" && len(a.args) == 1 {
					if h, err := strconv.Unquote(a.args[0]); err == nil && h != f.name {
						add(&kernelEntry{name: h, fn: f})
					}
				}
			}
		}
	}
	for _, in := range t.insts {
		var target *fn
		for _, f := range t.byName[in.fn] {
			if f.tmpl != nil && f.kind == kernelFn {
				target = f
			}
		}
		if target == nil {
			t.errorf(in.k, "host_name %q instantiates %s, which is not a template kernel defined in this file", in.host, in.fn)
			continue
		}
		if len(in.args) != len(target.tmpl.names) {
			t.errorf(in.k, "host_name %q gives %d template arguments, %s takes %d", in.host, len(in.args), in.fn, len(target.tmpl.names))
			continue
		}
		add(&kernelEntry{name: in.host, fn: target, args: in.args})
	}
	t.table()
}

// reachableSlots lists the slots of f and then of the helpers it calls,
// directly or transitively, in the order they are first reached
// (breadth first, calls in body order). This is the order msl's
// ThreadgroupMemory lays declarations out in, so the runner's total and
// the source estimate agree.
func (t *tr) reachableSlots(f *fn) []*slot {
	seen := map[*fn]bool{f: true}
	out := append([]*slot(nil), f.slots...)
	queue := []*fn{f}
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		for _, n := range g.callees {
			for _, h := range t.byName[n] {
				if seen[h] || h.kind != helperFn {
					continue
				}
				seen[h] = true
				if h.tmpl != nil && len(h.slots) > 0 {
					t.errorf(h.slots[0].k, "threadgroup declaration in template helper %s is not supported", h.name)
					continue
				}
				out = append(out, h.slots...)
				queue = append(queue, h)
			}
		}
	}
	return out
}

// wrapper emits mtl_run_<name>, which binds buffers, threadgroup memory and
// thread attributes to f's parameters and calls it.
func (t *tr) wrapper(f *fn) {
	var args []string
	used := map[int]bool{}
	for _, p := range f.params {
		for _, a := range p.attrs {
			if a.name == "buffer" && len(a.args) == 1 {
				if n, err := strconv.Atoi(a.args[0]); err == nil {
					used[n] = true
				}
			}
		}
	}
	next := 0
	ok := true
	for _, p := range f.params {
		e, err := t.paramExpr(p, used, &next)
		if err != "" {
			t.errorf(p.first, "kernel %s parameter %s: %s", f.name, p.name, err)
			ok = false
			continue
		}
		args = append(args, e)
		if idx, ok := bufferIndex(e); ok {
			f.bufs = append(f.bufs, bufParam{index: idx, name: p.name, writable: p.space == "device" && !constPointee(p.typ)})
		}
	}
	if !ok {
		return
	}
	tk := t.toks[t.sig[f.nameK]]
	line, _ := tk.f.lineCol(tk.Pos)
	fmt.Fprintf(&t.tail, "#line %d %s\n", line, cQuote(tk.f.name))
	if f.ns != "" {
		fmt.Fprintf(&t.tail, "namespace %s {\n", f.ns)
	}
	call := "::" + f.qualName()
	if f.tmpl != nil {
		fmt.Fprintf(&t.tail, "%s\n", f.tmpl)
		call += "<" + strings.Join(f.tmpl.names, ", ") + ">"
	}
	fmt.Fprintf(&t.tail, "static void mtl_run_%s(void* const* mtl_b, void* const* mtl_tg) {\n", f.name)
	fmt.Fprintf(&t.tail, "  using namespace metal;\n  const mtl_rt::ThreadCtx& mtl_c = mtl_rt::ctx();\n  (void)mtl_b; (void)mtl_tg; (void)mtl_c;\n")
	fmt.Fprintf(&t.tail, "  %s(%s);\n}\n", call, strings.Join(args, ",\n    "))
	if f.ns != "" {
		fmt.Fprintf(&t.tail, "}  // namespace %s\n", f.ns)
	}
}

// paramExpr is the wrapper's argument expression for kernel parameter p, or
// a reason it is not supported.
func (t *tr) paramExpr(p *param, used map[int]bool, next *int) (string, string) {
	for _, a := range p.attrs {
		switch a.name {
		case "buffer", "threadgroup":
			if len(a.args) != 1 {
				return "", a.name + " attribute needs one index"
			}
			arr := "mtl_b"
			if a.name == "threadgroup" {
				arr = "mtl_tg"
			}
			idx := a.args[0]
			if _, err := strconv.Atoi(idx); err != nil {
				idx = "(" + idx + ")" // a constant expression the compiler evaluates
			}
			return castArg(p.typ, arr+"["+idx+"]"), ""
		}
		if ta, ok := threadAttrs[a.name]; ok {
			return threadArg(p.typ, ta.field, ta.vector)
		}
	}
	for _, a := range p.attrs {
		switch a.name {
		case "function_constant", "maybe_unused", "restrict":
			continue
		}
		return "", fmt.Sprintf("attribute [[%s]] is not supported by the cpu backend", a.name)
	}
	if p.space == "device" || p.space == "constant" {
		for used[*next] {
			*next++
		}
		n := *next
		*next++
		return castArg(p.typ, fmt.Sprintf("mtl_b[%d]", n)), ""
	}
	return "", "no binding attribute"
}

// castArg converts a void* slot to a parameter of type typ.
func castArg(typ, slot string) string {
	typ = strings.TrimSpace(typ)
	switch {
	case strings.HasSuffix(typ, "*"):
		return fmt.Sprintf("static_cast<%s>(%s)", typ, slot)
	case strings.HasSuffix(typ, "&"):
		base := strings.TrimSpace(strings.TrimSuffix(typ, "&"))
		return fmt.Sprintf("*static_cast<%s*>(%s)", base, slot)
	}
	return fmt.Sprintf("*static_cast<%s*>(%s)", typ, slot)
}

// threadArg reads a thread attribute of the declared type from mtl_c.
func threadArg(typ, field string, vector bool) (string, string) {
	base := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(typ), "const "))
	base = strings.TrimPrefix(base, "metal::")
	n := 1
	elem := base
	if l := len(base); l > 1 && base[l-1] >= '2' && base[l-1] <= '4' {
		n = int(base[l-1] - '0')
		elem = base[:l-1]
	}
	switch elem {
	case "uint", "ushort", "int", "short", "uchar", "char", "long", "ulong", "uint32_t", "uint16_t", "int32_t", "size_t", "unsigned", "unsigned int":
	default:
		return "", fmt.Sprintf("thread attribute type %q is not supported", typ)
	}
	if !vector {
		if n != 1 {
			return "", fmt.Sprintf("thread attribute of type %q must be a scalar", typ)
		}
		return fmt.Sprintf("static_cast<%s>(mtl_c.%s)", base, field), ""
	}
	if n == 1 {
		return fmt.Sprintf("static_cast<%s>(mtl_c.%s[0])", base, field), ""
	}
	if n > 3 {
		return "", fmt.Sprintf("thread attribute type %q has more than 3 components", typ)
	}
	comps := make([]string, n)
	for i := range comps {
		comps[i] = fmt.Sprintf("static_cast<%s>(mtl_c.%s[%d])", elem, field, i)
	}
	return fmt.Sprintf("%s(%s)", base, strings.Join(comps, ", ")), ""
}

// table emits the slot tables, the kernel table and mtl_kernels.
func (t *tr) table() {
	if len(t.entries) == 0 {
		t.tail.WriteString("extern \"C\" const mtl_rt::KernelInfo* mtl_kernels(int* count) { *count = 0; return nullptr; }\n")
		return
	}
	for i, e := range t.entries {
		if len(e.slots) == 0 {
			continue
		}
		fmt.Fprintf(&t.tail, "static const mtl_rt::TGSlot mtl_slots_%d[] = {\n", i)
		for _, s := range e.slots {
			alias := "mtl_tg" + strconv.Itoa(s.id) + "_t"
			if s.fn.ns != "" {
				alias = s.fn.ns + "::" + alias
			}
			alias = "::" + alias
			if s.fn.tmpl != nil {
				alias += "<" + strings.Join(e.args, ", ") + ">"
			}
			// Element size and extents come from the compiler, so reports can
			// give element coordinates whatever the declaration's spelling.
			ext := make([]string, 4)
			for d := range ext {
				ext[d] = fmt.Sprintf("std::extent<%s, %d>::value", alias, d)
			}
			fmt.Fprintf(&t.tail, "  {%d, sizeof(%s), alignof(%s), %s, sizeof(std::remove_all_extents<%s>::type), int(std::rank<%s>::value), {%s}},\n",
				s.id, alias, alias, strconv.Quote(s.name), alias, alias, strings.Join(ext, ", "))
		}
		t.tail.WriteString("};\n")
	}
	bufs := map[*fn]string{}
	for _, e := range t.entries {
		if _, done := bufs[e.fn]; done || len(e.fn.bufs) == 0 {
			continue
		}
		name := fmt.Sprintf("mtl_bufs_%d", len(bufs))
		bufs[e.fn] = name
		fmt.Fprintf(&t.tail, "static const mtl_rt::BufferParam %s[] = {\n", name)
		for _, b := range e.fn.bufs {
			w := 0
			if b.writable {
				w = 1
			}
			fmt.Fprintf(&t.tail, "  {%d, %s, %d, 0},\n", b.index, strconv.Quote(b.name), w)
		}
		t.tail.WriteString("};\n")
	}
	t.tail.WriteString("static const mtl_rt::KernelInfo mtl_kernel_table[] = {\n")
	for i, e := range t.entries {
		run := "&::mtl_run_" + e.fn.name
		if e.fn.ns != "" {
			run = "&::" + e.fn.ns + "::mtl_run_" + e.fn.name
		}
		if e.fn.tmpl != nil {
			run += "<" + strings.Join(e.args, ", ") + ">"
		}
		slots := "nullptr"
		if len(e.slots) > 0 {
			slots = fmt.Sprintf("mtl_slots_%d", i)
		}
		bufTable, nbufs := "nullptr", len(e.fn.bufs)
		if nbufs > 0 {
			bufTable = bufs[e.fn]
		}
		fmt.Fprintf(&t.tail, "  {%s, %s, %d, %s, %d, %d, %s},\n", strconv.Quote(e.name), run, len(e.slots), slots, maxThreads(e.fn), nbufs, bufTable)
	}
	t.tail.WriteString("};\n")
	fmt.Fprintf(&t.tail, "extern \"C\" const mtl_rt::KernelInfo* mtl_kernels(int* count) { *count = %d; return mtl_kernel_table; }\n", len(t.entries))
}

// maxThreads is the kernel's max_total_threads_per_threadgroup, or 1024.
func maxThreads(f *fn) int {
	for _, a := range f.attrs {
		if a.name == "max_total_threads_per_threadgroup" && len(a.args) == 1 {
			if n, err := strconv.Atoi(a.args[0]); err == nil && n > 0 && n <= 1024 {
				return n
			}
		}
	}
	return 1024
}

// functionConstant rewrites `constant T name [[function_constant(n)]];`
// (tokens k..end, attribute at fc) to a static const with the value given
// in src.Constants, or T's zero value.
func (t *tr) functionConstant(k, fc, end int) {
	nameK := fc - 1
	if t.kind(nameK) != msl.Ident {
		t.errorf(fc, "cannot parse function constant declaration")
		return
	}
	var words []string
	for j := k; j < nameK; j++ {
		if t.text(j) == "constant" || t.text(j) == "const" {
			continue
		}
		if w := t.rewriteTypeTok(j); w != "" {
			words = append(words, w)
		}
	}
	typ := joinWords(words)
	name := t.text(nameK)
	val := typ + "()"
	if v, ok := t.src.Constants[name]; ok {
		lit, err := valueLiteral(v)
		if err != "" {
			t.errorf(nameK, "function constant %s: %s", name, err)
			return
		}
		val = lit
	}
	t.replaceRange(k, end, fmt.Sprintf("static const %s %s = static_cast<%s>(%s);", typ, name, typ, val))
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

// rewriteSeq applies the token-local rules to a sequence of significant
// tokens and returns replacements by index (nil keeps a token). defined says
// whether a function constant has a value. When bodyStart >= 0 the tokens
// are a #define whose replacement list starts at bodyStart, and threadgroup
// storage declarations in it are reported as unsupported.
func rewriteSeq(ts []msl.Token, fields map[string]bool, defined func(string) bool, bodyStart int) ([]*string, []int) {
	rep := make([]*string, len(ts))
	var bad []int
	set := func(i int, s string) { rep[i] = &s }
	text := func(i int) string {
		if i < 0 || i >= len(ts) {
			return ""
		}
		return ts[i].Text
	}
	for i := 0; i < len(ts); i++ {
		tk := ts[i]
		switch tk.Kind {
		case msl.Attribute:
			set(i, "")
		case msl.Float, msl.Int:
			if h, ok := literal(tk); ok {
				set(i, h)
			}
		case msl.Ident:
			switch tk.Text {
			case "device", "thread":
				set(i, "")
			case "threadgroup":
				if bodyStart >= 0 {
					prev := text(i - 1)
					if i == bodyStart {
						prev = ""
					}
					switch prev {
					case "", ";", "{", "}":
						storage := i+1 < len(ts) // a bare "threadgroup" body is a qualifier alias
						for j := i + 1; j < len(ts) && text(j) != ";"; j++ {
							if s := text(j); s == "*" || s == "&" || s == ")" {
								storage = false
								break
							}
						}
						if storage {
							bad = append(bad, i)
						}
					}
				}
				set(i, "")
			case "constant":
				if adjacentConst(text(i-1), text(i+1)) {
					set(i, "")
				} else {
					set(i, "const")
				}
			case "kernel":
				if i+1 < len(ts) && (ts[i+1].Kind == msl.Ident || ts[i+1].Kind == msl.Attribute) {
					set(i, "")
				}
			case "is_function_constant_defined":
				if text(i+1) == "(" && i+2 < len(ts) && ts[i+2].Kind == msl.Ident && text(i+3) == ")" {
					v := "false"
					if defined(ts[i+2].Text) {
						v = "true"
					}
					set(i, v)
					set(i+1, "")
					set(i+2, "")
					set(i+3, "")
					i += 3
				}
			default:
				if p := text(i - 1); (p == "." || p == "->") && isSwizzle(tk.Text) && !fields[tk.Text] && text(i+1) != "(" {
					switch {
					case len(tk.Text) > 1 && swizzleOnlyRead(ts, i):
						set(i, "mtl_rv_"+xyzw(tk.Text)+"()")
					case len(tk.Text) > 1:
						set(i, xyzw(tk.Text)+"()")
					case tk.Text != xyzw(tk.Text):
						set(i, xyzw(tk.Text))
					}
				}
			}
		}
	}
	return rep, bad
}

// rewriteAll applies the token-local rules to the main stream (tokens not
// already replaced) and to #define bodies.
func (t *tr) rewriteAll() {
	defined := func(name string) bool { _, ok := t.src.Constants[name]; return ok }
	ts := make([]msl.Token, len(t.sig))
	for k, i := range t.sig {
		ts[k] = t.toks[i].Token
	}
	rep, _ := rewriteSeq(ts, t.fields, defined, -1)
	for k, r := range rep {
		if r != nil && t.rep[t.sig[k]] == nil {
			t.rep[t.sig[k]] = r
		}
	}
	for i, tk := range t.toks {
		if tk.Kind != msl.Directive || t.rep[i] != nil || tk.dead {
			continue
		}
		words := directiveWords(tk.Text)
		if len(words) == 0 || words[0] != "define" {
			continue
		}
		body := tk.Text[1:]
		sub, err := msl.Lex(tk.f.name, []byte(body))
		if err != nil {
			t.errAtTok(tk, "%v", err)
			continue
		}
		var sig []msl.Token
		for _, s := range sub {
			if s.Kind != msl.Comment {
				sig = append(sig, s)
			}
		}
		start := 2
		if len(sig) > 2 && sig[2].Text == "(" && sig[2].Pos == sig[1].End {
			for start < len(sig) && sig[start].Text != ")" {
				start++
			}
			start++
		}
		srep, bad := rewriteSeq(sig, t.fields, defined, start)
		if len(bad) > 0 {
			t.errAtTok(tk, "threadgroup declaration inside macro is not supported by the cpu backend")
			continue
		}
		var b strings.Builder
		b.WriteByte('#')
		prev := 0
		for j, s := range sig {
			b.WriteString(body[prev:s.Pos])
			if srep[j] != nil {
				b.WriteString(*srep[j])
			} else {
				b.WriteString(s.Text)
			}
			prev = s.End
		}
		b.WriteString(body[prev:])
		if out := b.String(); out != tk.Text {
			t.setRep(i, out)
		}
	}
}

// A bufParam is one device or constant buffer parameter of a kernel.
type bufParam struct {
	index    int
	name     string
	writable bool // a device pointer or reference to non-const data
}

// bufferIndex returns the buffer index of a wrapper argument reading
// mtl_b[N], when N is a literal.
func bufferIndex(arg string) (int, bool) {
	i := strings.Index(arg, "mtl_b[")
	if i < 0 {
		return 0, false
	}
	rest := arg[i+len("mtl_b["):]
	j := strings.IndexByte(rest, ']')
	if j < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(rest[:j])
	return n, err == nil
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
