package msl

import (
	"fmt"
	"go/token"
	"sort"
	"strings"
)

// An ErrorList is a list of positioned errors, printed one per line as
// file:line:col: msg.
type ErrorList []*Error

// Add appends an error at pos.
func (l *ErrorList) Add(pos token.Position, msg string) {
	*l = append(*l, &Error{Pos: pos, Msg: msg})
}

// Sort sorts the list by file, line and column, keeping the order of errors
// at the same position.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// dedupe sorts the list and drops repeated errors (same position and
// message), which arise when the lexer looks ahead over a line twice.
func (l ErrorList) dedupe() ErrorList {
	l.Sort()
	var out ErrorList
	for i, e := range l {
		if i > 0 && e.Pos == l[i-1].Pos && e.Msg == l[i-1].Msg {
			continue
		}
		out = append(out, e)
	}
	return out
}

// MaxShown is how many errors ErrorList.Error prints before summing up the
// rest, so that a binary or badly broken file gives a readable message
// rather than one line per byte.
const MaxShown = 10

// Error joins the errors with newlines, at most MaxShown of them, followed
// by a count of those left out.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i == MaxShown {
			fmt.Fprintf(&b, "\n(and %d more errors)", len(l)-MaxShown)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns the list as an error, or nil when it is empty, so that an
// empty list never becomes a non-nil error.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
