package unrollpragma

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

//go:embed doc.go
var doc string

// Mutation is the unroll-pragma mutation.
var Mutation = &mutate.Mutation{
	Name: "unroll-pragma",
	Doc:  mutate.ExtractDoc(doc),
	Run:  run,
}

func run(p *mutate.Pass) error {
	src := p.File.Src
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		switch s := s.(type) {
		case *msl.While:
			p.Skip(mutate.Skip{Pos: s.Pos, End: s.Pos + len("while"), Reason: "while loop: only for loops get unroll pragmas"})
		case *msl.Do:
			p.Skip(mutate.Skip{Pos: s.Pos, End: s.Pos + len("do"), Reason: "do loop: only for loops get unroll pragmas"})
		case *msl.MacroUse:
			if s.Hides == "loop" {
				p.Skip(mutate.Skip{Pos: s.Pos, End: s.End, Reason: "loop hidden behind macro " + s.Name})
			}
		case *msl.For:
			header := s.Rparen + 1
			if pr := loopPragma(s.Pragmas); pr != nil {
				why := fmt.Sprintf("loop already has pragma %q", pr.Text)
				if pr.Macro != "" {
					why = fmt.Sprintf("loop already has pragma %q from macro %s", pr.Text, pr.Macro)
				}
				p.Skip(mutate.Skip{Pos: s.Pos, End: header, Reason: why})
				return true
			}
			at, end, before, after := placement(src, s.Pos)
			trips, known := TripCount(p.File, p.Func, s)
			msg := "for loop, trip count unknown"
			if known {
				msg = fmt.Sprintf("for loop, trip count %d", trips)
			}
			pragma := func(name, text, message string) mutate.Choice {
				return mutate.Choice{
					Name:    name,
					Message: message,
					Edits:   []edit.Edit{{Start: at, End: end, New: before + "#pragma clang loop " + text + after}},
				}
			}
			choices := []mutate.Choice{pragma("full", "unroll(full)", "unroll fully")}
			for _, n := range []int64{2, 4, 8} {
				if known && n > trips || !known && n > 4 {
					continue
				}
				choices = append(choices, pragma(fmt.Sprintf("count%d", n), fmt.Sprintf("unroll_count(%d)", n), fmt.Sprintf("unroll by %d", n)))
			}
			choices = append(choices, pragma("disable", "unroll(disable)", "disable unrolling"))
			p.Report(mutate.Site{Pos: s.Pos, End: header, Message: msg, Choices: choices})
		}
		return true
	})
	return nil
}

// loopPragma returns the first of pragmas that tells the compiler how to
// treat the loop (unroll, nounroll, clang loop ..., GCC unroll/ivdep), or
// nil. Other pragmas before a loop (diagnostics, messages) do not stop a
// loop pragma being added.
func loopPragma(pragmas []*msl.Pragma) *msl.Pragma {
	for _, pr := range pragmas {
		w := strings.Fields(pr.Text)
		if len(w) == 0 {
			continue
		}
		first := w[0]
		if i := strings.IndexByte(first, '('); i >= 0 {
			first = first[:i] // unroll(4)
		}
		switch first {
		case "unroll", "nounroll", "unroll_and_jam", "nounroll_and_jam", "loop":
			return pr
		case "clang", "GCC":
			if len(w) > 1 && (w[1] == "loop" || w[1] == "unroll" || w[1] == "ivdep") {
				return pr
			}
		}
	}
	return nil
}

