package cpu

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"metalab/backend"
	"metalab/backend/runner"
)

// findings turns the runner's findings into backend.Findings: pcs become
// .metal source positions (from the shared object's line table), slot ids
// become array names and byte offsets element coordinates.
func (p *program) findings(raw []runner.RawFinding) []backend.Finding {
	if len(raw) == 0 {
		return nil
	}
	lines := p.b.lines(p.so)
	out := make([]backend.Finding, 0, len(raw))
	for _, r := range raw {
		f := backend.Finding{
			Kind:   runner.FindingKinds[r.Kind],
			Fatal:  r.Fatal,
			Space:  runner.Spaces[r.Space],
			Buffer: int(r.Buffer),
			Array:  r.Name,
			Offset: r.Offset,
			Size:   int(r.Size),
			Count:  int(r.Count),
			Access: p.access(r.A, lines),
			Note:   r.Note,
		}
		if f.Kind == "" {
			f.Kind = backend.FindingKind(fmt.Sprintf("unknown-%d", r.Kind))
		}
		if r.B.Valid {
			o := p.access(r.B, lines)
			f.Other = &o
		}
		if f.Space == "threadgroup" {
			if si, ok := p.slots[f.Buffer]; ok {
				f.Array = si.name
				f.Coords = coords(f.Offset, si.elemSize, si.extents)
			}
		}
		if f.Kind == backend.FindBounds && f.Space == "" && f.Access.Line > 0 {
			// An array subscript out of bounds: name the array from the
			// source, and tell threadgroup arrays from thread-private ones.
			typ := strings.Trim(f.Array, "'")
			if name := p.subscripted(f.Access.Line, f.Access.Col); name != "" {
				f.Array = name
				f.Space = "thread"
				for _, si := range p.slots {
					if si.name == name {
						f.Space = "threadgroup"
					}
				}
			}
			f.Note = fmt.Sprintf("index %d out of bounds for type '%s'", r.Offset, typ)
			f.Access.Either = true
		}
		out = append(out, f)
	}
	return out
}

func (p *program) access(a runner.RawAccess, lines *lineTable) backend.Access {
	x := backend.Access{
		Write:     a.Write,
		Atomic:    a.Atomic,
		Group:     [3]int{int(a.Group[0]), int(a.Group[1]), int(a.Group[2])},
		Thread:    int(a.Thread),
		SIMDGroup: int(a.Thread) / 32,
		Lane:      int(a.Thread) % 32,
		File:      a.File,
		Line:      int(a.Line),
		Col:       int(a.Col),
	}
	if x.Line == 0 && a.PC != 0 && lines != nil {
		x.File, x.Line, x.Col = lines.lookup(a.PC-1, p.b.kernelFile) // the call before the return address
	}
	// Line tables join a relative #line name to the compile directory.
	if p.name != "" && x.File != p.name && strings.HasSuffix(x.File, "/"+p.name) {
		x.File = p.name
	}
	return x
}

// kernelFile reports whether file is the kernel's (its source or its own
// headers) rather than the prelude's or the runtime's.
func (b *Backend) kernelFile(file string) bool {
	for _, inc := range b.incs {
		if strings.HasPrefix(file, inc+string(filepath.Separator)) {
			return false
		}
	}
	return file != ""
}

// coords returns the row-major coordinates of the element holding byte
// offset off in an array of the given element size and extents, or nil.
func coords(off int64, elemSize int, extents []int) []int {
	if elemSize <= 0 || off < 0 || len(extents) == 0 {
		return nil
	}
	idx := off / int64(elemSize)
	c := make([]int, len(extents))
	for d := len(extents) - 1; d >= 0; d-- {
		if extents[d] <= 0 {
			return nil
		}
		c[d] = int(idx % int64(extents[d]))
		idx /= int64(extents[d])
	}
	if idx != 0 {
		return nil
	}
	return c
}

