package all_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"metalab/mutate"
	"metalab/mutate/all"
)

// registered pins the registry: the mutations metalab ships, by name, in
// the order commands list them. Adding, removing or reordering a mutation
// changes what every command shows, so it must change this list too, on
// purpose and in the same commit.
var registered = []string{
	"unroll-pragma",
	"unroll",
	"hoist",
	"preadd",
	"split-partials",
	"cross-barrier",
	"merge-barriers",
	"elide-barrier",
	"drop-barrier",
}

func TestRegistry(t *testing.T) {
	var got []string
	for _, m := range all.Mutations {
		if m == nil {
			t.Fatalf("all.Mutations holds nil: %v", got)
		}
		got = append(got, m.Name)
	}
	if !slices.Equal(got, registered) {
		t.Errorf("all.Mutations = %q, want %q: update the pin in this test when the registry changes on purpose", got, registered)
	}
}

// TestEveryPackageRegistered checks that each mutation package under
// mutate/ (one that declares `var Mutation = &mutate.Mutation{Name: ...}`)
// is in the registry, so a new mutation cannot be forgotten there.
func TestEveryPackageRegistered(t *testing.T) {
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		name, ok := declaredMutation(t, filepath.Join("..", d.Name()))
		if !ok {
			continue
		}
		found = append(found, name)
		if all.Lookup(name) == nil {
			t.Errorf("package mutate/%s declares mutation %q, which all.Mutations lacks", d.Name(), name)
		}
	}
	if len(found) != len(registered) {
		t.Errorf("mutation packages under mutate/ declare %q; the registry pins %q", found, registered)
	}
}

// declaredMutation returns the Name of the package-level Mutation that
// the Go files of dir (tests aside) declare.
func declaredMutation(t *testing.T, dir string) (string, bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if id.Name != "Mutation" || i >= len(vs.Values) {
						continue
					}
					if name, ok := nameField(vs.Values[i]); ok {
						return name, true
					}
					t.Fatalf("%s: var Mutation has no literal Name field", path)
				}
			}
		}
	}
	return "", false
}

// nameField returns the string literal of the Name field of &T{...}.
func nameField(e ast.Expr) (string, bool) {
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
			if b, ok := kv.Value.(*ast.BasicLit); ok && b.Kind == token.STRING {
				s, err := strconv.Unquote(b.Value)
				return s, err == nil
			}
		}
	}
	return "", false
}

func TestValidate(t *testing.T) {
	if len(all.Mutations) == 0 {
		t.Fatal("the registry is empty")
	}
	if err := mutate.Validate(all.Mutations); err != nil {
		t.Fatal(err)
	}
	for _, m := range all.Mutations {
		// The doc's summary line names the mutation, as its doc.go promises.
		if !strings.Contains(m.Doc, m.Name+": ") {
			t.Errorf("%s: Doc lacks the %q summary line:\n%s", m.Name, m.Name+": ", m.Doc)
		}
		if all.Lookup(m.Name) != m {
			t.Errorf("Lookup(%q) does not return it", m.Name)
		}
	}
	if all.Lookup("nope") != nil {
		t.Error("Lookup(nope) != nil")
	}
}
