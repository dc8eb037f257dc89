package msl

import (
	"fmt"
	"path/filepath"
	"strings"
)

// At names the place of byte offset off for messages: "line:col" in the
// file the user gave; in a macro's expansion (an Expansion's File, whose
// text is one line of its own), the macro's use in that file and the
// macro: "reduce.metal:640:1 (inside the expansion of impl_reduce)" (with
// the macros it was expanded through, innermost first, when expansions
// nest).
func (f *File) At(off int) string {
	if f.parent == nil {
		p := f.Position(off)
		return fmt.Sprintf("%d:%d", p.Line, p.Column)
	}
	var names []string
	g, at := f, off
	for g.parent != nil {
		names = append(names, g.macro)
		g, at = g.parent, g.parentAt
	}
	p := g.Position(at)
	return fmt.Sprintf("%s:%d:%d (inside the expansion of %s)", filepath.Base(g.Name), p.Line, p.Column, strings.Join(names, " in "))
}