// placement says where a pragma line for the loop at pos goes: the edit
// replaces src[at:end] by before + pragma + after. A for first on its line
// gets the pragma on the line above, indented like the loop. A for that
// follows other code on its line (`if (c) for`, `{ for`, `} else for`) has
// the blanks before it replaced by a line break, so the pragma sits on a
// line of its own directly before the loop, and the loop moves to the next
// line; both are indented like the line the loop was on. A pragma is not a
// statement, so `if (c)` followed by the pragma line and the loop is still
// a single-statement body. A line ending in a backslash continuation would
// splice the pragma onto the line before, so a line break is put first.
func placement(src []byte, pos int) (at, end int, before, after string) {
	eol := mutate.EOL(src, pos)
	start, first := mutate.LineStart(src, pos)
	indentEnd := start
	for indentEnd < len(src) && (src[indentEnd] == ' ' || src[indentEnd] == '\t') {
		indentEnd++
	}
	indent := string(src[start:indentEnd])
	if first {
		before = indent
		if continued(src, start) {
			before = eol + indent
		}
		return start, start, before, eol
	}
	at = pos
	for at > start && (src[at-1] == ' ' || src[at-1] == '\t') {
		at--
	}
	return at, pos, eol + indent, eol + indent
}

// continued reports whether the line before the one starting at start ends
// in a backslash, splicing the two lines.
func continued(src []byte, start int) bool {
	i := start - 1 // the newline
	if i < 0 || src[i] != '\n' {
		return false
	}
	if i > 0 && src[i-1] == '\r' {
		i--
	}
	return i > 0 && src[i-1] == '\\'
}

// TripCount returns the number of iterations of a counted loop, written
// `for (T i = A; i < B; ++i)` and its variants (<, <=, !=, >, >= with the
// induction variable on either side; ++, --, +=, -= by a constant, or a
// geometric *=, /=, <<=, >>= by a constant), when A, B and the step are
// constants and the body never assigns the induction variable. It reports
// false otherwise: it never guesses.
func TripCount(f *msl.File, fn *msl.Func, s *msl.For) (int64, bool) {
	env := &msl.Env{File: f, Func: fn, At: s.Pos}
	init := tokens(f, s.Init)
	cond := tokens(f, s.Cond)
	post := tokens(f, s.Post)

	// Init: [type...] i = A, a single declarator.
	eq := -1
	for i, t := range init {
		if t.Text == "=" {
			eq = i
			break
		}
		if t.Text == "," {
			return 0, false
		}
	}
	if eq < 1 || init[eq-1].Kind != msl.Ident {
		return 0, false
	}
	v := init[eq-1].Text
	a, ok := eval(env, init[eq+1:])
	if !ok {
		return 0, false
	}

	// Post: ++i, i++, --i, i--, i += K, i -= K; or geometric: i *= K,
	// i /= K, i <<= K, i >>= K.
	var step int64
	var geo string // the geometric operator, if any
	switch {
	case len(post) >= 3 && post[0].Text == v && (post[1].Text == "*=" || post[1].Text == "/=" || post[1].Text == "<<=" || post[1].Text == ">>="):
		k, ok := eval(env, post[2:])
		if !ok || k <= 0 || k > 62 && (post[1].Text == "<<=" || post[1].Text == ">>=") {
			return 0, false
		}
		geo, step = post[1].Text, k
	case len(post) == 2 && post[0].Text == "++" && post[1].Text == v,
		len(post) == 2 && post[0].Text == v && post[1].Text == "++":
		step = 1
	case len(post) == 2 && post[0].Text == "--" && post[1].Text == v,
		len(post) == 2 && post[0].Text == v && post[1].Text == "--":
		step = -1
	case len(post) >= 3 && post[0].Text == v && (post[1].Text == "+=" || post[1].Text == "-="):
		k, ok := eval(env, post[2:])
		if !ok || k <= 0 {
			return 0, false
		}
		step = k
		if post[1].Text == "-=" {
			step = -k
		}
	default:
		return 0, false
	}

	// Cond: i OP B, or B OP i (mirrored).
	if len(cond) < 3 {
		return 0, false
	}
	var op string
	var b int64
	switch {
	case cond[0].Text == v && isCompare(cond[1].Text):
		op = cond[1].Text
		b, ok = eval(env, cond[2:])
	case cond[len(cond)-1].Text == v && isCompare(cond[len(cond)-2].Text):
		op = mirror[cond[len(cond)-2].Text]
		b, ok = eval(env, cond[:len(cond)-2])
	default:
		return 0, false
	}
	if !ok || assignedIn(f, s, v) {
		return 0, false
	}
	if geo != "" {
		return simulate(a, b, op, geo, step, !signed(init[:eq-1]))
	}
	ceil := func(n, d int64) int64 {
		if n <= 0 {
			return 0
		}
		return (n + d - 1) / d
	}
	switch {
	case step > 0 && op == "<":
		return ceil(b-a, step), true
	case step > 0 && op == "<=":
		return ceil(b-a+1, step), true
	case step < 0 && op == ">":
		return ceil(a-b, -step), true
	case step < 0 && op == ">=" && (b > 0 || signed(init[:eq-1])):
		// i >= 0 never fails for an unsigned i.
		return ceil(a-b+1, -step), true
	case op == "!=" && step > 0 && b >= a && (b-a)%step == 0:
		return (b - a) / step, true
	case op == "!=" && step < 0 && a >= b && (a-b)%(-step) == 0:
		return (a - b) / -step, true
	}
	return 0, false
}

