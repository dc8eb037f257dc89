package translate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
)

// TestVetHostile vets the variants of testdata/hostile, written as an
// attacker would write a kernel that forges its verdict: each marked
// "// refuse L:C: TEXT" (or "// refuse @N: TEXT", at the token after the
// comment /*@N*/ in the source) must be refused with that refusal among
// the others, and each marked "// admit" (legal Metal that looks like one
// of them) must pass. A hostile variant admitted fails the test.
func TestVetHostile(t *testing.T) {
	dir := filepath.Join("testdata", "hostile")
	paths, err := filepath.Glob(filepath.Join(dir, "*.metal"))
	if err != nil || len(paths) < 40 {
		t.Fatalf("hostile variants: %v (%d found)", err, len(paths))
	}
	refused, admitted := 0, 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		var want []string
		admit := false
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "// refuse "); ok {
				want = append(want, strings.TrimSpace(rest))
			} else if strings.TrimSpace(line) == "// admit" {
				admit = true
			} else if !strings.HasPrefix(line, "//") {
				break
			}
		}
		if admit == (len(want) > 0) {
			t.Errorf("%s: say either // admit or // refuse L:C: TEXT", name)
			continue
		}
		err = Vet(backend.Source{Name: name, Text: b, Dir: dir}, nil)
		if admit {
			admitted++
			if err != nil {
				t.Errorf("%s: legal Metal refused:\n%v", name, err)
			}
			continue
		}
		refused++
		var r *Refusal
		if !errors.As(err, &r) {
			t.Errorf("%s: ADMITTED (or not refused: %v), want %q", name, err, want)
			continue
		}
		for _, w := range want {
			pos, text, _ := strings.Cut(w, ": ")
			if strings.HasPrefix(pos, "@") {
				pos = markerPos(string(b), "/*"+pos+"*/")
			}
			found := false
			for _, e := range r.Errors {
				if fmt.Sprintf("%d:%d", e.Pos.Line, e.Pos.Column) == pos && strings.Contains(e.Msg, text) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no refusal %q among\n%s", name, w, r.Report())
			}
		}
	}
	t.Logf("%d hostile variants refused, %d look-alikes admitted", refused, admitted)
}

// markerPos returns "line:col" of the character after marker in text, or
// "marker not found".
func markerPos(text, marker string) string {
	k := strings.Index(text, marker)
	if k < 0 {
		return marker + " not found"
	}
	k += len(marker)
	line := 1 + strings.Count(text[:k], "\n")
	col := k - strings.LastIndex(text[:k], "\n")
	return fmt.Sprintf("%d:%d", line, col)
}
