package spec

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"go/token"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"metalab/backend"
)

// An Instance is one case of a spec made concrete: buffer bytes and
// stages ready to run on any backend.
type Instance struct {
	Case       Case
	Vars       map[string]any // every variable of the case, derived ones included
	Buffers    []*Buffer      // in spec order
	Stages     []*Stage       // run in order on the same buffers
	Dispatches int            // dispatches per timing sample
	// ID tells instances apart within a process: Instantiate numbers
	// them from 1, so a buffer's bytes are known by the ID and its name
	// (backend.Buffer.Key). 0 for an instance made otherwise.
	ID uint64
}

// instances numbers the instances Instantiate makes.
var instances atomic.Uint64

// A Buffer is a concrete buffer of an instance.
type Buffer struct {
	Name  string
	Index int // default binding index; -1 when bound only through a stage's bind
	Type  *Type
	Count int   // elements
	Shape []int // or nil; its product is Count
	Role  Role
	Data  []byte // input bytes or sentinel fill, slack included; nil for threadgroup memory
	Size  int    // bytes allocated: Count elements and Slack
	Slack int    // host slack: bytes allocated after the Count elements
	Pos   token.Position
}

// Elems returns the bytes of the Count elements of data (a buffer's
// contents), without the slack.
func (b *Buffer) Elems(data []byte) []byte { return data[:min(len(data), b.Count*b.Type.Size)] }

// SlackBytes returns the slack bytes of data (a buffer's contents).
func (b *Buffer) SlackBytes(data []byte) []byte { return data[min(len(data), b.Count*b.Type.Size):] }

// Output reports whether b is compared after a run (output or inout).
func (b *Buffer) Output() bool { return b.Role == Output || b.Role == InOut }

// Coords returns the coordinates of element i in b's shape, or [i] when b
// has no shape.
func (b *Buffer) Coords(i int) []int {
	if len(b.Shape) == 0 {
		return []int{i}
	}
	c := make([]int, len(b.Shape))
	for d := len(b.Shape) - 1; d >= 0; d-- {
		if b.Shape[d] > 0 {
			c[d] = i % b.Shape[d]
			i /= b.Shape[d]
		}
	}
	return c
}

// A Stage is one kernel dispatch of an instance.
type Stage struct {
	Entry        string
	Source       string            // path of the .metal file
	IncludeDirs  []string          // directories #include "..." searches after the source's
	Defines      map[string]string // preprocessor defines
	Constants    map[string]backend.Value
	Threadgroups backend.Dim3 // threadgroups per grid
	Threads      backend.Dim3 // threads per threadgroup
	Bindings     []Binding    // buffer bindings by index, then threadgroup bindings by index
	Pos          token.Position
	SourcePos    token.Position            // where the spec names Source
	ConstantPos  map[string]token.Position // where the spec gives each constant's value (the last override)
}

