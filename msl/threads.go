package msl

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// This file evaluates statements thread by thread, to prove facts about
// which threads of a threadgroup touch which elements of shared memory:
// that two statement ranges never touch one element from two different
// threads (so no barrier needs to separate them), and that a round of
// stores covers every element the round later reads.
//
// Each thread is interpreted concretely: its simd lane, simd group and
// index in the threadgroup are known, as are constants, loop counters of
// counted loops and locals computed from those. Loads from memory,
// parameters and anything else are unknown. Function constants of type
// bool that the statements test are enumerated as scenarios, because they
// are uniform: every thread sees the same value. A construct the
// interpreter cannot follow makes the footprint unknown, and the callers
// refuse.

// SIMDWidth is the number of threads of a SIMD group on Apple GPUs.
const SIMDWidth = 32

// MaxThreads is the largest threadgroup Metal allows.
const MaxThreads = 1024

// A Touch is one access of one element by one thread.
type Touch struct {
	Thread int
	Off    int64 // element offset from the start of the variable; -1 when unknown
	Write  bool
	Read   bool
	Must   bool // executed whenever the thread runs the statements (not under an unknown condition)
	Pos    int  // the access expression's offset
	Stmt   Stmt // the top-level statement of the analysed range it is in
}

// A Footprint is what a statement range touches, thread by thread, in one
// scenario.
type Footprint struct {
	Scenario map[string]bool // values of the bool function constants tested
	Geometry Dims            // the threads per threadgroup interpreted; zero when one-dimensional threadgroups of up to MaxThreads threads are assumed
	Touches  map[*Var][]Touch
}

// Dims are the threads per threadgroup of a dispatch, x, y and z.
type Dims [3]int

// Count returns the number of threads.
func (d Dims) Count() int { return d[0] * d[1] * d[2] }

// String returns "32x4x1".
func (d Dims) String() string { return fmt.Sprintf("%dx%dx%d", d[0], d[1], d[2]) }

// OneDimensional is the assumption footprints rest on when no geometry is
// given.
const OneDimensional = "one-dimensional threadgroups"

// A Footprints is the footprint of a statement range in every scenario.
type Footprints struct {
	Threads   int
	Scenarios []*Footprint
	Unknown   []UnknownFor // why the footprint is not exact; callers must refuse when non-empty
	Assumes   []string     // assumptions the footprint rests on ("one-dimensional threadgroups")
}

// Why returns the first reason the footprint is unknown, or "".
func (fp *Footprints) Why() string {
	if len(fp.Unknown) == 0 {
		return ""
	}
	return fp.Unknown[0].Why
}

// ThreadFootprints evaluates stmts, consecutive statements of one block of
// the function, for every thread of a threadgroup of MaxThreads threads
// and every scenario, after evaluating the code that leads to them (the
// enclosing blocks' earlier statements; variables written in an enclosing
// loop are unknown, as they may come from an earlier iteration).
func (sc *Scope) ThreadFootprints(stmts []Stmt) *Footprints {
	fp := &Footprints{Threads: MaxThreads}
	consts := sc.scenarioConsts(stmts)
	if len(stmts) == 0 {
		// Nothing is touched, in every scenario.
		geos := sc.Geometries
		if len(geos) == 0 {
			geos = []Dims{{}}
		}
		for _, geo := range geos {
			for k := 0; k < 1<<len(consts); k++ {
				scen := map[string]bool{}
				for i, c := range consts {
					scen[c] = k&(1<<i) != 0
				}
				fp.Scenarios = append(fp.Scenarios, &Footprint{Scenario: scen, Geometry: geo, Touches: map[*Var][]Touch{}})
			}
		}
		return fp
	}
	first, _ := stmts[0].Span()
	path := sc.stmtPath(sc.Func.Body, first)
	if path == nil {
		fp.Unknown = append(fp.Unknown, UnknownFor{first, first, "statements not found in the function"})
		return fp
	}
	if sc.File.Canceled() {
		fp.Unknown = append(fp.Unknown, UnknownFor{first, first, "interrupted"})
		return fp
	}
	needed := sc.slice(path, first, stmts)
	n := 1 << len(consts)
	total := 0
	geos := sc.Geometries
	if len(geos) == 0 {
		geos = []Dims{{}}
	}
	for k := 0; k < n*len(geos); k++ {
		scen := map[string]bool{}
		for i, c := range consts {
			scen[c] = (k%n)&(1<<i) != 0
		}
		geo := geos[k/n]
		threads := MaxThreads
		if geo != (Dims{}) {
			threads = geo.Count()
		}
		f := &Footprint{Scenario: scen, Geometry: geo, Touches: map[*Var][]Touch{}}
		for t := 0; t < threads; t++ {
			if t%64 == 0 && sc.File.Canceled() {
				fp.Unknown = append(fp.Unknown, UnknownFor{first, first, "interrupted"})
				return fp
			}
			if total > maxTotalSteps {
				p, e := stmts[0].Span()
				fp.Unknown = append(fp.Unknown, UnknownFor{p, e, fmt.Sprintf("more than %d statements to follow over all threads", maxTotalSteps)})
				return fp
			}
			in := newInterp(sc, t, scen, fp)
			in.geo = geo
			in.needed = needed
			reached := in.lead(path, first)
			led := in.steps
			total += led
			if !reached {
				continue // the thread does not reach the statements
			}
			in.rec = f
			for _, s := range stmts {
				in.top = s
				in.stmt(s)
				if in.stopped {
					break
				}
			}
			total += in.steps - led
		}
		fp.Scenarios = append(fp.Scenarios, f)
	}
	return fp
}

// scenarioConsts returns the bool function constants the function tests,
// at most four of them. They are the function's, not the statements', so
// that every footprint of one function has the same scenarios in the same
// order, and footprints of different statement ranges compare scenario by
// scenario.
func (sc *Scope) scenarioConsts(stmts []Stmt) []string {
	if sc.scenConsts == nil {
		sc.scenConsts = sc.findScenarioConsts()
	}
	return *sc.scenConsts
}

// findScenarioConsts is scenarioConsts, not memoised: it reads every
// token of the body.
func (sc *Scope) findScenarioConsts() *[]string {
	seen := map[string]bool{}
	var out []string
	lo, hi := sc.Func.Body.Lbrace, sc.Func.Body.Rbrace+1
	for _, t := range sc.File.SigTokens(lo, hi) {
		if t.Kind != Ident || seen[t.Text] {
			continue
		}
		seen[t.Text] = true
		v := sc.Lookup(t.Text, t.Pos)
		if v != nil && v.Kind == GlobalVar && v.Attr("function_constant") != nil && v.Elem == "bool" {
			out = append(out, t.Text)
		}
	}
	sort.Strings(out)
	if len(out) > 4 {
		out = out[:4]
	}
	return &out
}

