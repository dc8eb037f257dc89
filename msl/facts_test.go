package msl

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// parseOne parses src and returns its first function's scope.
func parseOne(t *testing.T, src string) (*File, *Scope) {
	t.Helper()
	f, err := Parse("k.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range f.Funcs {
		if fn.Body != nil && fn.Kind == Kernel {
			return f, ScopeOf(f, fn)
		}
	}
	t.Fatal("no kernel")
	return nil, nil
}

// stmtAt returns the statement of sc's function starting on line.
func stmtAt(t *testing.T, f *File, sc *Scope, line int) Stmt {
	t.Helper()
	var out Stmt
	Walk(sc.Func.Body, func(s Stmt) bool {
		if _, ok := s.(*Block); ok {
			return true
		}
		p, _ := s.Span()
		if out == nil && f.Position(p).Line == line {
			out = s
		}
		return out == nil
	})
	if out == nil {
		t.Fatalf("no statement on line %d", line)
	}
	return out
}

func TestParseExpr(t *testing.T) {
	tests := []struct{ give, want string }{
		{"a + b * c", "(a + (b * c))"},
		{"(size_t)x * 4 + y", "(((cast<size_t> x) * 4) + y)"},
		{"p.KVH * 32 + kk * 2", "((p.KVH * 32) + (kk * 2))"},
		{"x = y += 2", "(x = (y += 2))"},
		{"c ? a : b + 1", "c ? a : (b + 1)"},
		{"sp[sg - 2][i * 8 + cs]", "sp[(sg - 2)][((i * 8) + cs)]"},
		{"as_type<float>(u) + float4(v).x", "(as_type<float>(u) + float4(v).x)"},
		{"-x++ & ~y", "((-(x++)) & (~y))"},
		{"a < b && c >= d || !e", "(((a < b) && (c >= d)) || (!e))"},
		{"(a) - b", "((a) - b)"},
		{"f(x, y)[2]->z", "f(x, y)[2]->z"},
		{"metal::max(a, b)", "metal::max(a, b)"},
		{"x << 2 >> 1", "((x << 2) >> 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			src := "kernel void k() { " + tt.give + "; }\n"
			f, err := Parse("k.metal", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			pos := strings.Index(src, tt.give)
			x, err := f.ParseExpr(pos, pos+len(tt.give))
			if err != nil {
				t.Fatal(err)
			}
			if got := show(f, x); strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(tt.want, " ", "") {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if p, e := x.Span(); p != pos || e != pos+len(tt.give) {
				t.Errorf("span [%d,%d), want [%d,%d)", p, e, pos, pos+len(tt.give))
			}
		})
	}
}

func TestParseExprErrors(t *testing.T) {
	for _, give := range []string{"a +", "(a", "a ? b", "f(a,", "a b"} {
		src := "kernel void k() { " + give + "; }\n"
		f, _ := Parse("k.metal", []byte(src))
		pos := strings.Index(src, give)
		if x, err := f.ParseExpr(pos, pos+len(give)); err == nil {
			t.Errorf("%q parsed as %s, want an error", give, show(f, x))
		}
	}
}

// show renders an expression tree with explicit grouping.
func show(f *File, x Expr) string {
	switch x := x.(type) {
	case *BinaryExpr:
		return "(" + show(f, x.X) + " " + x.Op + " " + show(f, x.Y) + ")"
	case *UnaryExpr:
		if x.Postfix {
			return "(" + show(f, x.X) + x.Op + ")"
		}
		return "(" + x.Op + show(f, x.X) + ")"
	case *CastExpr:
		return "(cast<" + x.Type + "> " + show(f, x.X) + ")"
	case *CondExpr:
		return show(f, x.C) + " ? " + show(f, x.X) + " : " + show(f, x.Y)
	case *IndexExpr:
		return show(f, x.X) + "[" + show(f, x.I) + "]"
	case *ParenExpr:
		return "(" + show(f, x.X) + ")"
	}
	p, e := x.Span()
	return f.Text(p, e)
}

const factsKernel = `struct P { uint n; float scale; };
kernel void k(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
              constant P &p [[buffer(2)]], uint lane [[thread_index_in_simdgroup]],
              uint sg [[simdgroup_index_in_threadgroup]])
{
    threadgroup float s[2][32];
    threadgroup float *q = s[1];
    float acc = 0.0f;
    uint t = lane;
    for (uint i = 0; i < 4; ++i) {
        acc += in[i * 32 + lane] * p.scale;
        s[sg & 1][lane] = acc;
        if (acc > 0.0f) continue;
        t = acc > 1.0f ? t + 1 : t;
    }
    q[lane] = acc;
    out[lane] = acc + float(t);
}
`

func TestEffects(t *testing.T) {
	f, sc := parseOne(t, factsKernel)
	loop := stmtAt(t, f, sc, 10)
	e := sc.Effects(loop)
	names := func(m map[*Var]bool) string {
		var out []string
		for v := range m {
			out = append(out, v.Name)
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	if got := names(e.Writes); got != "acc,i,t" {
		t.Errorf("writes = %s", got)
	}
	if got := names(e.Reads); got != "acc,i,in,lane,p,s,sg,t" {
		t.Errorf("reads = %s", got)
	}
	var acc []string
	for _, a := range e.Accesses {
		acc = append(acc, fmt.Sprintf("%s:%d:r%v:w%v", a.Var.Name, a.Space, a.Read, a.Write))
	}
	if got := strings.Join(acc, " "); got != "in:1:rtrue:wfalse p:2:rtrue:wfalse s:3:rfalse:wtrue" {
		t.Errorf("accesses = %s", got)
	}
	if len(e.Jumps) != 1 || e.Jumps[0].Kind != "continue" || e.Jumps[0].Loops != 1 {
		t.Errorf("jumps = %+v", e.Jumps)
	}
	// The alias q = s[1] is an address, not an access.
	if e := sc.Effects(stmtAt(t, f, sc, 7)); len(e.Accesses) != 0 {
		t.Errorf("alias initialiser accesses %v", e.Accesses)
	}
}

func TestLoopFacts(t *testing.T) {
	f, sc := parseOne(t, factsKernel)
	loop := stmtAt(t, f, sc, 10).(*For)
	l, why := sc.CountLoop(loop)
	if l == nil || l.Trips != 4 || l.Var != "i" || l.VarType != "uint" || fmt.Sprint(l.Values) != "[0 1 2 3]" {
		t.Fatalf("CountLoop = %+v, %s", l, why)
	}
	lf := sc.LoopFacts(loop)
	if !lf.RunsOnce() {
		t.Error("a 4-iteration loop runs at least once")
	}
	body := loop.Body.(*Block)
	if ok, _ := sc.OnEveryIteration(body, body.Stmts[1]); !ok {
		t.Error("the store before the continue runs every iteration")
	}
	if ok, why := sc.OnEveryIteration(body, body.Stmts[3]); ok || !strings.Contains(why, "a continue at 13:25 may skip it") {
		t.Errorf("after the continue: %v %s", ok, why)
	}
	for _, tt := range []struct {
		name string
		want bool
	}{{"lane", true}, {"t", false}, {"acc", false}, {"sg", true}} {
		v := sc.Lookup(tt.name, loop.Pos)
		if ok, _ := sc.Invariant(lf, v); ok != tt.want {
			t.Errorf("Invariant(%s) = %v, want %v", tt.name, ok, tt.want)
		}
	}
}

func TestTypeOf(t *testing.T) {
	src := `struct P { uint n; };
kernel void k(constant P &p [[buffer(0)]], device const half4 *h [[buffer(1)]], uint3 tp [[thread_position_in_grid]], ushort u [[thread_index_in_simdgroup]])
{
    size_t row = 0;
    int s = 1;
    X;
}
`
	tests := []struct{ give, want string }{
		{"p.n", "uint"}, {"(size_t)s * p.n", "ulong"}, {"row * 4 + p.n", "ulong"}, {"s + 1", "int"},
		{"s + 1u", "uint"}, {"u + u", "int"}, {"tp.x", "uint"}, {"tp.xy", "uint2"}, {"h[0]", "half4"},
		{"h[0].x", "half"}, {"max(s, 0)", "int"}, {"1l", "long"}, {"s < 2", "bool"}, {"2.0h", "half"},
	}
	for _, tt := range tests {
		f, err := Parse("k.metal", []byte(strings.Replace(src, "X", tt.give, 1)))
		if err != nil {
			t.Fatal(err)
		}
		sc := ScopeOf(f, f.Func("k"))
		pos := strings.Index(string(f.Src), tt.give+";")
		x, err := f.ParseExpr(pos, pos+len(tt.give))
		if err != nil {
			t.Fatal(err)
		}
		if got := sc.TypeOf(x); got != tt.want {
			t.Errorf("TypeOf(%s) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestThreadFootprints(t *testing.T) {
	src := `constant bool FC [[function_constant(0)]];
kernel void k(device float *out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]])
{
    threadgroup float a[64];
    threadgroup float b[64];
    if (sg == 0) {
        a[lane] = 1.0f;
        a[lane + 32] = 2.0f;
    }
    if (sg == 0) {
        for (uint i = 0; i < 2; ++i) {
            uint c = lane + 32 * i;
            b[c] = a[c];
        }
    }
    if (FC) {
        b[lane] = a[(lane + 1) % 32];
    } else {
        b[lane] = 0.0f;
    }
    out[sg * 32 + lane] = b[lane];
}
`
	f, sc := parseOne(t, src)
	w := sc.ThreadFootprints([]Stmt{stmtAt(t, f, sc, 6)})
	same := sc.ThreadFootprints([]Stmt{stmtAt(t, f, sc, 10)})
	other := sc.ThreadFootprints([]Stmt{stmtAt(t, f, sc, 16)})
	for _, fp := range []*Footprints{w, same, other} {
		if fp.Why() != "" {
			t.Fatalf("unknown: %v", fp.Unknown)
		}
	}
	if len(w.Scenarios) != 2 || len(other.Scenarios) != 2 {
		t.Errorf("scenarios: %d and %d, want 2 each (FC false and true)", len(w.Scenarios), len(other.Scenarios))
	}
	if cs := Conflicts(w, same); len(cs) != 0 {
		t.Errorf("each lane reads what it wrote, yet: %v", cs[0])
	}
	// Only when FC is true does thread 0 read element 1, which thread 1
	// wrote.
	if len(w.Scenarios[0].Touches) == 0 {
		t.Fatal("no touches")
	}
	cs := Conflicts(sc.ThreadFootprints([]Stmt{stmtAt(t, f, sc, 6)}), other)
	if len(cs) == 0 {
		t.Fatal("no conflict between lane's stores and the neighbour's loads")
	}
	if got := cs[0].String(); !strings.Contains(got, "of a") || !strings.Contains(got, "(FC=true)") {
		t.Errorf("conflict = %s", got)
	}
	// Must-writes: every store of the first statement happens whenever the
	// thread runs it.
	for _, tt := range w.Scenarios[0].Touches {
		for _, x := range tt {
			if !x.Must || x.Off < 0 || x.Thread >= 32 {
				t.Errorf("touch %+v: want a definite store by a thread of SIMD group 0", x)
			}
		}
	}
}

func TestThreadFootprintsUnknown(t *testing.T) {
	src := `kernel void k(device float *out [[buffer(0)]], device const uint *idx [[buffer(1)]], uint tid [[thread_index_in_threadgroup]])
{
    threadgroup float a[64];
    a[idx[tid]] = 1.0f;
    out[tid] = a[tid];
}
`
	f, sc := parseOne(t, src)
	w := sc.ThreadFootprints([]Stmt{stmtAt(t, f, sc, 4)})
	r := sc.ThreadFootprints([]Stmt{stmtAt(t, f, sc, 5)})
	if cs := Conflicts(w, r); len(cs) == 0 || cs[0].A.Off >= 0 {
		t.Errorf("a store to a loaded index may hit any element: %v", cs)
	}
}