// ConfigKey identifies what, besides the source text and the entry, a
// compile of the stage depends on: its include directories (in order),
// defines and function-constant values.
func (st *Stage) ConfigKey() string {
	var parts []string
	if len(st.IncludeDirs) > 0 {
		parts = append(parts, "I"+strings.Join(st.IncludeDirs, "\x01")) // in order: the order is the search order
	}
	for k, v := range st.Defines {
		parts = append(parts, "D"+k+"="+v)
	}
	for k, v := range st.Constants {
		parts = append(parts, fmt.Sprintf("C%s=%s:%x", k, v.Type, v.Bits))
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x00")
}

// CompileKey identifies the stage compiled from source text: programs
// with the same key are the same program.
func (st *Stage) CompileKey(text []byte) string {
	h := sha256.Sum256(text)
	return hex.EncodeToString(h[:]) + "\x00" + st.Entry + "\x00" + st.ConfigKey()
}

// A Binding binds a buffer, by name, at an argument index: a
// [[buffer(n)]] index, or a [[threadgroup(n)]] index for a threadgroup
// buffer. One buffer may have several bindings.
type Binding struct {
	Index       int
	Buffer      string
	Threadgroup bool           // the index is a [[threadgroup(n)]] index
	Pos         token.Position // where the spec binds it; zero when implicit
}

// sortBindings sorts buffer bindings before threadgroup bindings, each by
// index.
func sortBindings(bs []Binding) {
	sort.SliceStable(bs, func(i, j int) bool {
		if bs[i].Threadgroup != bs[j].Threadgroup {
			return !bs[i].Threadgroup
		}
		return bs[i].Index < bs[j].Index
	})
}

// Buffer returns the buffer called name, or nil.
func (in *Instance) Buffer(name string) *Buffer {
	for _, b := range in.Buffers {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// Set returns the set called name, or nil.
func (s *Spec) Set(name string) *Set {
	for _, set := range s.Sets {
		if set.Name == name {
			return set
		}
	}
	return nil
}

// DefaultSets returns the case sets to run when the user names none: the
// spec's defaults: when it declares them, else "quick" when the spec has
// such a set, else every set. Large production shapes belong in a set that
// is not a default, so that a plain run stays quick on the cpu backend.
func (s *Spec) DefaultSets() []string {
	if len(s.Defaults) > 0 {
		return append([]string(nil), s.Defaults...)
	}
	if s.Set("quick") != nil {
		return []string{"quick"}
	}
	var all []string
	for _, set := range s.Sets {
		all = append(all, set.Name)
	}
	return all
}

// Cases returns the cases of the named sets in order, or of every set when
// none is named.
func (s *Spec) Cases(sets ...string) ([]Case, error) {
	if len(sets) == 0 {
		for _, set := range s.Sets {
			sets = append(sets, set.Name)
		}
	}
	var out []Case
	for _, name := range sets {
		set := s.Set(name)
		if set == nil {
			var have []string
			for _, x := range s.Sets {
				have = append(have, x.Name)
			}
			return nil, fmt.Errorf("spec %s: no case set %q (have %v)", s.Path, name, have)
		}
		out = append(out, set.Cases...)
	}
	return out, nil
}

// Instantiate makes case c concrete: it binds the variables, generates the
// input bytes and evaluates the geometry.
func (s *Spec) Instantiate(c Case) (*Instance, error) {
	set := s.Set(c.Set)
	if set == nil {
		return nil, fmt.Errorf("spec %s: case %q: no case set %q", s.Path, c.Name, c.Set)
	}
	vars, err := s.bind(set, c)
	if err != nil {
		return nil, caseErr(c, err)
	}
	in := &Instance{Case: c, Vars: vars, Dispatches: 1, ID: instances.Add(1)}
	if s.dispatches != nil {
		n, err := s.dispatches.Int(vars)
		if err != nil {
			return nil, caseErr(c, err)
		}
		if n < 1 {
			return nil, caseErr(c, &Error{Pos: s.dispatches.Pos, Msg: fmt.Sprintf("dispatches %d < 1", n)})
		}
		in.Dispatches = n
	}
	for _, bs := range s.Buffers {
		b, err := s.buffer1(bs, set, c, vars)
		if err != nil {
			return nil, caseErr(c, err)
		}
		in.Buffers = append(in.Buffers, b)
	}
	for _, ss := range s.Stages {
		st, err := s.stage1(ss, set, vars)
		if err != nil {
			return nil, caseErr(c, err)
		}
		in.Stages = append(in.Stages, st)
	}
	return in, nil
}

// caseErr names the case in err; a positioned error keeps its position
// first, so that it still reads file:line:col: msg.
func caseErr(c Case, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Pos: e.Pos, Msg: fmt.Sprintf("case %s/%s: %s", c.Set, c.Name, e.Msg)}
	}
	return fmt.Errorf("case %s/%s: %w", c.Set, c.Name, err)
}

// MaxBufferSize is the largest buffer, in bytes, a case may declare: a
// count beyond it is a mistake in the spec, and is reported as one rather
// than allocated.
const MaxBufferSize = 1 << 32

func (s *Spec) buffer1(bs *BufferSpec, set *Set, c Case, vars map[string]any) (*Buffer, error) {
	b := &Buffer{Name: bs.Name, Index: bs.Index, Type: bs.Type, Role: bs.Role, Count: 1, Pos: bs.Pos}
	if bs.count != nil {
		n, err := bs.count.Int(vars)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, &Error{Pos: bs.count.Pos, Msg: fmt.Sprintf("buffer %q: negative count %d", bs.Name, n)}
		}
		if n > MaxBufferSize/b.Type.Size {
			return nil, &Error{Pos: bs.count.Pos, Msg: fmt.Sprintf("buffer %q: count %d of %d-byte %s is over the %d-byte buffer limit", bs.Name, n, b.Type.Size, b.Type.Name, MaxBufferSize)}
		}
		b.Count = n
	}
	if bs.shape != nil {
		prod := 1
		for _, e := range bs.shape {
			n, err := e.Int(vars)
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, &Error{Pos: e.Pos, Msg: fmt.Sprintf("buffer %q: negative shape dimension %d", bs.Name, n)}
			}
			b.Shape = append(b.Shape, n)
			if n != 0 && prod > math.MaxInt/n {
				prod = math.MaxInt // saturate: no count is this large
			} else {
				prod *= n
			}
		}
		if prod != b.Count {
			elems := strconv.Itoa(prod)
			if prod == math.MaxInt {
				elems = "too many"
			}
			return nil, &Error{Pos: bs.Pos, Msg: fmt.Sprintf("buffer %q: shape %v has %s elements, count is %d", bs.Name, b.Shape, elems, b.Count)}
		}
	}
	if bs.slack != nil {
		n, err := bs.slack.Int(vars)
		if err != nil {
			return nil, err
		}
		if n < 0 || n > MaxBufferSize-b.Count*b.Type.Size {
			return nil, &Error{Pos: bs.slack.Pos, Msg: fmt.Sprintf("buffer %q: slack %d bytes: want 0 up to the %d-byte buffer limit less the %d bytes of data", bs.Name, n, MaxBufferSize, b.Count*b.Type.Size)}
		}
		b.Slack = n
	}
	b.Size = b.Count*b.Type.Size + b.Slack
	switch b.Role {
	case Threadgroup:
		return b, nil
	case Output:
		b.Data = make([]byte, b.Size)
		for i := range b.Data {
			b.Data[i] = bs.Sentinel[i%len(bs.Sentinel)]
		}
		return b, nil
	}
	// Slack is filled like the data: as if the buffer had as many more
	// elements as the slack holds (a partial one cut), so that the data's
	// own bytes do not depend on the slack.
	extra := 0
	if b.Slack > 0 {
		extra = (b.Slack + b.Type.Size - 1) / b.Type.Size
	}
	full := make([]byte, (b.Count+extra)*b.Type.Size)
	b.Data = full[:b.Size]
	if b.Type.Kind == Struct {
		return b, fillStruct(full, b.Type, b.Count+extra, bs.values, vars)
	}
	g := bs.gen
	if o, ok := set.gen[bs.Name]; ok {
		g = g.merge(o)
	}
	seed := s.Seed
	if c.Seed != 0 {
		seed = c.Seed
	}
	return b, generate(full, b.Type, b.Count, extra, g, vars, newRNG(seed, c.Name, bs.Name))
}

