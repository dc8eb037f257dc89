package msl

import (
	"os"
	"testing"
)

// TestSelfNestingMacroExpansion parses a fuzzer's file whose macro use
// expands to text that uses it again: each expansion was parsed inside the
// one before without end, every level's name lookups walking the levels
// above it, so Parse never returned. Nesting now stops at maxMacroNesting
// levels and the expansions share one token budget.
func TestSelfNestingMacroExpansion(t *testing.T) {
	src, err := os.ReadFile("testdata/self_nesting_macro.metal")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := Parse("self_nesting_macro.metal", src)
	if f == nil {
		t.Fatal("no file parsed")
	}
	depth := 0
	for _, e := range f.Expansions {
		for d, x := 1, e.File; x != nil; d++ {
			if d > depth {
				depth = d
			}
			if len(x.Expansions) == 0 {
				break
			}
			x = x.Expansions[0].File
		}
	}
	if depth > maxMacroNesting {
		t.Errorf("expansions nested %d deep, want at most %d", depth, maxMacroNesting)
	}
}