// stmtPath returns the chain of statements from body down to the
// statement starting at pos, or nil. A block's children are searched by
// their starts (blockIdx), so the cost does not grow with a block's
// length.
func (sc *Scope) stmtPath(body *Block, pos int) []Stmt {
	var path []Stmt
	var find func(s Stmt) bool
	find = func(s Stmt) bool {
		if s == nil || isNilStmt(s) {
			return false
		}
		p, e := s.Span()
		if pos < p || pos >= e {
			return false
		}
		path = append(path, s)
		if p == pos {
			if _, ok := s.(*Block); !ok {
				return true
			}
		}
		var kids []Stmt
		switch s := s.(type) {
		case *Block:
			kids = s.Stmts
			if bi := sc.blockIdx(s); bi.ordered {
				// Only the last child starting at or before pos can
				// hold it.
				n := sort.SearchInts(bi.starts, pos+1)
				kids = kids[max(n-1, 0):n]
			}
		case *For:
			kids = []Stmt{s.Body}
		case *While:
			kids = []Stmt{s.Body}
		case *Do:
			kids = []Stmt{s.Body}
		case *If:
			kids = []Stmt{s.Then, s.Else}
		case *Switch:
			kids = []Stmt{s.Body}
		case *MacroUse:
			kids = []Stmt{s.Body}
		}
		for _, k := range kids {
			if find(k) {
				return true
			}
		}
		if p == pos {
			return true
		}
		path = path[:len(path)-1]
		return false
	}
	if !find(body) {
		return nil
	}
	return path
}

// An ival is a value the interpreter knows, or not: an integer of a type
// class, or a pointer into a variable.
type ival struct {
	known bool
	n     int64
	cls   icls
	base  *Var  // for pointers: the variable pointed into; n is the offset in base's elements
	w     int64 // for pointers: base's elements per element pointed to (a cast to a wider type); 0 means 1
}

// width returns the number of base elements one pointee element covers.
func (v ival) width() int64 {
	if v.w <= 0 {
		return 1
	}
	return v.w
}

// An icls is the integer type class of a value.
type icls int8

const (
	i32 icls = iota
	u32
	i64
	u64
)

func unknown() ival { return ival{} }

func intVal(n int64, c icls) ival { return ival{known: true, n: norm(n, c), cls: c} }

func norm(n int64, c icls) int64 {
	switch c {
	case i32:
		return int64(int32(n))
	case u32:
		return int64(uint32(n))
	}
	return n
}

// clsOf returns the type class of a scalar type name, and whether it is an
// integer type at all.
func clsOf(typ string) (icls, bool) {
	switch strings.TrimSpace(strings.TrimPrefix(typ, "metal::")) {
	case "int", "short", "char", "int8_t", "int16_t", "int32_t", "bool", "signed char", "signed":
		return i32, true
	case "uint", "ushort", "uchar", "unsigned", "unsigned int", "uint8_t", "uint16_t", "uint32_t", "unsigned short", "unsigned char":
		return u32, true
	case "long", "int64_t", "ptrdiff_t", "long long":
		return i64, true
	case "ulong", "size_t", "uint64_t", "unsigned long", "unsigned long long", "uintptr_t":
		return u64, true
	}
	return 0, false
}

// narrow truncates n to a narrow type's width.
func narrow(n int64, typ string) int64 {
	switch strings.TrimSpace(typ) {
	case "short", "int16_t":
		return int64(int16(n))
	case "ushort", "uint16_t", "unsigned short":
		return int64(uint16(n))
	case "char", "int8_t", "signed char":
		return int64(int8(n))
	case "uchar", "uint8_t", "unsigned char":
		return int64(uint8(n))
	case "bool":
		if n != 0 {
			return 1
		}
		return 0
	}
	return n
}

func convert(v ival, typ string) ival {
	if !v.known || v.base != nil {
		if v.base != nil && strings.Contains(typ, "*") {
			return v // retyped by the caller (interp.retype), which knows the layouts
		}
		return unknown()
	}
	c, ok := clsOf(typ)
	if !ok {
		return unknown()
	}
	return intVal(narrow(norm(v.n, c), typ), c)
}

// An interp interprets statements for one thread.
type interp struct {
	sc      *Scope
	thread  int
	scen    map[string]bool
	fp      *Footprints
	env     *env
	rec     *Footprint // nil while leading up to the statements
	top     Stmt
	must    bool
	stopped bool // the thread returned
	steps   int
	needed  map[*Block][]Stmt // the statements leading up that the analysed ones depend on, by block, in order
	geo     Dims              // the threads per threadgroup; zero: one-dimensional assumed
}

// maxSteps bounds the statements one thread interprets, and
// maxTotalSteps those of one footprint over all threads and scenarios, so
// that a kernel with long loops is refused quickly rather than followed
// for minutes.
const (
	maxSteps      = 1 << 14
	maxTotalSteps = 1 << 23
)

func newInterp(sc *Scope, thread int, scen map[string]bool, fp *Footprints) *interp {
	return &interp{sc: sc, thread: thread, scen: scen, fp: fp, env: newEnv(len(sc.all)), must: true}
}

func (in *interp) unknownf(pos, end int, format string, args ...any) {
	if in.rec == nil {
		return
	}
	why := fmt.Sprintf(format, args...)
	for _, u := range in.fp.Unknown {
		if u.Pos == pos && u.Why == why {
			return
		}
	}
	in.fp.Unknown = append(in.fp.Unknown, UnknownFor{pos, end, why})
}

func (in *interp) assume(a string) {
	for _, x := range in.fp.Assumes {
		if x == a {
			return
		}
	}
	in.fp.Assumes = append(in.fp.Assumes, a)
}

// lead interprets the code leading to the statement at pos along path,
// without recording accesses. It reports whether the thread reaches it.
func (in *interp) lead(path []Stmt, pos int) bool {
	for i, s := range path[:len(path)-1] {
		next := path[i+1]
		switch s := s.(type) {
		case *Block:
			for _, c := range in.needed[s] {
				in.stmt(c)
				if in.stopped {
					return false
				}
			}
		case *For:
			in.forgetLoop(s)
			if lv := in.sc.plan(s).loop; lv != nil {
				in.env.set(lv, unknown())
			}
		case *While:
			in.forgetLoop(s)
		case *Do:
			in.forgetLoop(s)
		case *If:
			c := in.cond(s.Cond)
			if c.known && (c.n != 0) != (next == s.Then) {
				return false
			}
		case *Switch, *MacroUse:
			in.forgetLoop(s)
		}
	}
	return !in.stopped
}

