// Package edit is metalab's byte-offset edit model: every change a mutation
// makes to a kernel source is a list of Edits, and Apply is the one place in
// the product where such lists are applied. Metal has no canonical printer,
// so sources are never re-printed; edits replace byte ranges verbatim.
package edit

import (
	"fmt"
	"slices"
	"strings"
)

// An Edit replaces the bytes [Start, End) of a source with New.
// Start == End is a pure insertion; New == "" with Start < End is a deletion.
type Edit struct {
	Start int    `json:"start"`         // byte offset
	End   int    `json:"end"`           // byte offset, Start <= End
	New   string `json:"new"`           // replacement text
	Key   string `json:"key,omitempty"` // for an insertion: orders it among keyed insertions at its offset; see Merge
}

// String formats e for error messages, e.g. `[10,14)->"x"`.
func (e Edit) String() string {
	return fmt.Sprintf("[%d,%d)->%q", e.Start, e.End, e.New)
}

// isInsert reports whether e inserts without replacing anything.
func (e Edit) isInsert() bool { return e.Start == e.End }

// Sort stably sorts edits by Start; at the same Start, insertions come before
// replacements, and equal-offset insertions keep their relative order.
func Sort(edits []Edit) {
	slices.SortStableFunc(edits, compare)
}

func compare(a, b Edit) int {
	if a.Start != b.Start {
		return a.Start - b.Start
	}
	// Insertions (End == Start) sort before replacements at the same offset.
	if a.End != b.End {
		return a.End - b.End
	}
	// Insertions at one offset sort by key, unkeyed ones first, in their
	// original order.
	if a.isInsert() {
		return strings.Compare(a.Key, b.Key)
	}
	return 0
}

// validate returns a sorted copy of edits, or an error if any edit is out of
// range for a source of n bytes or if two edits overlap.
func validate(n int, edits []Edit) ([]Edit, error) {
	sorted := slices.Clone(edits)
	Sort(sorted)
	for i, e := range sorted {
		if e.Start < 0 || e.End < e.Start || e.End > n {
			return nil, fmt.Errorf("edit %v out of range for %d-byte source", e, n)
		}
		if i > 0 {
			if prev := sorted[i-1]; prev.End > e.Start {
				return nil, fmt.Errorf("overlapping edits %v and %v", prev, e)
			}
		}
	}
	return sorted, nil
}

// Validate reports an error if any edit is out of range for a source of n
// bytes or if two edits overlap.
func Validate(n int, edits []Edit) error {
	_, err := validate(n, edits)
	return err
}

// Apply returns src with edits applied. The edits are relative to src and
// may be in any order; Apply returns an error, and never panics, if any edit
// is out of range or two edits overlap. src is not modified.
func Apply(src []byte, edits []Edit) ([]byte, error) {
	sorted, err := validate(len(src), edits)
	if err != nil {
		return nil, err
	}
	size := len(src)
	for _, e := range sorted {
		size += len(e.New) - (e.End - e.Start)
	}
	out := make([]byte, 0, size)
	last := 0
	for _, e := range sorted {
		out = append(out, src[last:e.Start]...)
		out = append(out, e.New...)
		last = e.End
	}
	out = append(out, src[last:]...)
	return out, nil
}

// A ConflictError reports that two edits from independent sets overlap, so
// the sets cannot both be applied to the same source.
type ConflictError struct {
	X, Y Edit // X from the first set, Y from the second
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflicting edits %v and %v", e.X, e.Y)
}

// Merge combines two independent, individually valid edit sets made against
// the same source into one sorted set. Edits present in both sets are kept
// once. Overlapping edits, and distinct insertions at the same offset (whose
// order would be ambiguous), yield a *ConflictError naming one edit of each
// set, unless both insertions carry a Key: keyed insertions say they may
// go in either order (independent declarations before a loop, say), and
// are placed in key order. An overlap within one set is reported as a plain
// error.
func Merge(x, y []Edit) ([]Edit, error) {
	type tagged struct {
		e   Edit
		set int
	}
	var all []tagged
	for _, e := range x {
		all = append(all, tagged{e, 0})
	}
	for _, e := range y {
		if slices.Contains(x, e) {
			continue // identical edit in both sets
		}
		all = append(all, tagged{e, 1})
	}
	slices.SortStableFunc(all, func(a, b tagged) int { return compare(a.e, b.e) })
	out := make([]Edit, 0, len(all))
	for i, t := range all {
		if t.e.Start < 0 || t.e.End < t.e.Start {
			return nil, fmt.Errorf("invalid edit %v", t.e)
		}
		out = append(out, t.e)
		if i == 0 {
			continue
		}
		p := all[i-1]
		overlap := p.e.End > t.e.Start ||
			(p.set != t.set && p.e.isInsert() && t.e.isInsert() && p.e.Start == t.e.Start && (p.e.Key == "" || t.e.Key == ""))
		if !overlap {
			continue
		}
		if p.set == t.set {
			return nil, fmt.Errorf("overlapping edits %v and %v within one set", p.e, t.e)
		}
		if p.set == 0 {
			return nil, &ConflictError{X: p.e, Y: t.e}
		}
		return nil, &ConflictError{X: t.e, Y: p.e}
	}
	return out, nil
}

// A Span is a byte range [Start, End) of a source, such as the extent of a
// function that mutations are allowed to change.
type Span struct{ Start, End int }

// String formats s as "[Start,End)".
func (s Span) String() string { return fmt.Sprintf("[%d,%d)", s.Start, s.End) }

// Contains reports whether e lies entirely within s.
func (s Span) Contains(e Edit) bool { return s.Start <= e.Start && e.End <= s.End }

// CheckScope reports an error naming the first offending edit's range if any
// edit is not entirely inside one of scopes. Edits outside the owned
// functions must never reach a variant.
func CheckScope(edits []Edit, scopes []Span) error {
	var bad []string
	for _, e := range edits {
		if !slices.ContainsFunc(scopes, func(s Span) bool { return s.Contains(e) }) {
			bad = append(bad, fmt.Sprintf("[%d,%d)", e.Start, e.End))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	var in []string
	for _, s := range scopes {
		in = append(in, s.String())
	}
	return fmt.Errorf("edit at %s outside owned scope %s", strings.Join(bad, ", "), strings.Join(in, " "))
}
