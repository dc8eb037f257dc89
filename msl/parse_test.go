package msl

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/parse/*.txtar")

// TestParseGolden parses the input.metal section of each archive in
// testdata/parse and compares the structure dump with want.txt.
func TestParseGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/parse/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var src []byte
			wantAt := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "input.metal":
					src = f.Data
				case "want.txt":
					wantAt = i
				}
			}
			if src == nil {
				t.Fatal("no input.metal section")
			}
			f, err := Parse("input.metal", src)
			if f == nil {
				t.Fatal("Parse returned nil File")
			}
			checkSpans(t, f)
			got := dump(f, err)
			if *update {
				if wantAt < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want.txt"})
					wantAt = len(ar.Files) - 1
				}
				ar.Files[wantAt].Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o666); err != nil {
					t.Fatal(err)
				}
				return
			}
			if wantAt < 0 {
				t.Fatal("no want.txt section (run with -update)")
			}
			if want := string(ar.Files[wantAt].Data); got != want {
				t.Errorf("dump mismatch (run with -update to accept)\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, give, want string
	}{
		{"empty", "", "e.metal:1:1: empty file"},
		{"only comments", "// nothing\n/* here */\n", "e.metal:1:1: empty file"},
		{"unclosed brace", "kernel void f() {\n  int x;\n", "e.metal:1:17: unclosed '{'"},
		{"unmatched brace", "kernel void f() {}\n}\n", "e.metal:2:1: unmatched '}'"},
		{"unclosed paren", "kernel void f() {\n  g(1;\n}", "e.metal:2:4: unclosed '('"},
		{"unmatched paren", "kernel void f() { g(1)); }", "e.metal:1:23: unmatched ')'"},
		{"unterminated comment", "kernel void f() {}\n/*", "e.metal:2:1: unterminated comment"},
		{"unterminated string", "constant char* s = \"abc;\n", "e.metal:1:20: unterminated string literal"},
		{"stray byte", "kernel void f() { int @x; }", "e.metal:1:23: invalid character \"@\""},
		{"for without paren", "kernel void f() {\n  for x; \n}", "e.metal:2:3: expected '(' after for"},
		{"malformed for", "kernel void f() { for (i = 0) {} }", "e.metal:1:23: malformed for header"},
		{"do without while", "kernel void f() { do {} x; }", "e.metal:1:19: expected 'while' after do body"},
		{"missing loop body", "kernel void f() { while (1) }", "e.metal:1:19: missing body after while"},
		{"bad template header", "template <typename T\nkernel void f() {}", "e.metal:1:1: unterminated template parameter list"},
		{"several sorted", "}\nkernel void f() { @ }", "e.metal:1:1: unmatched '}'\ne.metal:2:19: invalid character \"@\""},
		{"brackets too deep", "kernel void f() {" + strings.Repeat("{", 300) + strings.Repeat("}", 300) + "}",
			"e.metal:1:273: brackets nested more than 256 deep"},
		{"statements too deep", "kernel void f() {" + strings.Repeat("if (x) ", 300) + "y = 1; }",
			fmt.Sprintf("e.metal:1:%d: statements nested more than 256 deep", 18+256*7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("e.metal", []byte(tt.give))
			if f == nil {
				t.Fatal("Parse returned nil File")
			}
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want %q", tt.give, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tt.give, got, tt.want)
			}
			checkSpans(t, f)
		})
	}
}

