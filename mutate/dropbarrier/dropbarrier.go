package dropbarrier

import (
	_ "embed"
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
				Choices: []mutate.Choice{{Name: "drop", Message: "remove the barrier", Edits: []edit.Edit{mutate.RemoveStmt(src, s.Pos, s.End, bodies[s] || mutate.AfterLabel(p.File, s.Pos))}}},
			})
		}
		return true
	})
	return nil
}
