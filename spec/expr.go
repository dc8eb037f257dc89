package spec

import (
	"fmt"
	"go/token"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
	"github.com/expr-lang/expr/vm/runtime"
)

// An Expr is a compiled expression with the YAML position it came from, so
// that evaluation errors point at the spec.
type Expr struct {
	Src    string
	Pos    token.Position
	prog   *vm.Program
	idents []string // variables it reads
}

// exprOptions are the helpers every expression may call.
var exprOptions = []expr.Option{
	expr.Function("ceil_div", func(p ...any) (any, error) {
		a, b, err := intArgs("ceil_div", p)
		if err != nil {
			return nil, err
		}
		s, err := addInt(a, b-1)
		if err != nil {
			return nil, fmt.Errorf("ceil_div: %w", err)
		}
		return floorDiv(s, b), nil
	}, new(func(int, int) int)),
	expr.Function("div", func(p ...any) (any, error) {
		a, b, err := intArgs("div", p)
		if err != nil {
			return nil, err
		}
		return floorDiv(a, b), nil
	}, new(func(int, int) int)),
	expr.Function("align", func(p ...any) (any, error) {
		a, b, err := intArgs("align", p)
		if err != nil {
			return nil, err
		}
		s, err := addInt(a, b-1)
		if err == nil {
			s, err = mulInt(floorDiv(s, b), b)
		}
		if err != nil {
			return nil, fmt.Errorf("align: %w", err)
		}
		return s, nil
	}, new(func(int, int) int)),
	// Integer +, - and * are checked: a count that wraps would be a
	// nonsense size far from where it was written (checkedArith).
	expr.Function(addFn, func(p ...any) (any, error) { return checked("+", p) }),
	expr.Function(subFn, func(p ...any) (any, error) { return checked("-", p) }),
	expr.Function(mulFn, func(p ...any) (any, error) { return checked("*", p) }),
	expr.Function(negFn, func(p ...any) (any, error) { return checked("neg", p) }),
	expr.Patch(checkedArith{}),
	expr.Function("sqrt", func(p ...any) (any, error) {
		if len(p) != 1 {
			return nil, fmt.Errorf("sqrt wants 1 argument, got %d", len(p))
		}
		f, err := toFloat(p[0])
		if err != nil {
			return nil, fmt.Errorf("sqrt: %w", err)
		}
		return math.Sqrt(f), nil
	}, new(func(float64) float64)),
}

// funcNames are the helpers' names, which are not variables.
var funcNames = map[string]bool{"ceil_div": true, "div": true, "align": true, "sqrt": true, addFn: true, subFn: true, mulFn: true, negFn: true}

// The functions integer arithmetic is rewritten to call.
const (
	addFn = "$add"
	subFn = "$sub"
	mulFn = "$mul"
	negFn = "$neg"
)

// checkedArith rewrites a + b, a - b, a * b and -a into calls of the
// checked functions, which fail on integer overflow instead of wrapping.
type checkedArith struct{}

func (checkedArith) Visit(n *ast.Node) {
	switch x := (*n).(type) {
	case *ast.BinaryNode:
		fn := map[string]string{"+": addFn, "-": subFn, "*": mulFn}[x.Operator]
		if fn != "" {
			ast.Patch(n, &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: []ast.Node{x.Left, x.Right}})
		}
	case *ast.UnaryNode:
		if x.Operator == "-" {
			ast.Patch(n, &ast.CallNode{Callee: &ast.IdentifierNode{Value: negFn}, Arguments: []ast.Node{x.Node}})
		}
	}
}

// isInt reports whether v is one of the integer kinds expressions hold.
func isInt(v any) bool {
	switch v.(type) {
	case int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8:
		return true
	}
	return false
}

// checked is op on integers, or an error where it overflows; on anything
// else it is the expression language's own arithmetic.
func checked(op string, p []any) (any, error) {
	if op == "neg" {
		if len(p) != 1 {
			return nil, fmt.Errorf("negation wants 1 operand, got %d", len(p))
		}
		if isInt(p[0]) {
			a, err := toInt(p[0])
			if err != nil {
				return nil, err
			}
			return subInt(0, a)
		}
		return runtime.Negate(p[0]), nil
	}
	if len(p) != 2 {
		return nil, fmt.Errorf("%s wants 2 operands, got %d", op, len(p))
	}
	if isInt(p[0]) && isInt(p[1]) {
		a, err := toInt(p[0])
		if err != nil {
			return nil, err
		}
		b, err := toInt(p[1])
		if err != nil {
			return nil, err
		}
		switch op {
		case "+":
			return addInt(a, b)
		case "-":
			return subInt(a, b)
		}
		return mulInt(a, b)
	}
	switch op {
	case "+":
		return runtime.Add(p[0], p[1]), nil
	case "-":
		return runtime.Subtract(p[0], p[1]), nil
	}
	return runtime.Multiply(p[0], p[1]), nil
}

// overflow is the error of integer arithmetic past int64.
func overflow(a int, op string, b int) error {
	return fmt.Errorf("integer overflow: %d %s %d does not fit in 64 bits", a, op, b)
}

func addInt(a, b int) (int, error) {
	s := a + b
	if (s > a) != (b > 0) {
		return 0, overflow(a, "+", b)
	}
	return s, nil
}

func subInt(a, b int) (int, error) {
	s := a - b
	if (s < a) != (b > 0) {
		return 0, overflow(a, "-", b)
	}
	return s, nil
}

func mulInt(a, b int) (int, error) {
	if a == 0 || b == 0 {
		return 0, nil
	}
	s := a * b
	if s/b != a || a == -1 && b == math.MinInt || b == -1 && a == math.MinInt {
		return 0, overflow(a, "*", b)
	}
	return s, nil
}

