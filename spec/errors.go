package spec

import (
	"go/token"
	"sort"
	"strings"
)

// An Error is a problem at a position in a spec file.
type Error struct {
	Pos token.Position
	Msg string
}

// Error formats e as file:line:col: msg.
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// An ErrorList is a list of positioned errors, sorted by position.
type ErrorList []*Error

// Error formats l one error a line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Sort sorts l by file, line and column.
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

// Err returns l as an error, or nil if l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	l.Sort()
	return l
}
