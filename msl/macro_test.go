package msl

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMacroInstantiationTGMem checks that instantiations made by macro uses
// are kernels ThreadgroupMemory can size, with their arguments bound.
func TestMacroInstantiationTGMem(t *testing.T) {
	src := `
template <typename T, int N>
kernel void k(device T* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup T s[N];
  out[lid] = s[lid % N];
}
#define INST(T, n) template [[host_name("k_" #T "_" #n)]] kernel void k<T, n>(device T*, uint);
#define INST_ALL(n) INST(float, n) INST(half, n)
INST_ALL(16)
`
	f, err := Parse("m.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kernel string
		total  int64
	}{{"k_float_16", 64}, {"k_half_16", 32}} {
		m, err := ThreadgroupMemory(f, c.kernel, Env{})
		if err != nil {
			t.Errorf("%s: %v", c.kernel, err)
			continue
		}
		if !m.Known || m.Total != c.total {
			t.Errorf("%s: total %d known %v, want %d", c.kernel, m.Total, m.Known, c.total)
		}
	}
	if len(f.Instantiations) != 2 {
		t.Fatalf("%d instantiations, want 2", len(f.Instantiations))
	}
	use := strings.Index(src, "INST_ALL(16)")
	for _, in := range f.Instantiations {
		if in.Pos != use || in.End != use+len("INST_ALL(16)") {
			t.Errorf("%s spans [%d,%d), want the use [%d,%d)", in.HostName, in.Pos, in.End, use, use+len("INST_ALL(16)"))
		}
	}
}

// TestMacroExpansionBounded checks that recursive and exponential macros
// end quickly without instantiations rather than hanging or panicking.
func TestMacroExpansionBounded(t *testing.T) {
	for _, src := range []string{
		"#define A(x) template A(x) A(x)\nA(1)\n",
		"#define A(x) B(x x) template\n#define B(x) A(x x)\nA(1)\n",
		"#define D(x) x x x x x x x x template\n#define E(x) D(D(D(D(D(D(x))))))\nE(E(E(1)))\n",
		"#define O template O\nO\n",
		"#define P(x) template [[host_name(#x)]] void f<x ## >(\nP(\n",
	} {
		start := time.Now()
		f, _ := Parse("b.metal", []byte(src))
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q: took %v", src, d)
		}
		if len(f.Instantiations) != 0 {
			t.Errorf("%q: instantiations %+v", src, f.Instantiations[0])
		}
	}
}