// slice returns the statements before pos along path that the values of
// the variables stmts (and the conditions along path) read may depend on:
// a backward slice over variable definitions, as the kept children of
// each block of path in source order. Statements that may return are
// kept, so that a thread that leaves early does not reach stmts.
//
// Its cost grows with what it keeps, not with the statements before pos:
// each block's writers are indexed once (blockIdx), and a variable's
// writers are visited once per block.
func (sc *Scope) slice(path []Stmt, pos int, stmts []Stmt) map[*Block][]Stmt {
	// Only integer and pointer values are followed (array contents,
	// floating-point values and the like are unknown anyway), so only
	// integer and pointer variables matter.
	need := map[*Var]bool{}
	addReads := func(e *Effects) []*Var {
		var added []*Var
		for v := range e.Reads {
			if v.IsArray() {
				continue
			}
			if _, isInt := clsOf(sc.File.CanonicalType(v.Elem)); isInt || v.Ptr > 0 || v.Ref {
				need[v] = true
				added = append(added, v)
			}
		}
		return added
	}
	for _, s := range stmts {
		addReads(sc.Effects(s))
	}
	keep := map[*Block][]Stmt{}
	for i := len(path) - 2; i >= 0; i-- {
		switch s := path[i].(type) {
		case *If:
			addReads(sc.SpanEffects(s.Cond.Pos, s.Cond.End, s))
		case *For, *While, *Do:
			// Loop-carried values: whatever the loop writes is unknown
			// anyway; its condition does not decide which threads get here.
		case *Block:
			bi := sc.blockIdx(s)
			next := path[i+1]
			limit := bi.limit(s, pos, next)
			// bound[v]: v's writers below it are kept. A variable needed
			// after the block's part before pos has bound limit; one read
			// by a kept child k has at least k.
			bound := map[*Var]int{}
			kept := map[int]bool{}
			var work []int
			seek := func(v *Var, hi int) {
				lo := bound[v]
				if hi <= lo {
					return
				}
				bound[v] = hi
				ws := bi.writers[v]
				for j := sort.SearchInts(ws, lo); j < len(ws) && ws[j] < hi; j++ {
					if !kept[ws[j]] {
						kept[ws[j]] = true
						work = append(work, ws[j])
					}
				}
			}
			for v := range need {
				seek(v, limit)
			}
			for _, j := range bi.jumps {
				if j >= limit {
					break
				}
				if !kept[j] {
					kept[j] = true
					work = append(work, j)
				}
			}
			for len(work) > 0 {
				k := work[len(work)-1]
				work = work[:len(work)-1]
				// What it reads is needed before it here, and in the
				// outer blocks (need holds it for them).
				for _, u := range addReads(bi.effects[k]) {
					seek(u, k)
				}
			}
			idx := make([]int, 0, len(kept))
			for k := range kept {
				idx = append(idx, k)
			}
			sort.Ints(idx)
			for _, k := range idx {
				keep[s] = append(keep[s], s.Stmts[k])
			}
		}
	}
	return keep
}

// A blockIndex is what slice needs of a block's children, made once per
// block: their effects, which children write each variable and which may
// jump, in source order.
type blockIndex struct {
	effects []*Effects
	writers map[*Var][]int // ascending child indices
	jumps   []int          // ascending child indices
	starts  []int
	ordered bool       // children start in ascending order and do not overlap
	ivs     []Interval // Intervals, once asked for
}

// Intervals is the package-level Intervals, memoised: a mutation that
// looks at every barrier of a block asks for its intervals once per
// barrier. The result is shared; callers must not change it.
func (sc *Scope) Intervals(b *Block) []Interval {
	bi := sc.blockIdx(b)
	if bi.ivs == nil {
		bi.ivs = Intervals(b)
	}
	return bi.ivs
}

func (sc *Scope) blockIdx(b *Block) *blockIndex {
	if bi, ok := sc.blocks[b]; ok {
		return bi
	}
	bi := &blockIndex{writers: map[*Var][]int{}, ordered: true}
	prevEnd := -1
	for k, c := range b.Stmts {
		e := sc.Effects(c)
		bi.effects = append(bi.effects, e)
		for v := range e.Writes {
			bi.writers[v] = append(bi.writers[v], k)
		}
		if len(e.Jumps) > 0 {
			bi.jumps = append(bi.jumps, k)
		}
		p, end := c.Span()
		if p < prevEnd || len(bi.starts) > 0 && p < bi.starts[len(bi.starts)-1] {
			bi.ordered = false
		}
		prevEnd = max(prevEnd, end)
		bi.starts = append(bi.starts, p)
	}
	if sc.blocks == nil {
		sc.blocks = map[*Block]*blockIndex{}
	}
	sc.blocks[b] = bi
	return bi
}

// limit returns the number of b's children before the one that starts at
// or after pos or is next, the child on the way to pos.
func (bi *blockIndex) limit(b *Block, pos int, next Stmt) int {
	if bi.ordered {
		n := sort.SearchInts(bi.starts, pos) // the first child starting at or after pos
		if n > 0 && b.Stmts[n-1] == next {
			return n - 1
		}
		if n < len(b.Stmts) && b.Stmts[n] == next {
			return n
		}
	}
	for k, c := range b.Stmts {
		if c == next || bi.starts[k] >= pos {
			return k
		}
	}
	return len(b.Stmts)
}

// forgetLoop makes every variable written in s unknown.
func (in *interp) forgetLoop(s Stmt) {
	for v := range in.sc.writesOf(s) {
		in.env.set(v, unknown())
	}
}

func (in *interp) cond(sp Span) ival {
	if sp.End <= sp.Pos {
		return intVal(1, i32)
	}
	x, err := in.sc.parseExpr(sp.Pos, sp.End)
	if err != nil {
		in.unknownf(sp.Pos, sp.End, "%v", err)
		return unknown()
	}
	return in.eval(x)
}

func (in *interp) stmt(s Stmt) {
	if in.stopped || s == nil || isNilStmt(s) {
		return
	}
	in.steps++
	if in.steps > maxSteps {
		p, e := s.Span()
		in.unknownf(p, e, "too many statements to follow")
		in.stopped = true
		return
	}
	if in.steps%cancelEvery == 0 && in.sc.File.Canceled() {
		p, e := s.Span()
		in.unknownf(p, e, "interrupted")
		in.stopped = true
		return
	}
	switch s := s.(type) {
	case *Block:
		for _, c := range s.Stmts {
			in.stmt(c)
			if in.stopped {
				return
			}
		}
	case *Decl:
		for _, di := range in.sc.plan(s).inits {
			v := di.v
			if v == nil {
				continue
			}
			if v.IsArray() {
				in.env.del(v) // names its own storage
				continue
			}
			if di.none {
				in.env.set(v, unknown())
				continue
			}
			if di.err != nil {
				in.unknownf(s.Pos, s.End, "%v", di.err)
				in.env.set(v, unknown())
				continue
			}
			val := in.eval(di.x)
			if di.braced && v.Ptr == 0 {
				val = unknown()
			}
			if v.Ptr > 0 {
				in.env.set(v, in.retypeVar(val, v))
				continue
			}
			in.env.set(v, convert(val, v.Elem))
		}
	case *ExprStmt:
		pl := in.sc.plan(s)
		switch pl.kind {
		case "empty", "label":
			return
		case "return":
			if pl.x != nil {
				in.eval(pl.x)
			}
			if in.must {
				in.stopped = true
			}
			in.must = false
			return
		case "break", "continue", "goto", "discard_fragment":
			in.unknownf(s.Pos, s.End, "%s inside the statements", pl.kind)
			in.must = false
			return
		}
		if pl.err != nil {
			in.unknownf(s.Pos, s.End, "%v", pl.err)
			return
		}
		in.eval(pl.x)
	case *If:
		c := in.cond(s.Cond)
		switch {
		case c.known && c.n != 0:
			in.stmt(s.Then)
		case c.known:
			in.stmt(s.Else)
		default:
			in.branches(s.Then, s.Else)
		}
	case *For:
		in.forStmt(s)
	case *While:
		in.loopOnce(s, s.Body, []Span{s.Cond})
	case *Do:
		in.loopOnce(s, s.Body, []Span{s.Cond})
	case *Switch:
		in.cond(s.Cond)
		in.loopOnce(s, s.Body, nil)
	case *Barrier:
	case *MacroUse:
		in.unknownf(s.Pos, s.End, "macro %s hides a %s", s.Name, s.Hides)
		in.forgetLoop(s)
	default:
		p, e := s.Span()
		in.unknownf(p, e, "unmodelled statement")
	}
}