// subscripted returns the identifier subscripted at line:col of the
// program's source (the array an out-of-bounds index was used on), or "":
// of the "name[" in the line, the one whose '[' is nearest col, preferring
// one at or before it.
func (p *program) subscripted(line, col int) string {
	if len(p.source) == 0 || line <= 0 {
		return ""
	}
	lines := bytes.Split(p.source, []byte("\n"))
	if line > len(lines) {
		return ""
	}
	text := string(lines[line-1])
	best, bestDist := "", 1<<30
	for i := 0; i < len(text); i++ {
		if text[i] != '[' {
			continue
		}
		end := i
		for end > 0 && text[end-1] == ' ' {
			end--
		}
		b := end
		for b > 0 && isIdent(text[b-1]) {
			b--
		}
		if b == end || text[b] >= '0' && text[b] <= '9' {
			continue
		}
		d := col - 1 - i
		if d < 0 {
			d = -d + len(text) // after the column: only if nothing is before it
		}
		if d < bestDist {
			best, bestDist = text[b:end], d
		}
	}
	return best
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// describeFatal formats a fatal finding as one line.
func describeFatal(f backend.Finding) string {
	var b strings.Builder
	switch f.Space {
	case "device":
		fmt.Fprintf(&b, "buffer %d", f.Buffer)
	case "threadgroup", "thread":
		fmt.Fprintf(&b, "%s array %s", f.Space, f.Array)
	case "threadgroup-host":
		fmt.Fprintf(&b, "[[threadgroup(%d)]] memory", f.Buffer)
	case "outside":
		fmt.Fprintf(&b, "%s: %d bytes at address %#x, by %s at %s", f.Note, f.Size, uint64(f.Offset), f.Access.Where(), f.Access.Pos())
		return b.String()
	default:
		b.WriteString(f.Array)
	}
	if f.Note != "" && strings.HasPrefix(f.Note, "index ") {
		fmt.Fprintf(&b, ": %s", f.Note)
	} else {
		fmt.Fprintf(&b, ", byte offset %+d (%d bytes)", f.Offset, f.Size)
		if f.Note != "" {
			fmt.Fprintf(&b, ": %s", f.Note)
		}
	}
	fmt.Fprintf(&b, ", by %s at %s", f.Access.Where(), f.Access.Pos())
	return b.String()
}

// A lineTable maps addresses of a shared object to source positions:
// the line table, and the inlined calls (from the debug information of
// checking-mode objects) to find the kernel's own line when the access is
// inside an inlined metal_stdlib function (simd_sum reading its argument,
// an atomic).
type lineTable struct {
	rows    []lineRow // sorted by addr
	inlines []inlineCall
}

type lineRow struct {
	addr      uint64
	file      string
	line, col int
	end       bool // end of a sequence: no position
}

// An inlineCall is the code of one inlined call: its address ranges, how
// deep it is nested, and the call's position.
type inlineCall struct {
	ranges [][2]uint64
	depth  int
	file   string
	line   int
	col    int
}

// lookup returns the position of pc: the line table's, or, where that is
// in a file outside stay (the prelude), the position of the innermost
// inlined call made from a file stay accepts.
func (t *lineTable) lookup(pc uint64, stay func(file string) bool) (string, int, int) {
	i := sort.Search(len(t.rows), func(i int) bool { return t.rows[i].addr > pc }) - 1
	if i < 0 || t.rows[i].end {
		return "", 0, 0
	}
	r := t.rows[i]
	if stay == nil || stay(r.file) {
		return r.file, r.line, r.col
	}
	var chain []inlineCall
	for _, c := range t.inlines {
		for _, rg := range c.ranges {
			if pc >= rg[0] && pc < rg[1] {
				chain = append(chain, c)
				break
			}
		}
	}
	sort.Slice(chain, func(i, j int) bool { return chain[i].depth > chain[j].depth })
	for _, c := range chain {
		if stay(c.file) {
			return c.file, c.line, c.col
		}
	}
	return r.file, r.line, r.col
}

// lines returns the line table of a shared object, read once; nil when it
// has none (no debug information, not ELF).
func (b *Backend) lines(so string) *lineTable {
	b.linesMu.Lock()
	defer b.linesMu.Unlock()
	if t, ok := b.lineCache[so]; ok {
		return t
	}
	if b.lineCache == nil {
		b.lineCache = map[string]*lineTable{}
	}
	t := readLines(so)
	b.lineCache[so] = t
	return t
}

func readLines(so string) *lineTable {
	f, err := elf.Open(so)
	if err != nil {
		return nil
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		return nil
	}
	t := &lineTable{}
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(cu)
		var files []*dwarf.LineFile
		if err == nil && lr != nil {
			files = lr.Files()
			for {
				var e dwarf.LineEntry
				if lr.Next(&e) != nil {
					break
				}
				row := lineRow{addr: e.Address, line: e.Line, col: e.Column, end: e.EndSequence}
				if e.File != nil {
					row.file = e.File.Name
				}
				t.rows = append(t.rows, row)
			}
		}
		// The CU's children: subprograms and, nested in them, the inlined
		// calls, depth-first.
		depth := 0
		for cu.Children {
			e, err := r.Next()
			if err != nil || e == nil {
				break
			}
			if e.Tag == 0 {
				if depth == 0 {
					break
				}
				depth--
				continue
			}
			if e.Tag == dwarf.TagInlinedSubroutine {
				c := inlineCall{depth: depth}
				if v, ok := e.Val(dwarf.AttrCallFile).(int64); ok && v >= 0 && int(v) < len(files) && files[v] != nil {
					c.file = files[v].Name
				}
				if v, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
					c.line = int(v)
				}
				if v, ok := e.Val(dwarf.AttrCallColumn).(int64); ok {
					c.col = int(v)
				}
				if rg, err := d.Ranges(e); err == nil {
					c.ranges = rg
				}
				if c.file != "" && len(c.ranges) > 0 {
					t.inlines = append(t.inlines, c)
				}
			}
			if e.Children {
				depth++
			}
		}
	}
	sort.SliceStable(t.rows, func(i, j int) bool { return t.rows[i].addr < t.rows[j].addr })
	return t
}

// linesState is the Backend's cache of line tables.
type linesState struct {
	linesMu   sync.Mutex
	lineCache map[string]*lineTable
}
