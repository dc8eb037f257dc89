package unroll

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

//go:embed doc.go
var doc string

// Mutation is the unroll mutation.
var Mutation = &mutate.Mutation{
	Name: "unroll",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

// Limits of a full unroll.
const (
	maxFullTrips = 64
	maxFullBytes = 16 << 10
)

func run(p *mutate.Pass) error {
	sc := p.Scope()
	parents := msl.Parents(p.Func.Body)
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		switch s := s.(type) {
		case *msl.While:
			p.Skip(mutate.Skip{Pos: s.Pos, End: s.Pos + len("while"), Reason: "while loop: only counted for loops are unrolled"})
		case *msl.Do:
			p.Skip(mutate.Skip{Pos: s.Pos, End: s.Pos + len("do"), Reason: "do loop: only counted for loops are unrolled"})
		case *msl.MacroUse:
			if s.Hides == "loop" {
				p.Skip(mutate.Skip{Pos: s.Pos, End: s.End, Reason: "loop hidden behind macro " + s.Name})
			}
		case *msl.For:
			site(p, sc, parents, s)
		}
		return true
	})
	return nil
}

func site(p *mutate.Pass, sc *msl.Scope, parents map[msl.Stmt]msl.Stmt, s *msl.For) {
	f := p.File
	src := f.Src
	header := s.Rparen + 1
	skip := func(why string) {
		p.Skip(mutate.Skip{Pos: s.Pos, End: header, Reason: why})
	}
	if c := mutate.Conditional(f, s.Pos, s.End); c != "" {
		skip("the loop holds " + c + ": copies would change which configuration its lines belong to")
		return
	}
	l, why := sc.CountLoop(s)
	if l == nil {
		skip("trip count unknown: " + why)
		return
	}
	if l.Trips == 0 {
		skip("the loop runs no iteration")
		return
	}
	for _, j := range sc.Effects(s.Body).Jumps {
		at := fmt.Sprintf("%s", f.At(j.Pos))
		switch {
		case j.Kind == "break" && j.Depth == 0:
			skip("the body breaks out of the loop at " + at)
			return
		case j.Kind == "continue" && j.Loops == 0:
			skip("the body continues the loop at " + at)
			return
		case j.Kind == "return" || j.Kind == "goto" || j.Kind == "discard_fragment":
			skip(fmt.Sprintf("the body has a %s at %s", j.Kind, at))
			return
		case j.Kind == "label":
			skip("the body has a label at " + at)
			return
		}
	}
	v := sc.Lookup(l.Var, s.Cond.Pos)
	if v == nil {
		skip("induction variable " + l.Var + " is not declared")
		return
	}
	typ := l.VarType
	if typ == "" {
		typ = v.Elem
	}
	var choices []mutate.Choice
	var refused []string
	for _, k := range []int64{2, 4} {
		switch {
		case l.Geo != "":
			if k == 2 {
				refused = append(refused, fmt.Sprintf("a partial unroll needs an additive step, not %s %s", l.Geo, strconv.FormatInt(l.GeoBy, 10)))
			}
		case l.Trips <= k:
		case l.Trips%k != 0:
			refused = append(refused, fmt.Sprintf("by%d: %d iterations are not a multiple of %d", k, l.Trips, k))
		default:
			c, err := partial(f, sc, s, l, v, typ, k)
			if err != "" {
				refused = append(refused, fmt.Sprintf("by%d: %s", k, err))
				continue
			}
			choices = append(choices, c)
		}
	}
	if c, err := full(f, sc, parents, s, l, v, typ); err != "" {
		refused = append(refused, "full: "+err)
	} else {
		choices = append(choices, c)
	}
	if len(choices) == 0 {
		skip(strings.Join(refused, "; "))
		return
	}
	_ = src
	msg := fmt.Sprintf("for loop over %s, trip count %d", l.Var, l.Trips)
	if b := sc.BoundIn(s.Pos, header); b != "" {
		msg += " (" + b + ")"
	}
	p.Report(mutate.Site{Pos: s.Pos, End: header, Message: msg, Choices: choices, Binds: sc.BindsIn(s.Pos, header)})
}