func intArgs(name string, p []any) (int, int, error) {
	if len(p) != 2 {
		return 0, 0, fmt.Errorf("%s wants 2 arguments, got %d", name, len(p))
	}
	a, err := toInt(p[0])
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	b, err := toInt(p[1])
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	if b == 0 {
		return 0, 0, fmt.Errorf("%s: division by zero", name)
	}
	return a, b, nil
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Limits on an expression's text: nothing a spec needs comes near them,
// and an expression past them is refused before it is compiled.
const (
	MaxExprLen   = 1024 // bytes
	MaxExprDepth = 32   // nested brackets
)

// compileExpr compiles src; pos is where it sits in the spec.
func compileExpr(src string, pos token.Position) (*Expr, error) {
	if len(src) > MaxExprLen {
		return nil, fmt.Errorf("expression %s is %d bytes, over the %d-byte limit", clip(src), len(src), MaxExprLen)
	}
	if d := bracketDepth(src); d > MaxExprDepth {
		return nil, fmt.Errorf("expression %s nests brackets %d deep, over the limit of %d", clip(src), d, MaxExprDepth)
	}
	tree, err := expr.Compile(src, exprOptions...)
	if err != nil {
		return nil, fmt.Errorf("bad expression %s: %v", clip(src), clip(firstLine(err.Error())))
	}
	e := &Expr{Src: src, Pos: pos, prog: tree}
	v := &identVisitor{seen: map[string]bool{}}
	node := tree.Node()
	ast.Walk(&node, v)
	e.idents = v.names
	return e, nil
}

// bracketDepth returns the deepest nesting of (), [] and {} in s.
func bracketDepth(s string) int {
	d, most := 0, 0
	for i := range len(s) {
		switch s[i] {
		case '(', '[', '{':
			d++
			most = max(most, d)
		case ')', ']', '}':
			d--
		}
	}
	return most
}

// clipLen is how much of a spec text an error message quotes.
const clipLen = 60

// clip quotes s for an error message, cut to its first clipLen bytes (on a
// rune boundary) with "..." when it is longer, so that a huge value is
// never echoed back whole.
func clip(s string) string {
	if len(s) <= clipLen {
		return strconv.Quote(s)
	}
	n := clipLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(s[:n]) + fmt.Sprintf("... (%d bytes)", len(s))
}

// Quoted returns e's source quoted for messages, clipped when long.
func (e *Expr) Quoted() string { return clip(e.Src) }

type identVisitor struct {
	seen  map[string]bool
	names []string
}

func (v *identVisitor) Visit(n *ast.Node) {
	if id, ok := (*n).(*ast.IdentifierNode); ok && !v.seen[id.Value] && !funcNames[id.Value] {
		v.seen[id.Value] = true
		v.names = append(v.names, id.Value)
	}
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// eval evaluates e with vars.
func (e *Expr) eval(vars map[string]any) (any, error) {
	for _, id := range e.idents {
		if _, ok := vars[id]; !ok {
			return nil, &Error{Pos: e.Pos, Msg: fmt.Sprintf("expression %s: unknown variable %s", e.Quoted(), clip(id))}
		}
	}
	v, err := expr.Run(e.prog, vars)
	if err != nil {
		return nil, &Error{Pos: e.Pos, Msg: fmt.Sprintf("expression %s: %v", e.Quoted(), firstLine(err.Error()))}
	}
	return v, nil
}

// Int evaluates e with vars and requires an integral result.
func (e *Expr) Int(vars map[string]any) (int, error) {
	v, err := e.eval(vars)
	if err != nil {
		return 0, err
	}
	n, err := toInt(v)
	if err != nil {
		return 0, &Error{Pos: e.Pos, Msg: fmt.Sprintf("expression %s: %v", e.Quoted(), err)}
	}
	return n, nil
}

// Float evaluates e with vars as a number (booleans are 0 or 1).
func (e *Expr) Float(vars map[string]any) (float64, error) {
	v, err := e.eval(vars)
	if err != nil {
		return 0, err
	}
	f, err := toFloat(v)
	if err != nil {
		return 0, &Error{Pos: e.Pos, Msg: fmt.Sprintf("expression %s: %v", e.Quoted(), err)}
	}
	return f, nil
}

// Bool evaluates e with vars as a condition.
func (e *Expr) Bool(vars map[string]any) (bool, error) {
	v, err := e.eval(vars)
	if err != nil {
		return false, err
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	}
	f, err := toFloat(v)
	if err != nil {
		return false, &Error{Pos: e.Pos, Msg: fmt.Sprintf("expression %s: %v", e.Quoted(), err)}
	}
	return f != 0, nil
}

func toInt(v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case int32:
		return int(n), nil
	case uint:
		return int(n), nil
	case uint64:
		return int(n), nil
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) || math.Abs(n) > 1<<53 {
			return 0, fmt.Errorf("value %v is not an integer", n)
		}
		return int(n), nil
	case float32:
		return toInt(float64(n))
	case bool:
		if n {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("value %v (%T) is not a number", v, v)
}

func toFloat(v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case float32:
		return float64(n), nil
	case bool:
		if n {
			return 1, nil
		}
		return 0, nil
	}
	i, err := toInt(v)
	return float64(i), err
}

// literal parses a case variable's YAML scalar: an integer, a real or a
// boolean.
func literal(s string) (any, bool) {
	if i, err := strconv.ParseInt(s, 0, 64); err == nil {
		return int(i), true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, true
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return b, true
	}
	return nil, false
}
