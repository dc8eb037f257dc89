package mergebarriers

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

// Mutation is the merge-barriers mutation.
var Mutation = &mutate.Mutation{
	Name: "merge-barriers",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

func run(p *mutate.Pass) error {
	f := p.File
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		blk, ok := s.(*msl.Block)
		if !ok {
			return true
		}
		for i := 1; i < len(blk.Stmts); i++ {
			a, b := blk.Stmts[i-1], blk.Stmts[i]
			if !msl.IsBarrierStmt(a) || !msl.IsBarrierStmt(b) {
				continue
			}
			ba, okA := a.(*msl.Barrier)
			bb, okB := b.(*msl.Barrier)
			bp, be := b.Span()
			if !okA || !okB {
				p.Skip(mutate.Skip{Pos: bp, End: be, Reason: "adjacent barriers, one hidden behind a macro"})
				continue
			}
			if c := mutate.Conditional(f, ba.Pos, bb.End); c != "" {
				p.Skip(mutate.Skip{Pos: bp, End: be, Reason: "adjacent barriers with " + c + " between them"})
				continue
			}
			if c, ok := merge(f, ba, bb); ok {
				p.Report(mutate.Site{Pos: bb.Pos, End: bb.End, Message: "follows another barrier directly", Choices: []mutate.Choice{c}})
			} else {
				p.Skip(mutate.Skip{Pos: bb.Pos, End: bb.End, Reason: "adjacent barriers whose memory flags cannot be combined"})
			}
		}
		return true
	})
	return nil
}

// flags returns the set of mem_flags named in a barrier's arguments, or
// false when they are not a |-list of mem_flags.
func flags(f *msl.File, b *msl.Barrier) ([]string, bool) {
	var out []string
	for _, part := range strings.Split(f.Text(b.Args.Pos, b.Args.End), "|") {
		w := strings.Join(strings.Fields(part), "")
		w = strings.TrimPrefix(w, "metal::")
		if !strings.HasPrefix(w, "mem_flags::") {
			return nil, false
		}
		out = append(out, w)
	}
	sort.Strings(out)
	return out, true
}

func merge(f *msl.File, a, b *msl.Barrier) (mutate.Choice, bool) {
	fa, okA := flags(f, a)
	fb, okB := flags(f, b)
	if !okA || !okB {
		return mutate.Choice{}, false
	}
	// The whole stretch from the end of the first barrier to the end of
	// the second is rewritten, so that nothing another choice inserts
	// between them (where the pair's proof says nothing is) can combine
	// with the merge.
	drop := dropSecond(f, a, b)
	same := strings.Join(fa, "|") == strings.Join(fb, "|")
	switch {
	case a.Name == b.Name && same, a.Name == "threadgroup_barrier" && b.Name == "simdgroup_barrier" && same:
		return mutate.Choice{Name: "merge", Message: "remove the second barrier", Edits: []edit.Edit{drop}}, true
	case b.Name == "threadgroup_barrier" && a.Name == "simdgroup_barrier" && same:
		first := mutate.RemoveStmt(f.Src, a.Pos, a.End, false)
		guard := mutate.Guards(f.Src, a.Pos, b.End, []edit.Edit{first})
		return mutate.Choice{Name: "merge", Message: "remove the first barrier, a simdgroup barrier", Edits: append([]edit.Edit{first}, guard...)}, true
	case a.Name == b.Name:
		union := append(append([]string{}, fa...), fb...)
		sort.Strings(union)
		var u []string
		for i, x := range union {
			if i == 0 || x != union[i-1] {
				u = append(u, x)
			}
		}
		return mutate.Choice{Name: "merge", Message: "one barrier with both barriers' flags", Edits: []edit.Edit{
			{Start: a.Args.Pos, End: a.Args.End, New: strings.Join(u, " | ")},
			drop,
		}}, true
	}
	return mutate.Choice{}, false
}

// dropSecond returns the edit that removes barrier b, the statement after
// barrier a, as one replacement of everything from the end of a to the end
// of b's removal.
func dropSecond(f *msl.File, a, b *msl.Barrier) edit.Edit {
	rm := mutate.RemoveStmt(f.Src, b.Pos, b.End, false)
	return edit.Edit{Start: a.End, End: rm.End, New: string(f.Src[a.End:rm.Start]) + rm.New}
}