// full returns the choice that replaces the loop by one block per
// iteration.
func full(f *msl.File, sc *msl.Scope, parents map[msl.Stmt]msl.Stmt, s *msl.For, l *msl.Loop, v *msl.Var, typ string) (mutate.Choice, string) {
	src := f.Src
	if l.Trips > maxFullTrips {
		return mutate.Choice{}, fmt.Sprintf("%d iterations, more than %d", l.Trips, maxFullTrips)
	}
	if l.Values == nil {
		return mutate.Choice{}, "the iteration values are not known"
	}
	bp, be := s.Body.Span()
	if int64(be-bp)*l.Trips > maxFullBytes {
		return mutate.Choice{}, fmt.Sprintf("%d copies of a %d-byte body exceed %d bytes", l.Trips, be-bp, maxFullBytes)
	}
	if !l.Declared {
		if at := usedAfter(f, sc, s, v); at >= 0 {
			return mutate.Choice{}, fmt.Sprintf("%s is used after the loop at %s", l.Var, f.At(at))
		}
	}
	eol := mutate.EOL(src, s.Pos)
	indent := mutate.Indent(src, s.Pos)
	var copies []string
	for _, val := range l.Values {
		lit, ok := literal(typ, val)
		if !ok {
			return mutate.Choice{}, fmt.Sprintf("no literal of type %q for %s", typ, l.Var)
		}
		copies = append(copies, bodyCopy(f, sc, s.Body, v, lit))
	}
	text := strings.Join(copies, eol+indent)
	if _, inBlock := parents[s].(*msl.Block); !inBlock {
		unit := "    "
		if strings.HasPrefix(indent, "\t") {
			unit = "\t"
		}
		text = "{" + eol + indent + unit + mutate.Reindent(text, unit) + eol + indent + "}"
	}
	edits := []edit.Edit{{Start: s.Pos, End: s.End, New: text}}
	for _, pr := range s.Pragmas {
		if !mutate.IsLoopPragma(pr) {
			continue
		}
		start, next, whole := mutate.LineSpan(f, pr.Pos, pr.End, false)
		if whole {
			edits = append(edits, edit.Edit{Start: start, End: next})
		} else {
			end := pr.End
			for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
				end++
			}
			edits = append(edits, edit.Edit{Start: pr.Pos, End: end})
		}
	}
	return mutate.Choice{Name: "full", Message: fmt.Sprintf("unroll all %d iterations", l.Trips), Edits: edits}, ""
}

// partial returns the choice that unrolls by k, keeping the loop.
func partial(f *msl.File, sc *msl.Scope, s *msl.For, l *msl.Loop, v *msl.Var, typ string, k int64) (mutate.Choice, string) {
	src := f.Src
	step := l.Step * k
	post := fmt.Sprintf("%s += %d", l.Var, step)
	if step < 0 {
		post = fmt.Sprintf("%s -= %d", l.Var, -step)
	}
	eol := mutate.EOL(src, s.Pos)
	var unit, closeIndent string
	if b, ok := s.Body.(*msl.Block); ok {
		unit = mutate.IndentUnit(src, b)
		closeIndent = mutate.Indent(src, b.Rbrace)
	} else {
		closeIndent = mutate.Indent(src, s.Pos)
		unit = "    "
		if strings.HasPrefix(closeIndent, "\t") {
			unit = "\t"
		}
	}
	in := closeIndent + unit
	var b strings.Builder
	b.WriteString("{")
	for j := int64(0); j < k; j++ {
		repl := ""
		if j > 0 {
			var ok bool
			repl, ok = offset(l.Var, typ, j*l.Step)
			if !ok {
				return mutate.Choice{}, fmt.Sprintf("no literal of type %q for %s", typ, l.Var)
			}
		}
		b.WriteString(eol + in + mutate.Reindent(bodyCopy(f, sc, s.Body, v, repl), unit))
	}
	b.WriteString(eol + closeIndent + "}")
	bp, be := s.Body.Span()
	return mutate.Choice{
		Name:    fmt.Sprintf("by%d", k),
		Message: fmt.Sprintf("unroll by %d", k),
		Edits: []edit.Edit{
			{Start: s.Post.Pos, End: s.Post.End, New: post},
			{Start: bp, End: be, New: b.String()},
		},
	}, ""
}

