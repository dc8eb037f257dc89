package msl

import "fmt"

func ExampleLex() {
	src := []byte("#define N 4\nx[[thread_position_in_grid]] = 1.0h; // done\n")
	toks, err := Lex("ex.metal", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range toks {
		fmt.Printf("%-9s %q\n", kindName[t.Kind], t.Text)
	}
	// Output:
	// Directive "#define N 4"
	// Ident     "x"
	// Attribute "[[thread_position_in_grid]]"
	// Punct     "="
	// Float     "1.0h"
	// Punct     ";"
	// Comment   "// done"
}

func ExampleEnv_Eval() {
	f, _ := Parse("ex.metal", []byte(`
#define TILE 16
constexpr constant int NSG = 4;
enum { ROWS = 2 };
`))
	env := &Env{File: f, Defines: map[string]string{"EXTRA": "1"}}
	fmt.Println(env.Eval("TILE * NSG * ROWS + EXTRA"))
	fmt.Println(env.Eval("sizeof(half3) + sizeof(packed_float3)"))
	fmt.Println(env.Eval("TILE * unknown_value"))
	// Output:
	// 129 true
	// 20 true
	// 0 false
}
