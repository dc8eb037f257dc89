package preadd

import (
	"strings"
	"testing"

	"metalab/msl"
)

// TestMacroType types subscripts that use macros: by the expansion where
// it is used, or not at all, with the reason.
func TestMacroType(t *testing.T) {
	src := "#define K_TILE 128u\n#define K_L 3l\n#define K_PAR (K_TILE * 2)\n#define K_INT 7\n#define K_BIG 0x80000000\n" +
		"#define K_F 1.5f\n#define K_H 2.0h\n#define K_VAR i\n#define K_CALL f(1)\n#define K_FN(x) x\n#define K_EMPTY\n#define K_ONCE 1u\n#undef K_ONCE\n#define K_ONCE 1\n" +
		"kernel void k(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n" +
		"  a[i + K_TILE] = 0; a[i + K_L] = 0; a[i + K_PAR] = 0; a[i + K_INT] = 0; a[i + K_BIG] = 0;\n" +
		"  a[i + K_F] = 0; a[i + K_H] = 0; a[i + K_VAR] = 0; a[i + K_CALL] = 0; a[i + K_FN(1)] = 0; a[i + K_EMPTY] = 0; a[i + K_ONCE] = 0;\n}\n"
	f, err := msl.Parse("k.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sc := msl.ScopeOf(f, f.Funcs[0])
	tests := []struct{ name, typ, reason string }{
		{"K_TILE", "uint", ""},
		{"K_L", "long", ""},
		{"K_PAR", "uint", ""},
		{"K_INT", "int", ""},
		{"K_BIG", "", `macro K_BIG expands to "0x80000000", a non-decimal literal above INT_MAX, which C++ may make unsigned`},
		{"K_F", "", `macro K_F expands to "1.5f", a floating-point value`},
		{"K_H", "", `macro K_H expands to "2.0h", a floating-point value`},
		{"K_VAR", "", `macro K_VAR expands to "i", which uses i, not a constant`},
		{"K_CALL", "", `macro K_CALL expands to "f(1)", not a constant integer expression`},
		{"K_FN", "", "macro K_FN is function-like"},
		{"K_EMPTY", "", "macro K_EMPTY does not expand to an expression"},
		{"K_ONCE", "", "macro K_ONCE has 2 different definitions"},
	}
	at := strings.Index(src, "kernel")
	for _, tt := range tests {
		typ, reason := macroType(f, tt.name, at)
		if typ != tt.typ || reason != tt.reason {
			t.Errorf("%s: type %q, reason %q; want %q, %q", tt.name, typ, reason, tt.typ, tt.reason)
		}
	}
	// A subscript: a uint variable plus a uint macro is uint.
	var idx []msl.Expr
	msl.Walk(f.Funcs[0].Body, func(s msl.Stmt) bool {
		for _, x := range sc.Exprs(s) {
			if ix, ok := x.(*msl.BinaryExpr); ok && ix.Op == "=" {
				if ie, ok := ix.X.(*msl.IndexExpr); ok {
					idx = append(idx, ie.I)
				}
			}
		}
		return true
	})
	if len(idx) == 0 {
		t.Fatal("no subscripts found")
	}
	if typ, reason := typeOf(sc, idx[0]); typ != "uint" || reason != "" {
		t.Errorf("i + K_TILE: type %q, reason %q; want uint", typ, reason)
	}
	if typ, reason := typeOf(sc, idx[5]); typ != "" || !strings.Contains(reason, "floating-point") {
		t.Errorf("i + K_F: type %q, reason %q; want a floating-point reason", typ, reason)
	}
}
