package all_test

import (
	"strings"
	"testing"

	"metalab/mutate"
	"metalab/mutate/all"
)

func TestValidate(t *testing.T) {
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
