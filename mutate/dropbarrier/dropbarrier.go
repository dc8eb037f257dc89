package dropbarrier

import (
	_ "embed"
	"sort"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

//go:embed doc.go
var doc string

// Mutation is the drop-barrier mutation.
var Mutation = &mutate.Mutation{
	Name: "drop-barrier",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

func run(p *mutate.Pass) error {
	src := p.File.Src
	// Barriers that are the direct body of a control statement.
	bodies := map[msl.Stmt]bool{}
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		switch s := s.(type) {
		case *msl.For:
			bodies[s.Body] = true
		case *msl.While:
			bodies[s.Body] = true
		case *msl.Do:
			bodies[s.Body] = true
		case *msl.If:
			bodies[s.Then] = true
			if s.Else != nil {
				bodies[s.Else] = true
			}
		case *msl.Switch:
			bodies[s.Body] = true
		case *msl.MacroUse:
			if s.Hides == "barrier" {
				p.Skip(mutate.Skip{Pos: s.Pos, End: s.End, Reason: "barrier hidden behind macro " + s.Name})
			}
		case *msl.Barrier:
			p.Report(mutate.Site{
				Pos:     s.Pos,
				End:     s.End,
				Message: strings.Join(strings.Fields(string(src[s.Pos:s.End])), " "),
				Choices: []mutate.Choice{{Name: "drop", Message: "remove the barrier", Edits: []edit.Edit{removal(src, s, bodies[s] || afterLabel(p.File, s.Pos))}}},
			})
		}
		return true
	})
	return nil
}

// afterLabel reports whether the significant token before off is the colon
// of a label or case: a label must label a statement, so a barrier there is
// replaced by `;` rather than removed.
func afterLabel(f *msl.File, off int) bool {
	i := sort.Search(len(f.Tokens), func(i int) bool { return f.Tokens[i].Pos >= off })
	for i--; i >= 0; i-- {
		switch f.Tokens[i].Kind {
		case msl.Comment, msl.Directive, msl.Skipped:
			continue
		}
		return f.Tokens[i].Text == ":"
	}
	return false
}

// removal returns the edit that removes barrier b from src.
func removal(src []byte, b *msl.Barrier, body bool) edit.Edit {
	if body {
		return edit.Edit{Start: b.Pos, End: b.End, New: ";"}
	}
	start, first := mutate.LineStart(src, b.Pos)
	next, last := mutate.LineEnd(src, b.End)
	if !last && lineComment(src, b.End) {
		// A trailing // comment is about the barrier; it goes with it.
		last = true
	}
	switch {
	case first && last:
		return edit.Edit{Start: start, End: next}
	case last:
		// Trailing statement: drop the spaces before it too.
		i := b.Pos
		for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
			i--
		}
		return edit.Edit{Start: i, End: b.End}
	default:
		i := b.End
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		return edit.Edit{Start: b.Pos, End: i}
	}
}

// lineComment reports whether only spaces and tabs separate off from a //
// comment.
func lineComment(src []byte, off int) bool {
	for off < len(src) && (src[off] == ' ' || src[off] == '\t') {
		off++
	}
	return off+1 < len(src) && src[off] == '/' && src[off+1] == '/'
}