func (s *Spec) stage1(ss *StageSpec, set *Set, vars map[string]any) (*Stage, error) {
	st := &Stage{
		Entry: ss.Entry, Source: ss.Source, IncludeDirs: ss.Includes, Defines: map[string]string{}, Constants: map[string]backend.Value{},
		Pos: ss.Pos, SourcePos: ss.SourcePos, ConstantPos: map[string]token.Position{},
	}
	pv := s.pointVars()
	for _, g := range [][]define{s.defines, ss.defines, set.defines} {
		for _, d := range g {
			st.Defines[d.name] = substParams(d.value, pv)
		}
	}
	types := map[string]string{}
	for _, g := range [][]constant{s.constants, ss.constants, set.constants} {
		for _, c := range g {
			typ := c.typ
			if typ == "" {
				typ = types[c.name]
			}
			if typ == "" {
				return nil, &Error{Pos: c.pos, Msg: fmt.Sprintf("constant %q: no type", c.name)}
			}
			types[c.name] = typ
			v, err := constValue(typ, c.value, vars)
			if err != nil {
				return nil, err
			}
			st.Constants[c.name] = v
			st.ConstantPos[c.name] = c.pos
		}
	}
	var err error
	if st.Threadgroups, err = dim3(ss.threadgroups, "threadgroups", vars); err != nil {
		return nil, err
	}
	if st.Threads, err = dim3(ss.threads, "threads", vars); err != nil {
		return nil, err
	}
	st.Bindings = append([]Binding(nil), ss.Bindings...)
	return st, nil
}

