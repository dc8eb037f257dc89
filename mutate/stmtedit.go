package mutate

import (
	"fmt"
	"sort"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
)

// RemoveStmt returns the edit that removes statement [pos, end) from src:
// the whole line, a trailing // comment included, when the statement is
// alone on its line (so no blank line is left), otherwise just the
// statement and the spaces that separate it from its neighbours. With
// empty set (a statement that is the body of an if, for, while or do, or
// that follows a label), it is replaced by an empty statement `;` so the
// control flow around it keeps its shape.
func RemoveStmt(src []byte, pos, end int, empty bool) edit.Edit {
	if empty {
		return edit.Edit{Start: pos, End: end, New: ";"}
	}
	start, first := LineStart(src, pos)
	next, last := LineEnd(src, end)
	if !last && lineCommentFollows(src, end) {
		// A trailing // comment is about the statement; it goes with it.
		last = true
	}
	switch {
	case first && last:
		return edit.Edit{Start: start, End: next}
	case last:
		// Trailing statement: drop the spaces before it too.
		i := pos
		for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
			i--
		}
		return edit.Edit{Start: i, End: end}
	default:
		i := end
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		return edit.Edit{Start: pos, End: i}
	}
}

// NeedsEmpty reports whether removing s must leave an empty statement: it
// is the direct body of a control statement, or it follows a label or a
// case.
func NeedsEmpty(f *msl.File, parents map[msl.Stmt]msl.Stmt, s msl.Stmt) bool {
	if _, ok := parents[s].(*msl.Block); !ok && parents[s] != nil {
		return true
	}
	pos, _ := s.Span()
	return AfterLabel(f, pos)
}

// AfterLabel reports whether the significant token before off is the
// colon of a label or case: a label must label a statement.
func AfterLabel(f *msl.File, off int) bool {
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

// Guards returns edits that replace the text of src in [from, to) with
// itself, leaving out the ranges of holes (the choice's own edits, which
// must not overlap its guards). A guard changes nothing; it makes the
// choice conflict with any other choice that edits the text its proof
// read, so that two proofs made against the same base are never combined
// when one could invalidate the other.
func Guards(src []byte, from, to int, holes []edit.Edit) []edit.Edit {
	from, to = max(from, 0), min(to, len(src))
	if from >= to {
		return nil
	}
	hs := append([]edit.Edit(nil), holes...)
	edit.Sort(hs)
	var out []edit.Edit
	at := from
	for _, h := range hs {
		if h.End <= at && h.Start < at || h.Start >= to {
			continue
		}
		if h.Start > at {
			out = append(out, edit.Edit{Start: at, End: h.Start, New: string(src[at:h.Start])})
		}
		at = max(at, h.End)
	}
	if at < to {
		out = append(out, edit.Edit{Start: at, End: to, New: string(src[at:to])})
	}
	return out
}

// Conditional returns a description of the first preprocessor conditional
// (#if, #ifdef, #ifndef, #elif, #else, #endif) or inactive branch in
// src[pos:end), or "". Text holding one is not copied or moved: which
// configuration a line belongs to would change.
func Conditional(f *msl.File, pos, end int) string {
	i := sort.Search(len(f.Tokens), func(i int) bool { return f.Tokens[i].End > pos })
	for ; i < len(f.Tokens) && f.Tokens[i].Pos < end; i++ {
		t := f.Tokens[i]
		switch t.Kind {
		case msl.Skipped:
			return fmt.Sprintf("an inactive preprocessor branch at %s", short(f, t.Pos))
		case msl.Directive:
			w := strings.Fields(strings.TrimPrefix(strings.TrimSpace(t.Text), "#"))
			if len(w) > 0 {
				switch w[0] {
				case "if", "ifdef", "ifndef", "elif", "else", "endif":
					return fmt.Sprintf("a #%s at %s", w[0], short(f, t.Pos))
				}
			}
		}
	}
	return ""
}

func short(f *msl.File, off int) string {
	return fmt.Sprintf("%s", f.At(off))
}