// TestParseFunctions checks function recognition on the shapes found in
// real Metal sources.
func TestParseFunctions(t *testing.T) {
	tests := []struct {
		give string
		want string // "kind name(params) -> ret"
	}{
		{"kernel void f(device float* a [[buffer(0)]]) {}", "kernel f(device float* a) -> void"},
		{"[[kernel]] void f() {}", "kernel f() -> void"},
		{"template<typename T, int N> kernel void f(device const T* x) {}", "kernel f(device const T* x) -> void"},
		{"#define METAL_FUNC inline __attribute__((always_inline))\nMETAL_FUNC float4 g(float4 v) { return v; }", "helper g(float4 v) -> float4"},
		{"static inline metal::vec<T, 4> g(T x);", "helper g(T x) -> metal::vec<T,4>"},
		{"const device T* at(const device T* p, int i) { return p + i; }", "helper at(device const T* p, int i) -> const device T*"},
		{"template <typename T, T (*op)(T, T)> T red(T a, T b) { return op(a, b); }", "helper red(T a, T b) -> T"},
		{"struct S { float operator()(float x) const { return x; } };", "helper operator()(float x) -> float"},
		{"struct S { S(int v) : a(v), b{v} {} int a, b; };", "helper S(int v) -> "},
		{"float S::get() const { return 0; }", "helper get() -> float"},
		{"extern \"C\" { void h(void); }", "helper h() -> void"},
		{"namespace a { namespace b { inline int k(int, float) { return 0; } } }", "helper k(int , float ) -> int"},
		{"kernel void f(uint3 tid [[thread_position_in_grid]], ushort s [[simdgroup_index_in_threadgroup]]) {}", "kernel f(uint3 tid, ushort s) -> void"},
		{"void f(float a[4], thread float (&b)[2]) {}", "helper f(float[4] a, thread float(&b)[2] ) -> void"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			f, err := Parse("f.metal", []byte(tt.give))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(f.Funcs) != 1 {
				t.Fatalf("got %d functions, want 1:\n%s", len(f.Funcs), dump(f, nil))
			}
			fn := f.Funcs[0]
			kind := "helper"
			if fn.Kind == Kernel {
				kind = "kernel"
			}
			space := []string{"", "device ", "constant ", "threadgroup ", "thread "}
			var ps []string
			for _, p := range fn.Params {
				ps = append(ps, space[p.AddrSpace]+p.Type+" "+p.Name)
			}
			got := fmt.Sprintf("%s %s(%s) -> %s", kind, fn.Name, strings.Join(ps, ", "), fn.ReturnType)
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestWalkSkip checks that returning false from Walk's callback skips
// children.
func TestWalkSkip(t *testing.T) {
	f, err := Parse("w.metal", []byte("kernel void k() { for (;;) { a(); } b(); }"))
	if err != nil {
		t.Fatal(err)
	}
	body := f.Func("k").Body
	var all, pruned int
	Walk(body, func(Stmt) bool { all++; return true })
	Walk(body, func(s Stmt) bool { pruned++; _, loop := s.(*For); return !loop })
	if all != 5 || pruned != 3 {
		t.Errorf("Walk visited %d (want 5), pruned walk %d (want 3)", all, pruned)
	}
	var none *Block
	Walk(none, func(Stmt) bool { t.Error("Walk visited a nil block"); return true })
}

// checkSpans verifies that every node's byte range lies within the file and
// that statements nest inside their parents in source order.
func checkSpans(t *testing.T, f *File) {
	t.Helper()
	n := len(f.Src)
	ok := func(what string, pos, end int) {
		if pos < 0 || end < pos || end > n {
			t.Fatalf("%s span %d-%d out of bounds (len %d)", what, pos, end, n)
		}
	}
	for _, fn := range f.Funcs {
		ok("func "+fn.Name, fn.Pos, fn.End)
		if fn.NamePos < fn.Pos || fn.Lparen < fn.NamePos || fn.Rparen < fn.Lparen || fn.Rparen >= fn.End {
			t.Fatalf("func %s: positions out of order: pos %d name %d ( %d ) %d end %d", fn.Name, fn.Pos, fn.NamePos, fn.Lparen, fn.Rparen, fn.End)
		}
		for _, p := range fn.Params {
			ok("param", p.Pos, p.End)
			if p.Pos <= fn.Lparen || p.End > fn.Rparen {
				t.Fatalf("param %s outside parentheses", p.Name)
			}
		}
		if fn.Body == nil {
			continue
		}
		var check func(s Stmt, lo, hi int)
		check = func(s Stmt, lo, hi int) {
			pos, end := s.Span()
			ok(fmt.Sprintf("%T", s), pos, end)
			if pos < lo || end > hi {
				t.Fatalf("%T %d-%d outside parent %d-%d", s, pos, end, lo, hi)
			}
			switch s := s.(type) {
			case *Block:
				prev := pos
				for _, c := range s.Stmts {
					cp, ce := c.Span()
					if cp < prev {
						t.Fatalf("statements out of order at %d", cp)
					}
					check(c, pos, end)
					prev = ce
				}
			case *For:
				for _, sp := range []Span{s.Init, s.Cond, s.Post} {
					if sp.Pos < s.Lparen || sp.End > s.Rparen {
						t.Fatalf("for header span %v outside parens", sp)
					}
				}
				for _, p := range s.Pragmas {
					ok("pragma", p.Pos, p.End)
				}
				check(s.Body, pos, end)
			case *While:
				check(s.Body, pos, end)
			case *Do:
				check(s.Body, pos, end)
			case *If:
				check(s.Then, pos, end)
				if s.Else != nil {
					check(s.Else, pos, end)
				}
			case *Switch:
				check(s.Body, pos, end)
			case *MacroUse:
				if s.Body != nil {
					check(s.Body, pos, end)
				}
			case *Decl:
				for _, d := range s.Names {
					ok("init", d.Init.Pos, d.Init.End)
					for _, dim := range d.Dims {
						ok("dim", dim.Pos, dim.End)
					}
				}
			}
		}
		check(fn.Body, fn.Pos, fn.End)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"kernel void f(device float* a [[buffer(0)]]) { for (int i = 0; i < 4; i++) { a[i] = 0; } }",
		"template<typename T> struct S { T x; T get() const { return x; } };",
		"#define L(x) for(;;){x;}\nkernel void k() { L(1); if (a) { } else do {} while(0); }",
		"template [[host_name(\"a\")]] kernel decltype(f<float>) f<float>;",
		"enum class E { A = 1 << 2, B }; constant int N = sizeof(float4) * A;",
		"kernel void k() { switch (x) { case 1: { break; } default: ; } }",
		"} ) ] { ( [",
		"#define I(T, ...) template [[host_name(\"k_\" #T)]] kernel void k<T ## 4, __VA_ARGS__>(device T*);\nI(float, 2)\n",
		"template<> bool cmp<vec<int, 2>>(int i) { return 1; }\n#undef X\n#if defined(X)\nx\n#endif\n",
		"template <typename T, typename A = T, int N = 8> kernel void k() { threadgroup A s[N]; }",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, _ := Parse("fuzz.metal", src)
		if file == nil {
			t.Fatal("Parse returned nil File")
		}
		checkSpans(t, file)
		for _, k := range file.Kernels() {
			ThreadgroupMemory(file, k.Name, Env{})
		}
	})
}

func ExampleParse() {
	src := []byte(`kernel void scale(device float* x [[buffer(0)]],
                  uint i [[thread_position_in_grid]]) {
    threadgroup float tile[64];
    #pragma unroll
    for (int k = 0; k < 4; k++) { tile[k] = x[i]; }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}
`)
	f, err := Parse("scale.metal", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, k := range f.Kernels() {
		fmt.Println("kernel", k.Name)
		for _, p := range k.Params {
			fmt.Printf("  param %s %s [[%s]]\n", p.Type, p.Name, p.Attrs[0].Name)
		}
		Walk(k.Body, func(s Stmt) bool {
			switch s := s.(type) {
			case *For:
				fmt.Printf("  for at %s, pragma %q\n", f.Position(s.Pos), s.Pragmas[0].Text)
			case *Barrier:
				fmt.Printf("  %s at %s\n", s.Name, f.Position(s.Pos))
			}
			return true
		})
	}
	m, _ := ThreadgroupMemory(f, "scale", Env{})
	fmt.Println("threadgroup bytes:", m.Total)
	// Output:
	// kernel scale
	//   param float* x [[buffer]]
	//   param uint i [[thread_position_in_grid]]
	//   for at scale.metal:5:5, pragma "unroll"
	//   threadgroup_barrier at scale.metal:6:5
	// threadgroup bytes: 256
}