// MaxDim is the largest grid or threadgroup dimension: Metal's sizes are
// 32-bit unsigned integers.
const MaxDim = math.MaxUint32

// Limits on a dispatch as a whole, checked here so that a case past them
// is refused at its spec's text rather than by a backend, without a
// position: a threadgroup holds at most MaxThreadgroupThreads threads (on
// every Metal GPU; a kernel may lower it), and a grid at most
// MaxGroupDim threadgroups along one dimension and MaxGroups in all (what
// the runners dispatch; more would not finish anyway).
const (
	MaxThreadgroupThreads = 1024
	MaxGroupDim           = 1 << 31
	MaxGroups             = 1 << 40
)

func dim3(es []*Expr, what string, vars map[string]any) (backend.Dim3, error) {
	d := [3]int{1, 1, 1}
	total := uint64(1)
	for i, e := range es {
		n, err := e.Int(vars)
		if err != nil {
			return backend.Dim3{}, err
		}
		if n < 1 {
			return backend.Dim3{}, &Error{Pos: e.Pos, Msg: fmt.Sprintf("%s %c dimension %s = %d, want at least 1", what, "xyz"[i], e.Quoted(), n)}
		}
		if int64(n) > MaxDim {
			return backend.Dim3{}, &Error{Pos: e.Pos, Msg: fmt.Sprintf("%s %c dimension %s = %d is over 2^32-1", what, "xyz"[i], e.Quoted(), n)}
		}
		if what == "threadgroups" && n > MaxGroupDim {
			return backend.Dim3{}, &Error{Pos: e.Pos, Msg: fmt.Sprintf("%s %c dimension %s = %d is over 2^31", what, "xyz"[i], e.Quoted(), n)}
		}
		d[i] = n
		if hi, lo := bits.Mul64(total, uint64(n)); hi != 0 {
			total = math.MaxUint64 // past every limit
		} else {
			total = lo
		}
	}
	if len(es) > 0 {
		switch {
		case what == "threads" && total > MaxThreadgroupThreads:
			return backend.Dim3{}, &Error{Pos: es[0].Pos, Msg: fmt.Sprintf("threads %s: %d threads per threadgroup, over Metal's %d", dims(d[:len(es)]), total, MaxThreadgroupThreads)}
		case what == "threadgroups" && total > MaxGroups:
			return backend.Dim3{}, &Error{Pos: es[0].Pos, Msg: fmt.Sprintf("threadgroups %s: %d threadgroups, over the %d (2^40) a grid may hold", dims(d[:len(es)]), total, uint64(MaxGroups))}
		}
	}
	return backend.Dim3{X: d[0], Y: d[1], Z: d[2]}, nil
}

// dims writes d as AxBxC.
func dims(d []int) string {
	s := make([]string, len(d))
	for i, n := range d {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, "x")
}

// constValue evaluates a function-constant value as a bit pattern of typ.
func constValue(typ string, e *Expr, vars map[string]any) (backend.Value, error) {
	x, err := e.Float(vars)
	if err != nil {
		return backend.Value{}, err
	}
	var b [8]byte
	putScalar(b[:], typ, x)
	if typ == "float" && !math.IsInf(x, 0) && math.Abs(x) > math.MaxFloat32 {
		return backend.Value{}, &Error{Pos: e.Pos, Msg: fmt.Sprintf("value %v overflows float", x)}
	}
	return backend.Value{Type: typ, Bits: binary.LittleEndian.Uint64(b[:])}, nil
}