// branches interprets both arms of an if whose condition is unknown: their
// accesses may happen, and variables they assign differently become
// unknown.
func (in *interp) branches(then, els Stmt) {
	saved := in.must
	base := in.env.clone()
	in.must = false
	in.stmt(then)
	a := in.env
	stopA := in.stopped
	in.env = base.clone()
	in.stopped = false
	in.stmt(els)
	b := in.env
	stopB := in.stopped
	in.stopped = stopA && stopB
	for v, x := range a.vals {
		if y, ok := b.vals[v]; !ok || x != y {
			a.vals[v] = unknown()
		}
	}
	for v := range b.vals {
		if _, ok := a.vals[v]; !ok {
			a.vals[v] = unknown()
		}
	}
	in.env = a
	in.must = saved
}

// An env holds the values of a thread's variables. It is sparse: a thread
// follows a few variables of a function that may declare thousands, and
// one env is made per thread and footprint, so its cost must not grow
// with the function. Variables of other scopes (id n or more) are not
// held.
type env struct {
	n    int
	vals map[*Var]ival
}

func newEnv(n int) *env { return &env{n: n, vals: map[*Var]ival{}} }

func (e *env) set(v *Var, x ival) {
	if v.id < e.n {
		e.vals[v] = x
	}
}

func (e *env) get(v *Var) (ival, bool) {
	x, ok := e.vals[v]
	return x, ok
}

func (e *env) del(v *Var) { delete(e.vals, v) }

func (e *env) clone() *env { return &env{n: e.n, vals: maps.Clone(e.vals)} }

// forStmt runs a counted loop iteration by iteration; any other loop once
// with its variables unknown.
func (in *interp) forStmt(s *For) {
	l := in.sc.countLoop(s)
	pl := in.sc.plan(s)
	if l == nil || l.Values == nil || in.sc.hasJump(s.Body) {
		if pl.x != nil {
			in.eval(pl.x)
		}
		if pl.loop != nil {
			in.env.set(pl.loop, unknown())
		}
		in.loopOnce(s, s.Body, []Span{s.Cond, s.Post})
		return
	}
	iv := pl.loop
	if iv == nil {
		iv = in.sc.Lookup(l.Var, s.Pos)
	}
	if iv == nil {
		in.loopOnce(s, s.Body, []Span{s.Cond, s.Post})
		return
	}
	cls, ok := clsOf(iv.Elem)
	if !ok {
		cls = i32
	}
	for _, val := range l.Values {
		in.env.set(iv, intVal(val, cls))
		in.stmt(s.Body)
		if in.stopped {
			return
		}
	}
	if len(l.Values) > 0 {
		last := l.Values[len(l.Values)-1]
		if l.Geo == "" {
			in.env.set(iv, intVal(last+l.Step, cls))
		} else {
			in.env.set(iv, unknown())
		}
	}
}

// loopOnce interprets a loop body once, with every variable the loop
// writes unknown and its accesses conditional.
func (in *interp) loopOnce(s Stmt, body Stmt, conds []Span) {
	in.forgetLoop(s)
	saved := in.must
	in.must = false
	for _, c := range conds {
		in.cond(c)
	}
	in.stmt(body)
	in.forgetLoop(s)
	in.must = saved
	in.stopped = false
}

// threadVar returns the value of a parameter with a thread-identifying
// attribute, for this thread.
func (in *interp) threadVar(v *Var, member string, at Span) (ival, bool) {
	if v.Kind != ParamVar {
		return ival{}, false
	}
	linear := in.thread
	for _, a := range v.Attrs {
		switch a.Name {
		case "thread_index_in_simdgroup", "thread_index_in_quadgroup":
			if a.Name == "thread_index_in_quadgroup" {
				return intVal(int64(linear%4), u32), true
			}
			return intVal(int64(linear%SIMDWidth), u32), true
		case "simdgroup_index_in_threadgroup":
			return intVal(int64(linear/SIMDWidth), u32), true
		case "quadgroup_index_in_threadgroup":
			return intVal(int64(linear/4), u32), true
		case "thread_index_in_threadgroup":
			return intVal(int64(linear), u32), true
		case "threads_per_simdgroup", "thread_execution_width":
			return intVal(SIMDWidth, u32), true
		case "thread_position_in_threadgroup", "threads_per_threadgroup":
			vec := v.Elem != "uint" && v.Elem != "ushort"
			axis := -1
			switch {
			case !vec && member == "":
				axis = 0
			case vec && member == "x":
				axis = 0
			case vec && member == "y":
				axis = 1
			case vec && member == "z":
				axis = 2
			}
			if axis < 0 {
				return ival{}, false
			}
			if in.geo != (Dims{}) {
				if a.Name == "threads_per_threadgroup" {
					return intVal(int64(in.geo[axis]), u32), true
				}
				pos := [3]int{linear % in.geo[0], linear / in.geo[0] % in.geo[1], linear / (in.geo[0] * in.geo[1])}
				return intVal(int64(pos[axis]), u32), true
			}
			if a.Name == "threads_per_threadgroup" {
				return ival{}, false
			}
			in.assume(OneDimensional)
			if axis > 0 {
				// Under the assumption .y and .z would be 0, but kernels that
				// read them are dispatched in two or three dimensions.
				// Recorded while leading up to the statements too: a value
				// computed there from .y (tid = tpitg.y * 32 + tpitg.x) is
				// why their accesses are unknown.
				rec := in.rec
				if rec == nil {
					in.rec = &Footprint{}
				}
				in.unknownf(at.Pos, at.End, "assuming %s, but the kernel reads %s.%s; list the sites under a spec (sites --spec) to give the threads per threadgroup", OneDimensional, v.Name, member)
				in.rec = rec
				return unknown(), true
			}
			return intVal(int64(linear), u32), true
		}
	}
	return ival{}, false
}