// bodyCopy returns the body as one block, with every use of v replaced by
// repl (none when repl is "").
func bodyCopy(f *msl.File, sc *msl.Scope, body msl.Stmt, v *msl.Var, repl string) string {
	bp, be := body.Span()
	text := subst(f, sc, bp, be, v, repl)
	if _, ok := body.(*msl.Block); ok {
		return text
	}
	return "{ " + text + " }"
}

// subst returns src[pos:end] with every identifier token naming v replaced
// by repl ("" keeps them).
func subst(f *msl.File, sc *msl.Scope, pos, end int, v *msl.Var, repl string) string {
	if repl == "" {
		return string(f.Src[pos:end])
	}
	var b strings.Builder
	last := pos
	prev := ""
	for _, t := range f.SigTokens(pos, end) {
		p := prev
		prev = t.Text
		if t.Kind != msl.Ident || t.Text != v.Name || p == "." || p == "->" || p == "::" {
			continue
		}
		if sc.Lookup(t.Text, t.Pos) != v {
			continue
		}
		b.Write(f.Src[last:t.Pos])
		b.WriteString(repl)
		last = t.End
	}
	b.Write(f.Src[last:end])
	return b.String()
}

// usedAfter returns the offset of the first use of v after loop s in the
// function, or -1.
func usedAfter(f *msl.File, sc *msl.Scope, s *msl.For, v *msl.Var) int {
	prev := ""
	for _, t := range f.SigTokens(s.End, sc.Func.End) {
		p := prev
		prev = t.Text
		if t.Kind == msl.Ident && t.Text == v.Name && p != "." && p != "->" && p != "::" && sc.Lookup(t.Text, t.Pos) == v {
			return t.Pos
		}
	}
	return -1
}

// literal returns val written as a constant of type typ.
func literal(typ string, val int64) (string, bool) {
	n := strconv.FormatInt(val, 10)
	neg := val < 0
	switch strings.Join(strings.Fields(typ), " ") {
	case "int", "signed", "signed int", "int32_t":
		if neg {
			return "(" + n + ")", true
		}
		return n, true
	case "uint", "unsigned", "unsigned int", "uint32_t":
		if neg {
			return "", false
		}
		return n + "u", true
	case "long", "int64_t", "long long":
		if neg {
			return "(" + n + "l)", true
		}
		return n + "l", true
	case "ulong", "uint64_t", "unsigned long", "unsigned long long":
		if neg {
			return "", false
		}
		return n + "ul", true
	case "", "auto", "float", "half", "double", "bool":
		return "", false
	}
	if strings.ContainsAny(typ, " *&<") {
		if strings.ContainsAny(typ, "*&<") {
			return "", false
		}
		return "((" + typ + ")" + n + ")", true
	}
	return typ + "(" + n + ")", true
}

// offset returns the expression for the induction variable plus delta,
// typed like it.
func offset(name, typ string, delta int64) (string, bool) {
	op := " + "
	mag := delta
	if delta < 0 {
		op, mag = " - ", -delta
	}
	n := strconv.FormatInt(mag, 10)
	switch strings.Join(strings.Fields(typ), " ") {
	case "int", "signed", "signed int", "int32_t":
		return "(" + name + op + n + ")", true
	case "uint", "unsigned", "unsigned int", "uint32_t":
		return "(" + name + op + n + "u)", true
	case "long", "int64_t", "long long":
		return "(" + name + op + n + "l)", true
	case "ulong", "uint64_t", "unsigned long", "unsigned long long":
		return "(" + name + op + n + "ul)", true
	case "", "auto", "float", "half", "double", "bool":
		return "", false
	}
	if strings.ContainsAny(typ, "*&<") {
		return "", false
	}
	if strings.Contains(typ, " ") {
		return "((" + typ + ")(" + name + op + n + "))", true
	}
	return typ + "(" + name + op + n + ")", true
}
