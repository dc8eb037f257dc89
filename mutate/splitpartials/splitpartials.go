package splitpartials

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

//go:embed doc.go
var doc string

// Mutation is the split-partials mutation.
var Mutation = &mutate.Mutation{
	Name: "split-partials",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

// A round is a run of intervals of the region that one set of stores
// feeds.
type round struct {
	from, to int // interval indexes, inclusive
	alias    bool
	accesses []msl.Access
}

func run(p *mutate.Pass) error {
	sc := p.Scope()
	for _, v := range sc.Vars() {
		if v.Kind != msl.LocalVar || v.Space != msl.Threadgroup || !v.IsArray() || v.Decl == nil {
			continue
		}
		site(p, sc, v)
	}
	return nil
}

func site(p *mutate.Pass, sc *msl.Scope, x *msl.Var) {
	f := p.File
	d := x.Decl
	skip := func(format string, args ...any) {
		p.Skip(mutate.Skip{Pos: d.Pos, End: d.End, Reason: fmt.Sprintf("split %s: ", x.Name) + fmt.Sprintf(format, args...)})
	}
	for _, dim := range x.Dims {
		if dim <= 0 {
			skip("its dimensions are not constants")
			return
		}
	}
	if len(d.Names) != 1 {
		skip("its declaration declares several names")
		return
	}
	fe := sc.FuncEffects()
	aliases := aliasesOf(sc, x)
	var direct, via []msl.Access
	for _, a := range fe.Accesses {
		switch {
		case a.Var == x:
			direct = append(direct, a)
		case aliases[a.Var] != nil:
			via = append(via, a)
		}
	}
	if len(direct) == 0 {
		return
	}
	if why := escapes(sc, x, direct, aliases); why != "" {
		skip("%s", why)
		return
	}
	parents := msl.Parents(sc.Func.Body)
	region := commonBlock(parents, append(append([]msl.Access{}, direct...), via...))
	if region == nil {
		skip("its accesses are not in one block")
		return
	}
	if c := mutate.Conditional(f, region.Lbrace, region.Rbrace+1); c != "" {
		skip("the block of its rounds holds %s", c)
		return
	}
	ivs := msl.Intervals(region)
	top := func(s msl.Stmt) int {
		for q := s; q != nil; q = parents[q] {
			if parents[q] == region {
				idx := region.Index(q)
				for k, iv := range ivs {
					if idx >= iv.From && idx < iv.From+len(iv.Stmts) {
						return k
					}
				}
			}
		}
		return -1
	}
	type marks struct {
		dw, dr, aw, ar bool
		line           int // of the interval's first access
	}
	m := make([]marks, len(ivs))
	byIv := make([][]msl.Access, len(ivs))
	note := func(k int, a msl.Access) {
		l := f.Position(startOf2(a.Expr)).Line
		if m[k].line == 0 || l < m[k].line {
			m[k].line = l
		}
	}
	for _, a := range direct {
		k := top(a.Stmt)
		if k < 0 {
			skip("an access is not in its block's intervals")
			return
		}
		m[k].dw = m[k].dw || a.Write
		m[k].dr = m[k].dr || a.Read
		byIv[k] = append(byIv[k], a)
		note(k, a)
	}
	for _, a := range via {
		k := top(a.Stmt)
		if k < 0 {
			skip("an alias access is not in its block's intervals")
			return
		}
		m[k].aw = m[k].aw || a.Write
		m[k].ar = m[k].ar || a.Read
		note(k, a)
	}
	line := func(k int) int { return m[k].line }
	var rounds []*round
	var cur *round
	read := false
	for k := range ivs {
		mk := m[k]
		if mk.aw || mk.ar {
			if mk.dw || mk.dr {
				skip("the interval at line %d touches it both directly and through %s", line(k), aliasNames(aliases))
				return
			}
			if cur == nil || !cur.alias {
				if !mk.aw {
					skip("the alias is read at line %d before it is written", line(k))
					return
				}
				cur = &round{from: k, to: k, alias: true}
				rounds = append(rounds, cur)
				continue
			}
			cur.to = k
			continue
		}
		if cur != nil && cur.alias && (mk.dw || mk.dr) {
			skip("it is used directly at line %d after its alias", line(k))
			return
		}
		if mk.dw && (cur == nil || read) {
			if mk.dr && cur != nil {
				skip("the interval at line %d reads one round and writes the next", line(k))
				return
			}
			cur = &round{from: k, to: k}
			rounds = append(rounds, cur)
			read = false
		}
		if mk.dr {
			if cur == nil {
				skip("it is read at line %d before any write in its block", line(k))
				return
			}
			if k > cur.from {
				read = true
			}
		}
		if (mk.dw || mk.dr) && cur != nil {
			cur.to = k
			cur.accesses = append(cur.accesses, byIv[k]...)
		}
	}
	var directRounds []*round
	for _, r := range rounds {
		if !r.alias {
			directRounds = append(directRounds, r)
		}
	}
	if len(directRounds) < 2 {
		return // used once: nothing to split
	}
	threads, why := coverage(sc, x, ivs, rounds)
	if why != "" {
		skip("%s", why)
		return
	}
	size, _, ok := (&msl.Env{File: f, Func: sc.Func}).Layout(x.Elem)
	if !ok {
		skip("the size of %s is not known", x.Elem)
		return
	}
	bytes := size
	for _, dim := range x.Dims {
		bytes *= dim
	}
	var choices []mutate.Choice
	names := newNames(sc, x, len(directRounds))
	// The proof read the whole block of the rounds: guards make any other
	// choice that edits it conflict with the split.
	guard := func(c mutate.Choice) mutate.Choice {
		c.Edits = append(c.Edits, mutate.Guards(f.Src, region.Lbrace, region.Rbrace+1, c.Edits)...)
		return c
	}
	for k := 2; k <= len(directRounds); k++ {
		choices = append(choices, guard(declChoice(sc, x, directRounds, k, names, bytes)), guard(dimChoice(sc, x, directRounds, k, bytes)))
	}
	var spans []string
	for _, r := range directRounds {
		lo, hi := 0, 0
		for _, a := range r.accesses {
			l := f.Position(startOf2(a.Expr)).Line
			if lo == 0 || l < lo {
				lo = l
			}
			hi = max(hi, l)
		}
		spans = append(spans, fmt.Sprintf("%d-%d", lo, hi))
	}
	msg := fmt.Sprintf("%s: %d rounds (lines %s)", x.Name, len(directRounds), strings.Join(spans, ", "))
	if len(rounds) > len(directRounds) {
		msg += fmt.Sprintf(", then %s", aliasNames(aliases))
	}
	msg += fmt.Sprintf("; +%d bytes per copy; exact for threadgroups of %s", bytes, threads)
	p.Report(mutate.Site{Pos: d.Pos, End: d.End, Message: msg, Choices: choices})
}

func startOf(s msl.Stmt) int {
	p, _ := s.Span()
	return p
}

func startOf2(x msl.Expr) int {
	p, _ := x.Span()
	return p
}

// aliasesOf returns the local pointers initialised to point into x and
// never assigned again, with their initialisers' statements.
func aliasesOf(sc *msl.Scope, x *msl.Var) map[*msl.Var]*msl.Decl {
	out := map[*msl.Var]*msl.Decl{}
	for _, v := range sc.Vars() {
		if v.Kind != msl.LocalVar || v.Ptr != 1 || v.Decl == nil || v.Init.End <= v.Init.Pos {
			continue
		}
		pos, end, _ := sc.File.InitExpr(v.Decl.Names[0])
		if len(v.Decl.Names) != 1 || end <= pos {
			continue
		}
		init, err := sc.File.ParseExpr(pos, end)
		if err != nil {
			continue
		}
		if rootOf(sc, init) == x {
			out[v] = v.Decl
		}
	}
	return out
}

// rootOf returns the array a pointer expression points into: a, a[i],
// &a[i][j], a + n.
func rootOf(sc *msl.Scope, x msl.Expr) *msl.Var {
	switch y := msl.Unparen(x).(type) {
	case *msl.NameExpr:
		if v := sc.Lookup(y.Name, y.Pos); v != nil && v.IsArray() {
			return v
		}
	case *msl.IndexExpr:
		return rootOf(sc, y.X)
	case *msl.UnaryExpr:
		if y.Op == "&" {
			return rootOf(sc, y.X)
		}
	case *msl.BinaryExpr:
		if y.Op == "+" || y.Op == "-" {
			return rootOf(sc, y.X)
		}
	case *msl.CastExpr:
		return rootOf(sc, y.X)
	}
	return nil
}

func aliasNames(aliases map[*msl.Var]*msl.Decl) string {
	var names []string
	for v := range aliases {
		names = append(names, v.Name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "no alias"
	}
	return "alias " + strings.Join(names, ", ")
}

// escapes returns why x's address may reach code the split cannot follow,
// or "": every use of its name must be an element access or an alias's
// initialiser, and every alias must never be assigned again.
func escapes(sc *msl.Scope, x *msl.Var, direct []msl.Access, aliases map[*msl.Var]*msl.Decl) string {
	f := sc.File
	ok := map[int]bool{}
	for _, a := range direct {
		pos, _ := a.Expr.Span()
		if len(a.Subs) != len(x.Dims) {
			// Passed whole to a function, or an access the facts could not
			// follow.
			return fmt.Sprintf("its address is used at %s other than for an element or an alias", f.At(pos))
		}
		ok[pos] = true
	}
	var inits []msl.Span
	for _, d := range aliases {
		inits = append(inits, msl.Span{Pos: d.Pos, End: d.End})
	}
	fe := sc.FuncEffects()
	for v := range aliases {
		if fe.AddrTaken[v] {
			return fmt.Sprintf("the address of alias %s is taken", v.Name)
		}
		// Writes other than its declaration.
		for _, t := range f.SigTokens(sc.Func.Body.Lbrace, sc.Func.End) {
			if t.Kind != msl.Ident || t.Text != v.Name || t.Pos == v.NamePos || sc.Lookup(t.Text, t.Pos) != v {
				continue
			}
			next := f.SigTokens(t.End, sc.Func.End)
			if len(next) > 0 && (msl.IsAssignOp(next[0].Text) || next[0].Text == "++" || next[0].Text == "--") {
				return fmt.Sprintf("alias %s is reassigned at %s", v.Name, f.At(t.Pos))
			}
		}
	}
	for _, t := range f.SigTokens(sc.Func.Body.Lbrace, sc.Func.End) {
		if t.Kind != msl.Ident || t.Text != x.Name || t.Pos == x.NamePos || sc.Lookup(t.Text, t.Pos) != x {
			continue
		}
		if ok[t.Pos] {
			continue
		}
		inAlias := false
		for _, sp := range inits {
			if t.Pos >= sp.Pos && t.Pos < sp.End {
				inAlias = true
			}
		}
		if inAlias {
			continue
		}
		return fmt.Sprintf("its address is used at %s other than for an element or an alias", f.At(t.Pos))
	}
	return ""
}

// commonBlock returns the innermost block containing every access.
func commonBlock(parents map[msl.Stmt]msl.Stmt, accs []msl.Access) *msl.Block {
	var common []msl.Stmt
	for i, a := range accs {
		var chain []msl.Stmt
		for q := a.Stmt; q != nil; q = parents[q] {
			chain = append([]msl.Stmt{q}, chain...)
		}
		if i == 0 {
			common = chain
			continue
		}
		n := 0
		for n < len(common) && n < len(chain) && common[n] == chain[n] {
			n++
		}
		common = common[:n]
	}
	for i := len(common) - 1; i >= 0; i-- {
		if b, ok := common[i].(*msl.Block); ok {
			// The block must hold the accesses in statements of its own, not
			// be one of them (an access's statement is never a block).
			return b
		}
	}
	return nil
}

// coverage checks that every round reads only elements it has written in
// an earlier interval, for threadgroups of 32 to 1024 threads; it returns
// the sizes for which this holds, or why it never does.
func coverage(sc *msl.Scope, x *msl.Var, ivs []msl.Interval, rounds []*round) (string, string) {
	f := sc.File
	fps := make([]*msl.Footprints, len(ivs))
	footprint := func(k int) (*msl.Footprints, string) {
		if fps[k] == nil {
			fps[k] = sc.Footprints(ivs[k].Stmts)
		}
		if w := fps[k].Why(); w != "" {
			return nil, fmt.Sprintf("cannot follow every thread: %s at %s", w, f.At(fps[k].Unknown[0].Pos))
		}
		return fps[k], ""
	}
	var assumes []string
	var valid []int
	firstFail := ""
	for n := msl.SIMDWidth; n <= msl.MaxThreads; n += msl.SIMDWidth {
		fail := ""
		for ri, r := range rounds {
			nsc := 0
			for k := r.from; k <= r.to; k++ {
				fp, why := footprint(k)
				if why != "" {
					return "", why
				}
				nsc = len(fp.Scenarios)
				assumes = append(assumes, fp.Assumes...)
			}
			for s := 0; s < nsc && fail == ""; s++ {
				written := map[int64]bool{}
				for k := r.from; k <= r.to && fail == ""; k++ {
					fp := fps[k].Scenarios[s]
					for _, t := range fp.Touches[x] {
						if t.Thread >= n || !t.Read {
							continue
						}
						if k == r.from {
							fail = fmt.Sprintf("round %d reads %s in the interval that writes it (line %d)", ri+1, x.Name, f.Position(t.Pos).Line)
							break
						}
						if t.Off < 0 {
							fail = fmt.Sprintf("round %d reads an element of %s the thread footprints cannot tell (line %d)", ri+1, x.Name, f.Position(t.Pos).Line)
							break
						}
						if !written[t.Off] {
							fail = fmt.Sprintf("with %d threads, thread %d reads element %d of %s at line %d, which round %d does not write before", n, t.Thread, t.Off, x.Name, f.Position(t.Pos).Line, ri+1)
							break
						}
					}
					for _, t := range fp.Touches[x] {
						if t.Thread < n && t.Write && t.Must && t.Off >= 0 {
							written[t.Off] = true
						}
					}
				}
			}
			if fail != "" {
				break
			}
		}
		if fail == "" {
			valid = append(valid, n)
		} else if firstFail == "" || strings.HasPrefix(firstFail, "with") && !strings.HasPrefix(fail, "with") {
			firstFail = fail
		}
		if fail != "" && !strings.HasPrefix(fail, "with") {
			return "", fail // not a matter of threadgroup size
		}
	}
	if len(valid) == 0 {
		return "", firstFail
	}
	desc := describeSizes(valid)
	if len(assumes) > 0 {
		seen := map[string]bool{}
		var as []string
		for _, a := range assumes {
			if !seen[a] {
				seen[a] = true
				as = append(as, a)
			}
		}
		desc += ", assuming " + strings.Join(as, ", ")
	}
	return desc, ""
}

// describeSizes writes a set of threadgroup sizes compactly.
func describeSizes(ns []int) string {
	contiguous := true
	for i := 1; i < len(ns); i++ {
		if ns[i] != ns[i-1]+msl.SIMDWidth {
			contiguous = false
		}
	}
	if contiguous {
		if len(ns) == 1 {
			return fmt.Sprintf("%d threads", ns[0])
		}
		return fmt.Sprintf("%d-%d threads", ns[0], ns[len(ns)-1])
	}
	var parts []string
	for _, n := range ns {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ", ") + " threads"
}

// newNames returns the names of the copies of rounds 2..n.
func newNames(sc *msl.Scope, x *msl.Var, n int) []string {
	out := []string{x.Name}
	used := map[string]bool{}
	for j := 2; j <= n; j++ {
		base := fmt.Sprintf("%s_%d", x.Name, j)
		name := base
		for k := 2; sc.Declared(name) || used[name]; k++ {
			name = fmt.Sprintf("%s_%d", base, k)
		}
		used[name] = true
		out = append(out, name)
	}
	return out
}

// rootName returns the name expression an access starts from.
func rootName(a msl.Access) *msl.NameExpr {
	x := a.Expr
	for {
		switch y := x.(type) {
		case *msl.IndexExpr:
			x = y.X
			continue
		case *msl.MemberExpr:
			x = y.X
			continue
		case *msl.ParenExpr:
			x = y.X
			continue
		case *msl.NameExpr:
			return y
		}
		return nil
	}
}

// firstIndex returns the subscript applied directly to the array's name.
func firstIndex(a msl.Access) *msl.IndexExpr {
	var last *msl.IndexExpr
	x := a.Expr
	for {
		switch y := x.(type) {
		case *msl.IndexExpr:
			last = y
			x = y.X
			continue
		case *msl.MemberExpr:
			x = y.X
			continue
		case *msl.ParenExpr:
			x = y.X
			continue
		}
		return last
	}
}

// declChoice gives rounds 2..k new declarations.
func declChoice(sc *msl.Scope, x *msl.Var, rounds []*round, k int, names []string, bytes int64) mutate.Choice {
	f := sc.File
	d := x.Decl
	src := f.Src
	_, next, _ := mutate.LineSpan(f, d.Pos, d.End, false)
	indent := mutate.Indent(src, d.Pos)
	eol := mutate.EOL(src, d.Pos)
	text := string(src[d.Pos:d.End])
	off := x.NamePos - d.Pos
	var ins strings.Builder
	for j := 2; j <= k; j++ {
		ins.WriteString(indent + text[:off] + names[j-1] + text[off+len(x.Name):] + eol)
	}
	edits := []edit.Edit{{Start: next, End: next, New: ins.String()}}
	for j := 2; j <= k; j++ {
		for _, a := range rounds[j-1].accesses {
			if n := rootName(a); n != nil {
				edits = append(edits, edit.Edit{Start: n.Pos, End: n.End, New: names[j-1]})
			}
		}
	}
	return mutate.Choice{
		Name:    fmt.Sprintf("decl-%d", k),
		Message: fmt.Sprintf("rounds 2-%d write new buffers %s (+%d bytes)", k, strings.Join(names[1:k], ", "), int64(k-1)*bytes),
		Edits:   dedupe(edits),
	}
}

// dimChoice makes the first dimension k times larger and moves round j
// to rows (j-1)*d0 onwards.
func dimChoice(sc *msl.Scope, x *msl.Var, rounds []*round, k int, bytes int64) mutate.Choice {
	f := sc.File
	dim := x.Decl.Names[0].Dims[0]
	dtext := strings.TrimSpace(f.Text(dim.Pos, dim.End))
	d0 := x.Dims[0]
	newDim := strconv.FormatInt(int64(k)*d0, 10)
	if _, err := strconv.ParseInt(dtext, 10, 64); err != nil {
		newDim = fmt.Sprintf("%d * (%s)", k, dtext)
	}
	edits := []edit.Edit{{Start: dim.Pos, End: dim.End, New: newDim}}
	for j := 2; j <= k; j++ {
		shift := int64(j-1) * d0
		for _, a := range rounds[j-1].accesses {
			ix := firstIndex(a)
			if ix == nil {
				continue
			}
			pos, end := ix.I.Span()
			it := f.Text(pos, end)
			var nt string
			if n, err := strconv.ParseInt(strings.TrimSpace(it), 0, 64); err == nil {
				nt = strconv.FormatInt(n+shift, 10)
			} else {
				nt = fmt.Sprintf("%d + (%s)", shift, it)
			}
			edits = append(edits, edit.Edit{Start: pos, End: end, New: nt})
		}
	}
	return mutate.Choice{
		Name:    fmt.Sprintf("dim-%d", k),
		Message: fmt.Sprintf("rounds 2-%d use rows of a %d times larger first dimension (+%d bytes)", k, k, int64(k-1)*bytes),
		Edits:   dedupe(edits),
	}
}

func dedupe(es []edit.Edit) []edit.Edit {
	var out []edit.Edit
	seen := map[edit.Edit]bool{}
	for _, e := range es {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}