func (in *interp) eval(x Expr) ival {
	switch x := x.(type) {
	case nil:
		return unknown()
	case *LitExpr:
		if x.Kind != Int {
			return unknown()
		}
		if !x.parsed {
			x.val, x.ok = parseIntLit(x.Text)
			x.parsed = true
		}
		n, ok := x.val, x.ok
		if !ok {
			return unknown()
		}
		c := i32
		low := strings.ToLower(x.Text)
		switch {
		case strings.HasSuffix(low, "ul") || strings.HasSuffix(low, "lu"):
			c = u64
		case strings.HasSuffix(low, "u"):
			c = u32
		case strings.HasSuffix(low, "l"):
			c = i64
		case n > 0x7fffffff:
			c = i64
		}
		return intVal(n, c)
	case *NameExpr:
		if x.Name == "true" {
			return intVal(1, i32)
		}
		if x.Name == "false" {
			return intVal(0, i32)
		}
		v := in.sc.resolve(x)
		if v == nil {
			if !x.constDone {
				env := &Env{File: in.sc.File, Func: in.sc.Func, At: x.Pos, TemplateArgs: in.sc.TemplateArgs()}
				x.constVal, x.constOK = env.Eval(x.Name)
				x.constDone = true
			}
			if x.constOK {
				return intVal(x.constVal, i32)
			}
			return unknown()
		}
		if tv, ok := in.threadVar(v, "", Span{x.Pos, x.End}); ok {
			return tv
		}
		if v.Ref && v.IsMemory() && v.Space != Constant {
			// Reading a reference reads what it designates.
			in.touch(x, in.refTarget(x, v), true, false)
			return unknown()
		}
		if b, ok := in.scen[v.Name]; ok && v.Kind == GlobalVar {
			if b {
				return intVal(1, i32)
			}
			return intVal(0, i32)
		}
		if val, ok := in.env.get(v); ok {
			return val
		}
		if v.IsArray() || v.Ptr > 0 && v.Kind == ParamVar {
			return ival{known: true, base: v}
		}
		if v.Ptr > 0 {
			if v.Space == Threadgroup {
				// A local pointer whose value was not followed may point
				// into any threadgroup variable.
				return unknown()
			}
			return ival{base: v}
		}
		if v.Const && v.Kind == GlobalVar || v.Const && v.Decl != nil && v.Ptr == 0 {
			env := &Env{File: in.sc.File, Func: in.sc.Func, At: x.Pos, TemplateArgs: in.sc.TemplateArgs()}
			if n, ok := env.Eval(x.Name); ok {
				c, _ := clsOf(v.Elem)
				return intVal(n, c)
			}
		}
		return unknown()
	case *ParenExpr:
		return in.eval(x.X)
	case *CastExpr:
		v := convert(in.eval(x.X), x.Type)
		if v.base != nil {
			elem, ok := pointee(x.Type)
			if !ok {
				return ival{base: v.base}
			}
			return in.retype(v, elem)
		}
		return v
	case *UnaryExpr:
		return in.unary(x)
	case *BinaryExpr:
		return in.binary(x)
	case *CondExpr:
		c := in.eval(x.C)
		if c.known && c.base == nil {
			if c.n != 0 {
				return in.eval(x.X)
			}
			return in.eval(x.Y)
		}
		saved := in.must
		in.must = false
		a := in.eval(x.X)
		b := in.eval(x.Y)
		in.must = saved
		if a == b {
			return a
		}
		return unknown()
	case *IndexExpr, *MemberExpr:
		return in.access(x, true, false, ival{})
	case *CallExpr:
		return in.call(x)
	case *OpaqueExpr:
		in.unknownf(x.Pos, x.End, "unmodelled expression")
		return unknown()
	}
	return unknown()
}

func (in *interp) unary(x *UnaryExpr) ival {
	switch x.Op {
	case "++", "--":
		old := in.eval(x.X)
		d := int64(1)
		if x.Op == "--" {
			d = -1
		}
		nv := unknown()
		if old.known && old.base == nil {
			nv = intVal(old.n+d, old.cls)
		} else if old.known && old.base != nil {
			nv = ival{known: true, base: old.base, n: old.n + d*old.width(), w: old.w}
		} else if old.base != nil {
			nv = ival{base: old.base, w: old.w}
		}
		in.store(x.X, nv, true)
		if x.Postfix {
			return old
		}
		return nv
	case "&":
		return in.addr(x.X)
	case "*":
		p := in.eval(x.X)
		in.touch(x, p, true, false)
		return unknown()
	}
	v := in.eval(x.X)
	if !v.known || v.base != nil {
		return unknown()
	}
	switch x.Op {
	case "-":
		c := v.cls
		return intVal(-v.n, c)
	case "+":
		return v
	case "!":
		if v.n == 0 {
			return intVal(1, i32)
		}
		return intVal(0, i32)
	case "~":
		return intVal(^v.n, v.cls)
	}
	return unknown()
}

// common returns the class binary arithmetic on a and b is done in.
func common(a, b icls) icls {
	switch {
	case a == u64 || b == u64:
		return u64
	case a == i64 || b == i64:
		return i64
	case a == u32 || b == u32:
		return u32
	}
	return i32
}

func (in *interp) binary(x *BinaryExpr) ival {
	if assignOps[x.Op] {
		r := in.eval(x.Y)
		if x.Op != "=" {
			l := in.eval(x.X)
			r = arith(strings.TrimSuffix(x.Op, "="), l, r)
		}
		in.store(x.X, r, x.Op != "=")
		return r
	}
	switch x.Op {
	case ",":
		in.eval(x.X)
		return in.eval(x.Y)
	case "&&", "||":
		a := in.eval(x.X)
		if a.known && a.base == nil && (a.n == 0) == (x.Op == "&&") {
			return intVal(b2i(x.Op == "||"), i32)
		}
		saved := in.must
		if !a.known {
			in.must = false
		}
		b := in.eval(x.Y)
		in.must = saved
		if a.known && b.known && b.base == nil {
			return intVal(b2i(b.n != 0), i32)
		}
		if b.known && b.base == nil && (b.n == 0) == (x.Op == "&&") {
			return intVal(b2i(x.Op == "||"), i32)
		}
		return unknown()
	}
	return arith(x.Op, in.eval(x.X), in.eval(x.Y))
}

// arith applies a binary operator to two values.
func arith(op string, a, b ival) ival {
	if a.base != nil || b.base != nil {
		// Pointer arithmetic keeps the variable pointed into, even when the
		// offset is unknown.
		k := a.known && b.known
		switch {
		case op == "+" && a.base != nil && b.base == nil:
			return ival{known: k, base: a.base, n: a.n + b.n*a.width(), w: a.w}
		case op == "+" && b.base != nil && a.base == nil:
			return ival{known: k, base: b.base, n: b.n + a.n*b.width(), w: b.w}
		case op == "-" && a.base != nil && b.base == nil:
			return ival{known: k, base: a.base, n: a.n - b.n*a.width(), w: a.w}
		}
		return unknown()
	}
	if !a.known || !b.known {
		return unknown()
	}
	c := common(a.cls, b.cls)
	x, y := norm(a.n, c), norm(b.n, c)
	unsigned := c == u32 || c == u64
	switch op {
	case "+":
		return intVal(x+y, c)
	case "-":
		return intVal(x-y, c)
	case "*":
		return intVal(x*y, c)
	case "/", "%":
		if y == 0 {
			return unknown()
		}
		if unsigned && c == u64 && (x < 0 || y < 0) {
			return unknown()
		}
		if op == "/" {
			return intVal(x/y, c)
		}
		return intVal(x%y, c)
	case "<<":
		if b.n < 0 || b.n > 63 {
			return unknown()
		}
		// Classes are at least 32 bits wide: promotion keeps them.
		return intVal(norm(a.n, a.cls)<<uint(b.n), a.cls)
	case ">>":
		if b.n < 0 || b.n > 63 {
			return unknown()
		}
		return intVal(norm(a.n, a.cls)>>uint(b.n), a.cls)
	case "&":
		return intVal(x&y, c)
	case "|":
		return intVal(x|y, c)
	case "^":
		return intVal(x^y, c)
	case "==":
		return intVal(b2i(x == y), i32)
	case "!=":
		return intVal(b2i(x != y), i32)
	case "<":
		return intVal(b2i(x < y), i32)
	case "<=":
		return intVal(b2i(x <= y), i32)
	case ">":
		return intVal(b2i(x > y), i32)
	case ">=":
		return intVal(b2i(x >= y), i32)
	}
	return unknown()
}

