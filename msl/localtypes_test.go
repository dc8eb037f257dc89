package msl

import (
	"strings"
	"testing"
)

// TestCastToTemplateParameter parses ggml's C-style casts to pointers of a
// type template parameter, (device const T *) (src0 + ...) and
// (threadgroup T0 *) shmem, as casts, and T(x) as a conversion; a value
// template parameter in parentheses stays a parenthesised value.
func TestCastToTemplateParameter(t *testing.T) {
	src := `template <typename T, typename T0, int N>
kernel void k(device const char *src0, threadgroup char *shmem, device float *out, uint i) {
    device const T *x = (device const T *) (src0 + i * 16);
    threadgroup T0 *s = (threadgroup T0 *) shmem;
    out[i] = float(T(x[i])) + float(s[i]) + (N) * 2;
}
`
	f, err := Parse("k.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	fn := f.Func("k")
	sc := ScopeOf(f, fn)
	casts := 0
	for _, st := range fn.Body.Stmts {
		p, e := st.Span()
		x, err := f.ParseExpr(p, e-1)
		if d, ok := st.(*Decl); ok {
			pos, end, _ := f.InitExpr(d.Names[0])
			x, err = f.ParseExpr(pos, end)
		}
		if err != nil {
			t.Fatalf("%q: %v", f.Text(p, e), err)
		}
		InspectExpr(x, func(e Expr) bool {
			if c, ok := e.(*CastExpr); ok {
				casts++
				if !strings.HasSuffix(c.Type, "*") {
					t.Errorf("cast to %q, want a pointer type", c.Type)
				}
			}
			return true
		})
	}
	if casts != 2 {
		t.Errorf("%d casts, want 2", casts)
	}
	if !sc.isPure("T") || sc.isPure("N") {
		t.Errorf("isPure(T) = %v, isPure(N) = %v; want a conversion to T and N not a type", sc.isPure("T"), sc.isPure("N"))
	}
	if e := sc.Effects(fn.Body.Stmts[2]); len(e.Unknown) > 0 {
		t.Errorf("out[i] = ...: unknown effects %v", e.Unknown)
	}
}
