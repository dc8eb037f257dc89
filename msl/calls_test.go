package msl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestCallsGolden lists, for each archive of testdata/calls, what every
// entry point reaches (Reached, with its instantiation's template
// arguments) and the calls on the way whose callee cannot be told, then
// each helper's CallContext and the kernels that may run it, and compares
// the listing with want.txt (-update rewrites it).
func TestCallsGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/calls/*.txtar")
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
			f, err := Parse("input.metal", src)
			if err != nil {
				t.Fatal(err)
			}
			got := dumpCalls(f)
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
				t.Errorf("call listing mismatch (run with -update to accept)\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

// dumpCalls renders the call graph of f for golden tests.
func dumpCalls(f *File) string {
	var b strings.Builder
	name := func(g *Func) string {
		return fmt.Sprintf("%s@%s", QualifiedName(g), f.owner(g).At(g.NamePos))
	}
	for _, ep := range f.EntryPoints() {
		fn, targs, err := f.Entry(ep.Name)
		if err != nil {
			fmt.Fprintf(&b, "entry %s: %v\n", ep.Name, err)
			continue
		}
		fs, unknown := f.Reached(fn, targs)
		var names []string
		for _, g := range fs {
			names = append(names, name(g))
		}
		fmt.Fprintf(&b, "entry %s reaches %s\n", ep.Name, strings.Join(names, " "))
		for _, u := range unknown {
			fmt.Fprintf(&b, "  unknown %s at %s %s: %s\n", QualifiedName(u.Caller), f.owner(u.Caller).At(u.Pos), u.Method, u.Why)
		}
	}
	for _, g := range f.Functions() {
		if g.Kind == Kernel {
			continue
		}
		ks, unknown := f.KernelsMayReach(g)
		var kn []string
		for _, k := range ks {
			kn = append(kn, k.Name)
		}
		fmt.Fprintf(&b, "helper %s: %s\n  may run in: [%s] unknown=%v\n", name(g), f.CallContext(g), strings.Join(kn, " "), unknown)
	}
	return b.String()
}