// store assigns val to the lvalue x.
func (in *interp) store(x Expr, val ival, compound bool) {
	switch y := Unparen(x).(type) {
	case *NameExpr:
		v := in.sc.resolve(y)
		if v == nil {
			in.unknownf(y.Pos, y.End, "assignment to unknown name %s", y.Name)
			return
		}
		if v.Ref && v.IsMemory() {
			in.touch(y, in.refTarget(y, v), compound, true)
			return
		}
		if v.Ptr > 0 {
			in.env.set(v, in.retypeVar(val, v))
			return
		}
		in.env.set(v, convert(val, v.Elem))
	case *IndexExpr, *MemberExpr:
		in.access(y, compound, true, val)
	case *UnaryExpr:
		if y.Op == "*" {
			p := in.eval(y.X)
			in.touch(y, p, compound, true)
			return
		}
		in.unknownf(y.Pos, y.End, "assignment to an expression")
	default:
		in.unknownf(startOf(x), endOf(x), "assignment to an expression")
	}
}

// addr evaluates &x.
func (in *interp) addr(x Expr) ival {
	p, ok := in.elemAddr(x)
	if !ok {
		if n, isName := Unparen(x).(*NameExpr); isName {
			if v := in.sc.resolve(n); v != nil && !v.IsMemory() {
				in.unknownf(n.Pos, n.End, "address of %s taken", n.Name)
			}
		}
		return unknown()
	}
	return p
}

// elemAddr evaluates the address of an index chain (a[i][j]) or of an
// array row (a[i]) as a pointer value, without accessing it.
func (in *interp) elemAddr(x Expr) (ival, bool) {
	// Members of an element (a[i].x, a[i].f) touch the element.
	for {
		m, ok := x.(*MemberExpr)
		if !ok || m.Arrow {
			break
		}
		if _, isIdx := Unparen(m.X).(*IndexExpr); !isIdx {
			if _, isMem := Unparen(m.X).(*MemberExpr); !isMem {
				break
			}
		}
		x = Unparen(m.X)
	}
	root, subs, members := chain(x)
	if len(members) > 0 {
		for _, s := range subs {
			in.eval(s)
		}
		return unknown(), false
	}
	base := in.eval(root)
	if !base.known || base.base == nil {
		for _, s := range subs {
			in.eval(s)
		}
		if base.base != nil {
			// A pointer into a known variable at an unknown offset.
			return ival{known: false, base: base.base, w: base.w}, true
		}
		if n, ok := root.(*NameExpr); ok {
			if v := in.sc.resolve(n); v != nil && (v.Ptr > 0 || v.IsArray()) {
				if v.Space == Threadgroup && v.Ptr > 0 && v.Kind != ParamVar {
					in.unknownf(n.Pos, n.End, "threadgroup pointer %s, whose target is not followed", n.Name)
					return unknown(), false
				}
				return ival{known: false, base: v}, true
			}
		}
		return unknown(), false
	}
	v := base.base
	off := base.n
	known := true
	wd := base.width()
	// strides of the remaining dimensions of an array base, in elements.
	dims := v.Dims
	if off != 0 || base.n != 0 || wd != 1 {
		dims = nil // a pointer into an array: plain element offsets
	}
	if n, ok := root.(*NameExpr); ok {
		if rv := in.sc.resolve(n); rv != v {
			dims = nil // through a pointer variable
		}
	}
	if dims == nil && len(subs) > 1 {
		// p[i][j] through a pointer to rows: the row length is not followed.
		for _, s := range subs {
			in.eval(s)
		}
		return ival{known: false, base: v, w: base.w}, true
	}
	for k, s := range subs {
		idx := in.eval(s)
		stride := wd
		if dims != nil && k < len(dims) {
			for _, d := range dims[k+1:] {
				if d < 0 {
					known = false
				}
				stride *= d
			}
		}
		if !idx.known || idx.base != nil {
			known = false
			continue
		}
		off += idx.n * stride
	}
	if !known {
		return ival{known: false, base: v, w: base.w}, true
	}
	return ival{known: true, base: v, n: off, w: base.w}, true
}

// access records the access x (read, write or both) and returns the
// value read (always unknown: memory contents are not followed).
func (in *interp) access(x Expr, read, write bool, _ ival) ival {
	root, subs, members := chain(x)
	if n, ok := root.(*NameExpr); ok {
		v := in.sc.resolve(n)
		if v != nil && len(subs) == 0 && len(members) > 0 {
			if tv, ok := in.threadVar(v, members[0].Name, Span{startOf(x), endOf(x)}); ok && len(members) == 1 {
				return tv
			}
			if !v.IsMemory() {
				// A plain value's member: v.x.
				if write {
					in.env.set(v, unknown())
				}
				return unknown()
			}
			// A member through a reference: p.field.
			t := in.refTarget(x, v)
			t.known = false
			in.touch(x, t, read, write)
			return unknown()
		}
		if v != nil && !v.IsArray() && v.Ptr == 0 && !v.Ref {
			// Components of a vector value: v[i].
			for _, s := range subs {
				in.eval(s)
			}
			if write {
				in.env.set(v, unknown())
			}
			return unknown()
		}
		if v != nil && v.IsArray() && len(subs) < len(v.Dims) && len(members) == 0 {
			p, _ := in.elemAddr(x)
			return p
		}
	}
	p, ok := in.elemAddr(x)
	if !ok {
		in.unknownf(startOf(x), endOf(x), "access through an expression")
		return unknown()
	}
	in.touch(x, p, read, write)
	return unknown()
}

// touch records an access of the element p points to.
func (in *interp) touch(x Expr, p ival, read, write bool) {
	if in.rec == nil {
		return
	}
	if p.base == nil {
		in.unknownf(startOf(x), endOf(x), "access of unknown memory")
		return
	}
	v := p.base
	if v.Space == ThreadSpace || v.Space == NoSpace {
		return // private to the thread
	}
	if !p.known {
		in.rec.Touches[v] = append(in.rec.Touches[v], Touch{Thread: in.thread, Off: -1, Read: read, Write: write, Must: in.must, Pos: startOf(x), Stmt: in.top})
		return
	}
	// A pointee wider than the base's elements (a float4 through a cast
	// char pointer) touches each base element it covers.
	for k := int64(0); k < p.width(); k++ {
		in.rec.Touches[v] = append(in.rec.Touches[v], Touch{Thread: in.thread, Off: p.n + k, Read: read, Write: write, Must: in.must, Pos: startOf(x), Stmt: in.top})
	}
}

// refTarget returns what the memory reference v designates: itself for a
// parameter (a device or constant struct, say), nothing known for a local
// reference to threadgroup memory, which may name any threadgroup
// variable's element.
func (in *interp) refTarget(x Expr, v *Var) ival {
	if v.Space == Threadgroup && v.Kind != ParamVar {
		in.unknownf(startOf(x), endOf(x), "threadgroup reference %s, whose target is not followed", v.Name)
		return unknown()
	}
	return ival{known: true, base: v}
}

