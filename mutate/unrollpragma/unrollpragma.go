package unrollpragma

import (
	_ "embed"
	"fmt"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

//go:embed doc.go
var doc string

// Mutation is the unroll-pragma mutation.
var Mutation = &mutate.Mutation{
	Name: "unroll-pragma",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

func run(p *mutate.Pass) error {
	src := p.File.Src
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		switch s := s.(type) {
		case *msl.While:
			p.Skip(mutate.Skip{Pos: s.Pos, End: s.Pos + len("while"), Reason: "while loop: only for loops get unroll pragmas"})
		case *msl.Do:
			p.Skip(mutate.Skip{Pos: s.Pos, End: s.Pos + len("do"), Reason: "do loop: only for loops get unroll pragmas"})
		case *msl.MacroUse:
			if s.Hides == "loop" {
				p.Skip(mutate.Skip{Pos: s.Pos, End: s.End, Reason: "loop hidden behind macro " + s.Name})
			}
		case *msl.For:
			header := s.Rparen + 1
			if pr := mutate.LoopPragma(s.Pragmas); pr != nil {
				why := fmt.Sprintf("loop already has pragma %q", pr.Text)
				if pr.Macro != "" {
					why = fmt.Sprintf("loop already has pragma %q from macro %s", pr.Text, pr.Macro)
				}
				p.Skip(mutate.Skip{Pos: s.Pos, End: header, Reason: why})
				return true
			}
			at, end, before, after := placement(src, s.Pos)
			l, _ := p.Scope().CountLoop(s) // the pass's scope: one per function, not one per loop
			msg := "for loop, trip count unknown"
			if l != nil {
				msg = fmt.Sprintf("for loop, trip count %d", l.Trips)
			}
			pragma := func(name, text, message string) mutate.Choice {
				return mutate.Choice{
					Name:    name,
					Message: message,
					Edits:   []edit.Edit{{Start: at, End: end, New: before + "#pragma clang loop " + text + after}},
				}
			}
			choices := []mutate.Choice{pragma("full", "unroll(full)", "unroll fully")}
			for _, n := range countFactors(l) {
				choices = append(choices, pragma(fmt.Sprintf("count%d", n), fmt.Sprintf("unroll_count(%d)", n), fmt.Sprintf("unroll by %d", n)))
			}
			choices = append(choices, pragma("disable", "unroll(disable)", "disable unrolling"))
			p.Report(mutate.Site{Pos: s.Pos, End: header, Message: msg, Choices: choices})
		}
		return true
	})
	return nil
}

// maxCount bounds the unroll_count factors offered.
const maxCount = 16

// countFactors returns the unroll_count factors to offer, ascending: 2, 4
// and 8 where they do not exceed a known trip count (2 and 4 when it is
// unknown), and every other divisor of a known trip count up to maxCount
// that is smaller than the count itself (which is unroll(full)).
func countFactors(l *msl.Loop) []int64 {
	if l == nil {
		return []int64{2, 4}
	}
	var out []int64
	for n := int64(2); n <= maxCount; n++ {
		pow := n == 2 || n == 4 || n == 8
		if pow && n <= l.Trips || n < l.Trips && l.Trips%n == 0 {
			out = append(out, n)
		}
	}
	return out
}

// placement says where a pragma line for the loop at pos goes: the edit
// replaces src[at:end] by before + pragma + after. A for first on its line
// gets the pragma on the line above, indented like the loop. A for that
// follows other code on its line (`if (c) for`, `{ for`, `} else for`) has
// the blanks before it replaced by a line break, so the pragma sits on a
// line of its own directly before the loop, and the loop moves to the next
// line; both are indented like the line the loop was on. A pragma is not a
// statement, so `if (c)` followed by the pragma line and the loop is still
// a single-statement body. A line ending in a backslash continuation would
// splice the pragma onto the line before, so a line break is put first.
//
// The edit always rewrites the `for` keyword itself (after ends with it),
// so that it conflicts with any mutation that replaces the loop (a full
// unroll, which leaves no loop for the pragma), while declarations other
// mutations insert at the start of the loop's line still compose with it.
func placement(src []byte, pos int) (at, end int, before, after string) {
	eol := mutate.EOL(src, pos)
	start, first := mutate.LineStart(src, pos)
	indentEnd := start
	for indentEnd < len(src) && (src[indentEnd] == ' ' || src[indentEnd] == '\t') {
		indentEnd++
	}
	indent := string(src[start:indentEnd])
	if first {
		if continued(src, start) {
			return start, pos + len("for"), eol + indent, eol + indent + "for"
		}
		return pos, pos + len("for"), "", eol + indent + "for"
	}
	at = pos
	for at > start && (src[at-1] == ' ' || src[at-1] == '\t') {
		at--
	}
	return at, pos + len("for"), eol + indent, eol + indent + "for"
}

// continued reports whether the line before the one starting at start ends
// in a backslash, splicing the two lines.
func continued(src []byte, start int) bool {
	i := start - 1 // the newline
	if i < 0 || src[i] != '\n' {
		return false
	}
	if i > 0 && src[i-1] == '\r' {
		i--
	}
	return i > 0 && src[i-1] == '\\'
}