// TestPPExpand checks the expansion rules on their own.
func TestPPExpand(t *testing.T) {
	src := `#define STR(x) #x
#define CAT(a, b) a ## b
#define XCAT(a, b) CAT(a, b)
#define ONE 1
#define VA(f, ...) f(__VA_ARGS__)
#define GNU(args...) g(args)
#define Q(x) #x
`
	f, _ := Parse("e.metal", []byte(src+"int z;\n"))
	for _, c := range []struct{ in, want string }{
		{`STR(a  +  "b\n")`, `"a + \"b\\n\""`},
		{`CAT(x, y)`, `xy`},
		{`CAT(ON, E)`, `1`},
		{`XCAT(ON, E)`, `1`},
		{`CAT(x, )`, `x`},
		{`VA(h, 1, (2, 3))`, `h(1, (2, 3))`},
		{`GNU(a, b)`, `g(a, b)`},
		{`Q(ONE)`, `"ONE"`},
		{`STR()`, `""`},
		{`CAT`, `CAT`},
	} {
		m := &macroExpander{f: f, at: len(src)}
		if got := ppJoin(m.expand(ppLex(c.in), nil, 0)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}

// TestUnquoteConcat checks adjacent string literals in host_name values.
func TestUnquoteConcat(t *testing.T) {
	for in, want := range map[string]string{
		`"k_" "float"`:      "k_float",
		`"a"  "b\n"   "c"`:  "ab\nc",
		`"plain"`:           "plain",
		`"k_" name`:         `k_" name`,
		`"unterminated" "x`: `unterminated" "x`,
	} {
		if got := unquote(in); got != want {
			t.Errorf("unquote(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestTemplateDefaultsBound checks that defaulted template parameters are
// bound for instantiations and for helper calls with explicit arguments,
// while a parameter a signature may deduce is not.
func TestTemplateDefaultsBound(t *testing.T) {
	src := `
#define NR 4
template <typename T, typename AccT = T, int N = NR * 2>
kernel void k(device T* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup AccT s[N];
  out[lid] = s[lid % N];
}
template <int M, typename U = float>
void helper(thread float& x) {
  threadgroup U h[M];
  x = h[0];
}
template <typename V = int>
void deduced(V v) {
  threadgroup V d[2];
}
kernel void caller(device float* out [[buffer(0)]]) {
  float x = 0;
  helper<3>(x);
  deduced(out[0]);
  out[0] = x;
}
template [[host_name("k_f")]] kernel void k<float>(device float*, uint);
template [[host_name("k_hf")]] kernel void k<half, float>(device half*, uint);
template [[host_name("k_h2")]] kernel void k<half, half, 2>(device half*, uint);
`
	f, err := Parse("d.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if fn := f.Func("k"); !slices.Equal(fn.TemplateDefaults, []string{"", "T", "NR * 2"}) {
		t.Errorf("k defaults %q", fn.TemplateDefaults)
	}
	for _, c := range []struct {
		kernel, want string
	}{
		{"k_f", "total=32 known=true k.s:float[8]@0+32/4"},
		{"k_hf", "total=32 known=true k.s:float[8]@0+32/4"},
		{"k_h2", "total=16 known=true k.s:half[2]@0+4/2"},
	} {
		m, err := ThreadgroupMemory(f, c.kernel, Env{})
		if err != nil {
			t.Fatal(err)
		}
		if got := render(m); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got %s, want prefix %s", c.kernel, got, c.want)
		}
	}
	m, err := ThreadgroupMemory(f, "caller", Env{})
	if err != nil {
		t.Fatal(err)
	}
	got := render(m)
	if !strings.Contains(got, "helper.h:float[3]@0+12/4") {
		t.Errorf("helper<3> default U not bound: %s", got)
	}
	if m.Known {
		t.Errorf("deduced V was bound to its default: %s", got)
	}
}

// TestUndef checks #undef in #if evaluation, in Env evaluation and the
// -U option.
func TestUndef(t *testing.T) {
	src := `#define TILE 8
kernel void a(device float* o) { threadgroup float s[TILE]; o[0] = s[0]; }
#undef TILE
kernel void b(device float* o) { threadgroup float s[TILE]; o[0] = s[0]; }
#ifdef EXTERNAL
kernel void ext(device float* o) { o[0] = 1; }
#endif
`
	f, err := Parse("u.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ma, _ := ThreadgroupMemory(f, "a", Env{})
	mb, _ := ThreadgroupMemory(f, "b", Env{})
	if ma == nil || mb == nil || !ma.Known || ma.Total != 32 || mb.Known {
		t.Errorf("TILE before #undef known=%v, after known=%v; want 32 bytes then unknown", ma != nil && ma.Known, mb != nil && mb.Known)
	}
	if f.Func("ext") == nil {
		t.Error("EXTERNAL, never defined, was decided rather than unknown")
	}
	f, err = ParseOptions("u.metal", []byte(src), Options{Undefs: []string{"EXTERNAL"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Func("ext") != nil {
		t.Error("-U EXTERNAL did not drop the #ifdef branch")
	}
}

// TestCmdDefinesInFile checks that ParseWith's defines reach an Env built
// from the File alone, and that the Env's own Defines win.
func TestCmdDefinesInFile(t *testing.T) {
	f, err := ParseWith("c.metal", []byte("kernel void k() { for (int i = 0; i < BLOCK; i++) {} }\n"), map[string]string{"BLOCK": "16"})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := (&Env{File: f}).Eval("BLOCK * 2"); !ok || v != 32 {
		t.Errorf("BLOCK * 2 = %d, %v; want 32", v, ok)
	}
	if v, ok := (&Env{File: f, Defines: map[string]string{"BLOCK": "4"}}).Eval("BLOCK"); !ok || v != 4 {
		t.Errorf("Env define: BLOCK = %d, %v; want 4", v, ok)
	}
}

// A macro standing for an address space or for nothing in a constant's
// declaration (MLX's `static MTL_CONST constexpr int RMS_N_READS = 4;`,
// with MTL_CONST defined as `constant` under __METAL__ and empty
// otherwise) leaves the constant a constant: a template default naming it
// fixes a loop's trip count.
func TestQualifierMacroInConstant(t *testing.T) {
	for _, def := range []string{"#define MTL_CONST constant", "#define MTL_CONST", "#if defined __METAL__\n#define MTL_CONST constant\n#else\n#define MTL_CONST\n#endif", "#define MTL_CONST const"} {
		src := def + `
static MTL_CONST constexpr int READS = 4;
template <typename T, int N = READS>
[[kernel]] void k(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  for (int r = 0; r < N; r++) { out[i * N + r] = T(r); }
}
template [[host_name("k_f")]] [[kernel]] decltype(k<float>) k<float>;
`
		f, err := Parse("q.metal", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := (&Env{File: f}).Eval("READS"); !ok || v != 4 {
			t.Errorf("%q: READS = %d, %v; want 4", def, v, ok)
		}
		fn := f.Func("k")
		sc := ScopeOf(f, fn)
		var loop *For
		for _, s := range fn.Body.Stmts {
			if l, ok := s.(*For); ok {
				loop = l
			}
		}
		if loop == nil {
			t.Fatalf("%q: no loop", def)
		}
		l, why := sc.CountLoop(loop)
		if l == nil || l.Trips != 4 {
			t.Errorf("%q: trip count not 4: %+v %s", def, l, why)
		}
	}
	// A macro standing for a type is no qualifier.
	f, err := Parse("q.metal", []byte("#define INT int\nstatic constant INT X = 3;\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := (&Env{File: f}).Eval("X"); !ok || v != 3 {
		t.Errorf("X = %d, %v; want 3", v, ok)
	}
}

// TestMacroArgsSplit: a template argument written as an object-like macro
// standing for several (ggml's kernel_flash_attn_ext_vec<FA_TYPES, ...>)
// gives each template parameter its own argument, by the definition in
// effect at the instantiation (ggml defines FA_TYPES twice).
func TestMacroArgsSplit(t *testing.T) {
	src := `
#define TYPES float, float, float
template <typename B, typename C, short NE = 4>
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i] = NE; }
#define TYPES float, vec<float, 2>
template [[host_name("k2")]] kernel void k<TYPES, 2>(device float*, uint);
`
	f, err := Parse("m.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Instantiations) != 1 {
		t.Fatalf("%d instantiations, want 1", len(f.Instantiations))
	}
	if got, want := f.Instantiations[0].Args, []string{"float", "vec<float, 2>", "2"}; !slices.Equal(got, want) {
		t.Errorf("arguments %q, want %q", got, want)
	}
	_, targs, err := f.Entry("k2")
	if err != nil {
		t.Fatal(err)
	}
	if targs["NE"] != "2" {
		t.Errorf("NE bound to %q, want 2 (every binding: %v)", targs["NE"], targs)
	}
}