// pointee returns the element type a pointer type text points to
// ("threadgroup float4 *" gives float4, "device const T *" gives T), and
// false for a pointer to pointer or a text that is not a pointer type.
func pointee(typ string) (string, bool) {
	if strings.Count(typ, "*") != 1 || !strings.HasSuffix(strings.TrimSpace(typ), "*") {
		return "", false
	}
	var words []string
	for _, w := range strings.Fields(strings.TrimSuffix(strings.TrimSpace(typ), "*")) {
		switch w {
		case "device", "threadgroup", "constant", "thread", "const", "volatile", "threadgroup_imageblock", "ray_data", "object_data":
			continue
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return "", false
	}
	return strings.Join(words, " "), true
}

// retype gives pointer value v the element type elem: offsets stay in the
// base variable's elements; one element of elem covers a whole number of
// them, or the offset becomes unknown (a float pointer into a float4
// array, a type whose size is unknown).
func (in *interp) retype(v ival, elem string) ival {
	if v.base == nil {
		return v
	}
	be := in.sc.File.CanonicalType(v.base.Elem)
	ee := in.sc.File.CanonicalType(elem)
	if be == ee || v.base.Ptr > 1 {
		if v.base.Ptr > 1 {
			return ival{base: v.base}
		}
		return ival{known: v.known, base: v.base, n: v.n}
	}
	env := &Env{File: in.sc.File, Func: in.sc.Func, TemplateArgs: in.sc.TemplateArgs()}
	bs, _, ok1 := env.Layout(be)
	es, _, ok2 := env.Layout(ee)
	if !ok1 || !ok2 || bs <= 0 || es <= 0 || es%bs != 0 {
		return ival{base: v.base}
	}
	return ival{known: v.known, base: v.base, n: v.n, w: es / bs}
}

// retypeVar gives a value stored in pointer variable pv the variable's
// element type.
func (in *interp) retypeVar(val ival, pv *Var) ival {
	if val.base == nil || pv.Ptr != 1 {
		if val.base != nil {
			return ival{base: val.base}
		}
		return val
	}
	return in.retype(val, pv.Elem)
}

// call evaluates a call: integer casts and min/max are followed; pure
// functions read their arguments; atomics access memory; anything else is
// unknown.
func (in *interp) call(x *CallExpr) ival {
	name := ""
	if n, ok := x.Fun.(*NameExpr); ok {
		name = lastPart(n.Name)
	}
	args := make([]ival, len(x.Args))
	evalArgs := func() {
		for i, a := range x.Args {
			args[i] = in.eval(a)
		}
	}
	switch {
	case name == "":
		in.unknownf(x.Pos, x.End, "call through an expression")
		evalArgs()
		return unknown()
	case name == "threadgroup_barrier" || name == "simdgroup_barrier":
		evalArgs()
		return unknown()
	case len(x.Args) == 1 && in.sc.isType(name):
		evalArgs()
		return convert(args[0], name)
	case (name == "max" || name == "min") && len(x.Args) == 2:
		evalArgs()
		a, b := args[0], args[1]
		if !a.known || !b.known || a.base != nil || b.base != nil {
			return unknown()
		}
		c := common(a.cls, b.cls)
		if (norm(a.n, c) > norm(b.n, c)) == (name == "max") {
			return intVal(a.n, c)
		}
		return intVal(b.n, c)
	case strings.HasPrefix(name, "atomic_") && len(x.Args) > 0:
		p := in.eval(x.Args[0])
		for _, a := range x.Args[1:] {
			in.eval(a)
		}
		in.touch(x, p, true, !strings.HasPrefix(name, "atomic_load"))
		return unknown()
	case name == "simdgroup_load" || name == "simdgroup_store":
		in.matrixAccess(x, name == "simdgroup_store")
		return unknown()
	case in.sc.isPure(name) || IsCollective(name):
		evalArgs()
		if !castBuiltins[name] && !in.sc.isType(name) {
			// A library function handed a pointer to shared memory
			// (simdgroup_async_copy, a sub-group copy) may touch any of
			// its elements, both ways.
			for i, a := range args {
				if a.base != nil && a.base.Space != ThreadSpace && a.base.Space != NoSpace {
					in.touch(x.Args[i], ival{base: a.base}, true, true)
				}
			}
		}
		return unknown()
	}
	if in.sc.File.Func(name) == nil && in.sc.File.IsPureMacro(name) && in.readOnlyArgs(x) {
		// A pure macro of arguments that only read: what they read is
		// recorded (possibly more than the macro evaluates, never less),
		// its value is unknown.
		evalArgs()
		return unknown()
	}
	in.unknownf(x.Pos, x.End, "call of %s, whose effects are not followed", name)
	evalArgs()
	return unknown()
}

// readOnlyArgs reports whether call x's arguments write nothing: no
// variable, no memory, no call of the file's functions, nothing unknown.
// A pure macro may evaluate them conditionally, so a write in them could
// not be told to happen.
func (in *interp) readOnlyArgs(x *CallExpr) bool {
	for _, a := range x.Args {
		e := in.sc.ExprEffects(a, in.top)
		if len(e.Writes) > 0 || len(e.Calls) > 0 || len(e.Unknown) > 0 || len(e.AddrTaken) > 0 {
			return false
		}
		for _, ac := range e.Accesses {
			if ac.Write {
				return false
			}
		}
	}
	return true
}

// castBuiltins convert a value without touching memory.
var castBuiltins = map[string]bool{"static_cast": true, "reinterpret_cast": true, "as_type": true, "convert": true}

// matrixAccess records simdgroup_load(m, p, elements_per_row = 8,
// matrix_origin = ulong2(0, 0), transpose = false) or simdgroup_store(m,
// p, ...): the 8x8 elements p[(origin.y + r) * elements_per_row +
// origin.x + c], touched by the SIMD group together. Each thread records
// every element, so that a store by one SIMD group and a load by another
// (or by itself, through other lanes) conflict. A transposed access is
// recorded both ways; an unknown stride or origin touches an unknown
// element.
func (in *interp) matrixAccess(x *CallExpr, store bool) {
	args := make([]ival, len(x.Args))
	for i, a := range x.Args {
		if i == 3 {
			continue
		}
		args[i] = in.eval(a)
	}
	if len(x.Args) < 2 {
		in.unknownf(x.Pos, x.End, "%s without a pointer", lastPart(x.Fun.(*NameExpr).Name))
		return
	}
	p := args[1]
	if p.base == nil {
		in.unknownf(x.Pos, x.End, "simdgroup matrix access of unknown memory")
		return
	}
	stride, ox, oy := intVal(8, u64), intVal(0, u64), intVal(0, u64)
	if len(x.Args) > 2 {
		stride = args[2]
	}
	if len(x.Args) > 3 {
		ox, oy = in.origin(x.Args[3])
	}
	transposed := len(x.Args) > 4 && !(args[4].known && args[4].base == nil && args[4].n == 0)
	exact := p.known && stride.known && ox.known && oy.known && stride.base == nil && ox.base == nil && oy.base == nil
	if !exact {
		in.touch(x, ival{base: p.base}, !store, store)
		return
	}
	for r := int64(0); r < 8; r++ {
		for c := int64(0); c < 8; c++ {
			offs := []int64{(oy.n+r)*stride.n + ox.n + c}
			if transposed {
				offs = append(offs, (ox.n+r)*stride.n+oy.n+c)
			}
			for _, o := range offs {
				in.touch(x, ival{known: true, base: p.base, n: p.n + o*p.width(), w: p.w}, !store, store)
			}
		}
	}
}

// origin evaluates a matrix_origin argument, ulong2(x, y) or a vector
// value; the components are unknown unless given by a two-argument
// constructor.
func (in *interp) origin(a Expr) (ival, ival) {
	if c, ok := Unparen(a).(*CallExpr); ok && len(c.Args) == 2 {
		if n, ok := c.Fun.(*NameExpr); ok && in.sc.isType(lastPart(n.Name)) {
			return in.eval(c.Args[0]), in.eval(c.Args[1])
		}
	}
	in.eval(a)
	return unknown(), unknown()
}

// A Conflict is two accesses of one element by different threads, at
// least one a write, in one scenario.
type Conflict struct {
	Var      *Var
	A, B     Touch
	Scenario map[string]bool
	Geometry Dims // the threads per threadgroup it happens with; zero when one-dimensional threadgroups are assumed
}

// Conflicts returns the conflicts between footprints a and b of the same
// statements' scenarios (computed by ThreadFootprints for adjacent
// statement ranges): an element of threadgroup or device memory that one
// thread writes in one and another thread reads or writes in the other.
// Device memory is shared with every thread of the grid and buffers may
// alias, so any two device accesses of different variables with a write
// conflict too; so do threadgroup accesses of different variables when one
// is a helper's pointer or reference parameter. It returns at most one conflict per variable.
func Conflicts(a, b *Footprints) []Conflict {
	var out []Conflict
	for _, pair := range scenarioPairs(a, b) {
		fa, fb := pair[0], pair[1]
		for v, ta := range fa.Touches {
			if c, ok := conflictIn(v, ta, fb.Touches[v]); ok {
				c.Scenario, c.Geometry = fa.Scenario, fa.Geometry
				out = append(out, c)
			}
			if v.Space == Device || v.Space == Threadgroup {
				for w, tb := range fb.Touches {
					if w == v || w.Space != v.Space || v.Space == Threadgroup && !unboundPointer(v) && !unboundPointer(w) {
						continue
					}
					if c, ok := deviceAlias(v, ta, tb); ok {
						c.Scenario, c.Geometry = fa.Scenario, fa.Geometry
						out = append(out, c)
					}
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].A.Pos < out[j].A.Pos })
	return out
}

// scenarioPairs pairs the scenarios of a and b that agree on every
// function constant both set.
func scenarioPairs(a, b *Footprints) [][2]*Footprint {
	var out [][2]*Footprint
	for _, fa := range a.Scenarios {
		for _, fb := range b.Scenarios {
			agree := fa.Geometry == fb.Geometry
			for k, v := range fa.Scenario {
				if w, ok := fb.Scenario[k]; ok && w != v {
					agree = false
				}
			}
			if agree {
				out = append(out, [2]*Footprint{fa, fb})
			}
		}
	}
	return out
}

// unboundPointer reports whether v is a threadgroup pointer or reference
// parameter of a helper: it may point into any threadgroup variable of its
// callers, so its touches may be another variable's.
func unboundPointer(v *Var) bool {
	return v.Kind == ParamVar && (v.Ptr > 0 || v.Ref) && v.Attr("threadgroup") == nil
}

func deviceAlias(v *Var, ta, tb []Touch) (Conflict, bool) {
	// Any write on one side against any touch on the other; different
	// variables, so even one thread's accesses may be to another thread's
	// element.
	for _, x := range ta {
		if x.Write {
			if len(tb) > 0 {
				return Conflict{Var: v, A: x, B: tb[0]}, true
			}
			break
		}
	}
	for _, y := range tb {
		if y.Write {
			if len(ta) > 0 {
				return Conflict{Var: v, A: ta[0], B: y}, true
			}
			break
		}
	}
	return Conflict{}, false
}

// two keeps the touches of up to two distinct threads.
type two struct {
	n int
	t [2]Touch
}

func (w *two) add(t Touch) {
	for i := 0; i < w.n; i++ {
		if w.t[i].Thread == t.Thread {
			return
		}
	}
	if w.n < 2 {
		w.t[w.n] = t
		w.n++
	}
}

// other returns a kept touch by a thread other than thread.
func (w *two) other(thread int) (Touch, bool) {
	for i := 0; i < w.n; i++ {
		if w.t[i].Thread != thread {
			return w.t[i], true
		}
	}
	return Touch{}, false
}

// conflictIn finds two touches of one element, by different threads, at
// least one a write, in linear time.
func conflictIn(v *Var, ta, tb []Touch) (Conflict, bool) {
	if len(ta) == 0 || len(tb) == 0 {
		return Conflict{}, false
	}
	writes := map[int64]*two{}
	touches := map[int64]*two{}
	var anyW, anyT, unkW, unkT two
	for _, t := range ta {
		anyT.add(t)
		if t.Write {
			anyW.add(t)
		}
		if t.Off < 0 {
			unkT.add(t)
			if t.Write {
				unkW.add(t)
			}
			continue
		}
		if t.Write {
			w := writes[t.Off]
			if w == nil {
				w = &two{}
				writes[t.Off] = w
			}
			w.add(t)
		}
		w := touches[t.Off]
		if w == nil {
			w = &two{}
			touches[t.Off] = w
		}
		w.add(t)
	}
	for _, t := range tb {
		if t.Off < 0 {
			// An unknown element may be any other thread's.
			src := &anyW
			if t.Write {
				src = &anyT
			}
			if u, ok := src.other(t.Thread); ok {
				return Conflict{Var: v, A: u, B: t}, true
			}
			continue
		}
		src := &unkW
		if t.Write {
			src = &unkT
		}
		if u, ok := src.other(t.Thread); ok {
			return Conflict{Var: v, A: u, B: t}, true
		}
		if w := writes[t.Off]; w != nil {
			if u, ok := w.other(t.Thread); ok {
				return Conflict{Var: v, A: u, B: t}, true
			}
		}
		if t.Write {
			if w := touches[t.Off]; w != nil {
				if u, ok := w.other(t.Thread); ok {
					return Conflict{Var: v, A: u, B: t}, true
				}
			}
		}
	}
	return Conflict{}, false
}

// String describes the conflict.
func (c Conflict) String() string {
	kind := func(t Touch) string {
		switch {
		case t.Write && t.Read:
			return "updates"
		case t.Write:
			return "writes"
		}
		return "reads"
	}
	el := func(t Touch) string {
		if t.Off < 0 {
			return "an unknown element"
		}
		return fmt.Sprintf("element %d", t.Off)
	}
	s := fmt.Sprintf("thread %d %s %s of %s and thread %d %s %s", c.A.Thread, kind(c.A), el(c.A), c.Var.Name, c.B.Thread, kind(c.B), el(c.B))
	if c.Geometry != (Dims{}) {
		s += fmt.Sprintf(" with %s threads per threadgroup", c.Geometry)
	}
	if len(c.Scenario) > 0 {
		var parts []string
		for k, v := range c.Scenario {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(parts)
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}