// maxGeometric bounds the iterations simulate runs before giving up.
const maxGeometric = 4096

// simulate counts the iterations of a loop whose induction variable starts
// at a, is updated by `i geo= k` and runs while `i op b`. It reports false
// if the loop does not end within maxGeometric iterations or, for an
// unsigned variable, goes negative or overflows.
func simulate(a, b int64, op, geo string, k int64, unsigned bool) (int64, bool) {
	cond := func(i int64) bool {
		switch op {
		case "<":
			return i < b
		case "<=":
			return i <= b
		case ">":
			return i > b
		case ">=":
			return i >= b
		}
		return i != b
	}
	i := a
	for n := int64(0); n <= maxGeometric; n++ {
		if unsigned && i < 0 || i > 1<<40 || i < -1<<40 {
			return 0, false
		}
		if !cond(i) {
			return n, true
		}
		switch geo {
		case "*=":
			i *= k
		case "/=":
			i /= k
		case "<<=":
			i <<= k
		case ">>=":
			i >>= k
		}
	}
	return 0, false
}

// signed reports whether the declaration type spelled by toks is a signed
// integer type.
func signed(toks []msl.Token) bool {
	s := false
	for _, t := range toks {
		switch t.Text {
		case "int", "short", "long", "char", "int8_t", "int16_t", "int32_t", "int64_t", "signed":
			s = true
		case "unsigned":
			return false
		}
	}
	return s
}

var mirror = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}

func isCompare(s string) bool { _, ok := mirror[s]; return ok }

// eval evaluates the constant expression spelled by toks.
func eval(env *msl.Env, toks []msl.Token) (int64, bool) {
	if len(toks) == 0 {
		return 0, false
	}
	var parts []string
	for _, t := range toks {
		parts = append(parts, t.Text)
	}
	return env.Eval(strings.Join(parts, " "))
}

// tokens returns the non-comment tokens of f inside sp.
func tokens(f *msl.File, sp msl.Span) []msl.Token {
	i := sort.Search(len(f.Tokens), func(i int) bool { return f.Tokens[i].Pos >= sp.Pos })
	var out []msl.Token
	for ; i < len(f.Tokens) && f.Tokens[i].End <= sp.End; i++ {
		if f.Tokens[i].Kind != msl.Comment {
			out = append(out, f.Tokens[i])
		}
	}
	return out
}

// assignedIn reports whether the body of s may assign v: v next to ++ or
// --, or followed by an assignment operator, or its address taken.
func assignedIn(f *msl.File, s *msl.For, v string) bool {
	if s.Body == nil {
		return false
	}
	pos, end := s.Body.Span()
	toks := tokens(f, msl.Span{Pos: pos, End: end})
	for i, t := range toks {
		if t.Text != v || t.Kind != msl.Ident {
			continue
		}
		if i > 0 && (toks[i-1].Text == "++" || toks[i-1].Text == "--" || toks[i-1].Text == "&") {
			return true
		}
		if i+1 < len(toks) {
			switch toks[i+1].Text {
			case "++", "--", "=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=":
				return true
			}
		}
	}
	return false
}
