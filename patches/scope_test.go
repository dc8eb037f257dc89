package patches_test

import (
	"strings"
	"testing"

	"metalab/msl"
	"metalab/patches"
)

// TestCheckFuncScopeEdges tries the scope guard at its edges: a change
// that starts inside the function and runs past its end, one that starts
// before it and ends inside, changes after a large deletion (the offsets
// of later changes must count the deleted bytes), every overload of an
// owned name, and an insertion at the function's first byte or after its
// last.
func TestCheckFuncScopeEdges(t *testing.T) {
	long := "  " + strings.Repeat("z", 300) + " = 0;\n"
	src := "// head\n" +
		"void helper() {\n" + long + "  x = 1;\n}\n" +
		"kernel void k(int a) {\n  y = a;\n}\n" +
		"kernel void k(float a) {\n  y = 2;\n}\n" +
		"// tail\n"
	span := func(from, to string, nth int) (int, int) {
		p := 0
		for i := 0; i <= nth; i++ {
			p += strings.Index(src[p:], from)
			if i < nth {
				p++
			}
		}
		return p, p + strings.Index(src[p:], to) + len(to)
	}
	hp, he := span("void helper", "}", 0)
	k1p, k1e := span("kernel void k(int", "}", 0)
	k2p, k2e := span("kernel void k(float", "}", 0)
	f := fakeFile(src,
		&msl.Func{Name: "helper", Pos: hp, End: he, Body: &msl.Block{}},
		&msl.Func{Name: "k", Kind: msl.Kernel, Pos: k1p, End: k1e, Body: &msl.Block{}},
		&msl.Func{Name: "k", Kind: msl.Kernel, Pos: k2p, End: k2e, Body: &msl.Block{}},
	)
	tests := []struct {
		name    string
		vari    string
		fns     []string
		wantErr string
	}{
		{"second_overload", strings.Replace(src, "y = 2", "y = 3", 1), []string{"k"}, ""},
		{"first_overload", strings.Replace(src, "y = a", "y = a + 1", 1), []string{"k"}, ""},
		{"into_tail", strings.Replace(src, "  y = 2;\n}\n// tail\n", "  y = 3;\n}\n// tail!\n", 1), []string{"k"}, "k.metal:12: change outside k"},
		{"across_end", strings.Replace(src, "  y = 2;\n}\n// tail\n", "  y = 3; }\n// tail!\n", 1), []string{"k"}, "change outside k"},
		{"across_start", strings.Replace(src, "// head\nvoid helper() {\n", "// head! void helper() {\n", 1), []string{"helper"}, "k.metal:1: change outside helper"},
		{"from_head", strings.Replace(src, "// head\nvoid helper() {\n", "// head!\nvoid helper() {\n  w = 0;\n", 1), []string{"helper"}, "k.metal:1: change outside helper"},
		{"over_two_functions", strings.Replace(src, "  x = 1;\n}\nkernel void k(int a) {\n  y = a;", "  x = 2;\n}\nkernel void k(int a) {\n  y = b;", 1), []string{"helper"}, "change outside helper"},
		{"after_deletion_inside", strings.Replace(strings.Replace(src, long, "", 1), "x = 1", "x = 2", 1), []string{"helper"}, ""},
		{"after_deletion_outside", strings.Replace(strings.Replace(src, long, "", 1), "// tail", "// tail!", 1), []string{"helper"}, "k.metal:12: change outside helper"},
		{"insert_before_first_byte", strings.Replace(src, "void helper", "static void helper", 1), []string{"helper"}, "k.metal:2: change outside helper"},
		{"insert_after_last_byte", strings.Replace(src, "  x = 1;\n}\n", "  x = 1;\n}\n// more\n", 1), []string{"helper"}, "change outside helper"},
		{"first_byte_inside", strings.Replace(src, "void helper() {", "void helper2() {", 1), []string{"helper"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.vari == src {
				t.Fatal("the variant is the base")
			}
			err := patches.CheckFuncScope([]byte(src), []byte(tt.vari), f, tt.fns)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckFuncScope: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckFuncScope error = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}
