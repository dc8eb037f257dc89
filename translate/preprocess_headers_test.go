package translate

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"metalab/backend/cpu/prelude"
)

// TestMetalHeadersCoverPrelude: every Metal header the prelude provides
// is one the preprocessor finds (as an empty stand-in), so a kernel that
// includes it preprocesses.
func TestMetalHeadersCoverPrelude(t *testing.T) {
	ents, err := fs.ReadDir(prelude.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || strings.Contains(name, ".") || !strings.HasPrefix(name, "metal_") {
			continue
		}
		n++
		if !slices.Contains(metalHeaders, name) {
			t.Errorf("the prelude provides <%s> but the preprocessor does not find it", name)
		}
	}
	if n < 10 {
		t.Fatalf("found only %d prelude headers", n)
	}
}
