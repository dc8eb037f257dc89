package check

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"metalab/backend"
	"metalab/internal/edit"
)

// A LineMap maps the lines of a variant's source to its baseline's: the
// lines the variant kept (byte for byte, a whole line) have the baseline
// line they came from, the others (added, or changed by an edit) have 0.
type LineMap struct {
	base []int // by variant line - 1: the baseline line, or 0
}

// Base returns the baseline line of variant line l (1-based), or 0 when
// the variant changed it. Lines past the end are changed.
func (m *LineMap) Base(l int) int {
	if l <= 0 || l > len(m.base) {
		return 0
	}
	return m.base[l-1]
}

// MapLines maps the lines of text, a variant of base, to base's lines:
// through edits, the edits that make text from base, when they do; by a
// line diff of base and text otherwise (edits nil, or edits that do not
// give text).
func MapLines(base, text []byte, edits []edit.Edit) *LineMap {
	if edits != nil {
		if got, err := edit.Apply(base, edits); err == nil && bytes.Equal(got, text) {
			return mapByEdits(base, text, edits)
		}
	}
	return mapByDiff(base, text)
}

// lineStarts returns the byte offset of each line's start.
func lineStarts(b []byte) []int {
	starts := []int{0}
	for i, c := range b {
		if c == '\n' && i+1 < len(b) {
			starts = append(starts, i+1)
		}
	}
	if len(b) == 0 {
		return nil
	}
	return starts
}

// mapByEdits maps a variant line to a baseline line when the whole line,
// its newline included, lies in one stretch of the baseline the edits
// copied, starting at a baseline line's start.
func mapByEdits(base, text []byte, edits []edit.Edit) *LineMap {
	sorted := append([]edit.Edit(nil), edits...)
	edit.Sort(sorted)
	// The copied stretches: [v, v+n) of text is [b, b+n) of base.
	type stretch struct{ v, b, n int }
	var copied []stretch
	bpos, vpos := 0, 0
	for _, e := range sorted {
		if n := e.Start - bpos; n > 0 {
			copied = append(copied, stretch{vpos, bpos, n})
			vpos += n
		}
		vpos += len(e.New)
		bpos = e.End
	}
	if n := len(base) - bpos; n > 0 {
		copied = append(copied, stretch{vpos, bpos, n})
	}
	bstarts := lineStarts(base)
	vstarts := lineStarts(text)
	m := &LineMap{base: make([]int, len(vstarts))}
	for i, vs := range vstarts {
		ve := len(text)
		if i+1 < len(vstarts) {
			ve = vstarts[i+1]
		}
		k := sort.Search(len(copied), func(k int) bool { return copied[k].v+copied[k].n > vs })
		if k == len(copied) || copied[k].v > vs || ve > copied[k].v+copied[k].n {
			continue // part of the line is an edit's
		}
		bs := copied[k].b + vs - copied[k].v
		if bs > 0 && base[bs-1] != '\n' {
			continue // the line starts inside a baseline line
		}
		if be := bs + ve - vs; ve == len(text) && text[ve-1] != '\n' && be < len(base) && base[be] != '\n' {
			continue // the last line stops inside a baseline line
		}
		m.base[i] = sort.SearchInts(bstarts, bs+1) // the 1-based line of bs
	}
	return m
}

// mapByDiff maps lines by a line diff: the lines the diff keeps map, the
// lines it inserts are changed.
func mapByDiff(base, text []byte) *LineMap {
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(string(base), string(text))
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	m := &LineMap{}
	bl := 0
	for _, d := range diffs {
		n := countLines(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for j := 0; j < n; j++ {
				bl++
				m.base = append(m.base, bl)
			}
		case diffmatchpatch.DiffDelete:
			bl += n
		case diffmatchpatch.DiffInsert:
			for j := 0; j < n; j++ {
				m.base = append(m.base, 0)
			}
		}
	}
	return m
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// A siteMapper names a finding's source site as the baseline's: the
// positions in a variant's source (known by any of files) mapped to the
// baseline source's lines.
type siteMapper struct {
	files map[string]string // a name the variant's positions use → the baseline source
	lines *LineMap          // nil for the baseline itself
}

// mapper is the site mapper of variant v of source base.
func (c *checker) mapper(base string, v Variant, src *sourceSet) *siteMapper {
	m := &siteMapper{files: map[string]string{base: base}, lines: MapLines(c.sources[base], v.Text, v.Edits)}
	if n := src.names[base]; n != "" {
		m.files[n] = base
	}
	if v.Path != "" {
		m.files[v.Path] = base
	}
	c.mu.Lock()
	for _, n := range c.textNames[base+"\x00"+sha(v.Text)] {
		m.files[n] = base
	}
	c.mu.Unlock()
	return m
}

// site returns f's site, the key it is matched with the baseline's by
// (kind, entry, memory and both accesses' baseline positions), and whether
// an access is on a line the variant changed.
func (m *siteMapper) site(f Finding) (string, bool) {
	changed := false
	pos := func(a *backend.Access) string {
		file, line := a.File, a.Line
		if b, ok := m.files[file]; ok && m.lines != nil {
			file = b
			if line > 0 {
				if line = m.lines.Base(line); line == 0 {
					changed = true
				}
			}
		}
		return fmt.Sprintf("%s:%d", file, line)
	}
	d := f.Detail
	ps := []string{pos(&d.Access)}
	if d.Other != nil {
		ps = append(ps, pos(d.Other))
	}
	sort.Strings(ps)
	mem := d.Space + " " + d.Array
	if d.Array == "" {
		mem = fmt.Sprintf("%s #%d", d.Space, d.Buffer)
	}
	if changed {
		ps = append(ps, "changed")
	}
	return fmt.Sprintf("%s|%s|%s|%s", f.Kind, f.Entry, mem, strings.Join(ps, " ")), changed
}
