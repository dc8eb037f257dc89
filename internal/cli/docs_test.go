package cli

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"metalab/internal/cli/cmdutil"
	"metalab/measure"
)

// TestRuleFieldsDocumented checks that docs/sweep.md documents every
// field of a --rule file (measure.Rule's JSON) with its default, and that
// metalab --help points there.
func TestRuleFieldsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/sweep.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, "\n## The decision rule\n")
	if i < 0 {
		t.Fatal(`docs/sweep.md has no "## The decision rule" section`)
	}
	section := text[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	if !strings.Contains(section, string(measure.DefaultRule().JSON())) {
		t.Errorf("the section does not show the default rule %s", measure.DefaultRule().JSON())
	}
	rt := reflect.TypeOf(measure.Rule{})
	for k := range rt.NumField() {
		tag := strings.Split(rt.Field(k).Tag.Get("json"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		if !strings.Contains(section, "\n| `"+tag+"` |") {
			t.Errorf("the decision rule's table has no row for field %q", tag)
		}
	}
	ios, _, out, _ := cmdutil.Test()
	if code := Run(&cmdutil.Factory{IOStreams: ios, ReadFile: os.ReadFile}, []string{"--help"}); code != ExitOK {
		t.Fatalf("--help exit %d", code)
	}
	if !strings.Contains(out.String(), "docs/sweep.md#the-decision-rule") {
		t.Errorf("metalab --help does not point to the rule's documentation:\n%s", out)
	}
}
