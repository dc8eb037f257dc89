package spec

import (
	"crypto/sha256"
	"fmt"
	"go/token"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A Param is a tunable parameter of the spec's tune: section: a name
// every expression and define value of the spec may use, the integers it
// may take, and the one it takes in the baseline.
type Param struct {
	Name string
	// Values are the values the parameter may take: a list in the order
	// written, a range in ascending order. Never empty, no duplicates.
	Values  []int64
	Default int64 // one of Values
	Pos     token.Position
}

// A Setting is one parameter at one value.
type Setting struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// A Point is one value for each tunable parameter, in Params order: the
// spec's parameters fixed at a point of their grid.
type Point []Setting

// MaxTunePoints bounds a tune: section's grid (the product of the
// parameters' value counts, before restrictions): every point is
// enumerated, and a grid larger than this is a mistake.
const MaxTunePoints = 100000

// tuneSpec is a spec's tune: section.
type tuneSpec struct {
	pos          token.Position // of the tune: key's value
	params       []Param
	restrictions []*Expr
}

// String writes p as space-separated NAME=value settings, "NSG=4 TILE=64";
// ParsePoint reads it back. The empty point is "".
func (p Point) String() string {
	var b strings.Builder
	for i, st := range p {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(st.Name)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(st.Value, 10))
	}
	return b.String()
}

// ParsePoint reads a point as Point.String writes it: NAME=value settings
// separated by blanks or commas, each name once. The settings keep the
// order written; Spec.Complete puts them in Params order.
func ParsePoint(s string) (Point, error) {
	var p Point
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\n' }) {
		name, val, ok := strings.Cut(f, "=")
		if !ok || !isIdentText(name) {
			return nil, fmt.Errorf("point %s: setting %s: want NAME=integer", clip(s), clip(f))
		}
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("point %s: setting %s: want NAME=integer", clip(s), clip(f))
		}
		if seen[name] {
			return nil, fmt.Errorf("point %s: %s set twice", clip(s), name)
		}
		seen[name] = true
		p = append(p, Setting{name, v})
	}
	return p, nil
}

// MarshalText writes p as String does, so that JSON holds a point as one
// string.
func (p Point) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a point as ParsePoint does.
func (p *Point) UnmarshalText(b []byte) error {
	q, err := ParsePoint(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// Value returns the value p gives the parameter name.
func (p Point) Value(name string) (int64, bool) {
	for _, st := range p {
		if st.Name == name {
			return st.Value, true
		}
	}
	return 0, false
}

// Equal reports whether p and q are the same settings in the same order.
func (p Point) Equal(q Point) bool { return slices.Equal(p, q) }

// isIdentText reports whether s is a C identifier.
func isIdentText(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Params returns the spec's tunable parameters in the order declared, or
// nil when it has no tune: section.
func (s *Spec) Params() []Param {
	if s.tune == nil {
		return nil
	}
	out := make([]Param, len(s.tune.params))
	for i, p := range s.tune.params {
		p.Values = slices.Clone(p.Values)
		out[i] = p
	}
	return out
}

// param returns the parameter called name, or nil.
func (s *Spec) param(name string) *Param {
	if s.tune == nil {
		return nil
	}
	for i := range s.tune.params {
		if s.tune.params[i].Name == name {
			return &s.tune.params[i]
		}
	}
	return nil
}

// DefaultPoint returns every parameter at its default: the baseline's
// point. It is empty for a spec without parameters.
func (s *Spec) DefaultPoint() Point {
	if s.tune == nil {
		return Point{}
	}
	p := make(Point, len(s.tune.params))
	for i, prm := range s.tune.params {
		p[i] = Setting{prm.Name, prm.Default}
	}
	return p
}

// Point returns the point s is at: the default point for a parsed spec,
// p for the spec At(p) returns.
func (s *Spec) Point() Point {
	if s.point == nil {
		return s.DefaultPoint()
	}
	return slices.Clone(s.point)
}

// Complete returns p in Params order with every parameter p leaves out at
// its default, or an error for a name that is no parameter or a value
// the parameter cannot take. It does not check the restrictions.
func (s *Spec) Complete(p Point) (Point, error) {
	out := s.DefaultPoint()
	seen := map[string]bool{}
	for _, st := range p {
		prm := s.param(st.Name)
		if prm == nil {
			return nil, fmt.Errorf("point: no tune parameter %q%s", st.Name, s.paramList())
		}
		if seen[st.Name] {
			return nil, fmt.Errorf("point: %s set twice", st.Name)
		}
		seen[st.Name] = true
		if !slices.Contains(prm.Values, st.Value) {
			return nil, &Error{Pos: prm.Pos, Msg: fmt.Sprintf("point: %s = %d is not one of its values %s", st.Name, st.Value, valueList(prm.Values))}
		}
		for i := range out {
			if out[i].Name == st.Name {
				out[i].Value = st.Value
			}
		}
	}
	return out, nil
}

// paramList names the spec's parameters for an error message.
func (s *Spec) paramList() string {
	if s.tune == nil {
		return " (the spec has no tune: section)"
	}
	var names []string
	for _, p := range s.tune.params {
		names = append(names, p.Name)
	}
	return fmt.Sprintf(" (have %s)", strings.Join(names, ", "))
}

// valueList writes values for a message, eliding the middle of a long list.
func valueList(vs []int64) string {
	if len(vs) > 12 {
		return fmt.Sprintf("%v ... %v (%d values)", vs[:5], vs[len(vs)-3:], len(vs))
	}
	return fmt.Sprint(vs)
}

// Allowed reports whether the restrictions allow p, completed by
// Complete. An error is a point Complete refuses or a restriction that
// cannot be evaluated at p.
func (s *Spec) Allowed(p Point) (bool, error) {
	p, err := s.Complete(p)
	if err != nil {
		return false, err
	}
	_, ok, err := s.restrict(p)
	return ok, err
}

// restrict evaluates the restrictions at p (complete); when one is false
// it returns it.
func (s *Spec) restrict(p Point) (*Expr, bool, error) {
	if s.tune == nil || len(s.tune.restrictions) == 0 {
		return nil, true, nil
	}
	vars := make(map[string]any, len(p))
	for _, st := range p {
		vars[st.Name] = int(st.Value)
	}
	for _, r := range s.tune.restrictions {
		v, err := r.eval(vars)
		if err != nil {
			var e *Error
			if ok := asError(err, &e); ok {
				return r, false, &Error{Pos: e.Pos, Msg: fmt.Sprintf("restriction at %s: %s", p, e.Msg)}
			}
			return r, false, err
		}
		b, ok := v.(bool)
		if !ok {
			return r, false, &Error{Pos: r.Pos, Msg: fmt.Sprintf("restriction %s at %s: want true or false, got %v", r.Quoted(), p, v)}
		}
		if !b {
			return r, false, nil
		}
	}
	return nil, true, nil
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	if ok {
		*e = x
	}
	return ok
}

// Points returns every point of the grid the restrictions allow: the
// default point first, then the others in grid order (the first
// parameter slowest, each parameter's values in Params order). A spec
// without parameters has one point, the empty one.
func (s *Spec) Points() ([]Point, error) {
	def := s.DefaultPoint()
	out := []Point{def}
	if s.tune == nil || len(s.tune.params) == 0 {
		return out, nil
	}
	ps := s.tune.params
	idx := make([]int, len(ps))
	for {
		p := make(Point, len(ps))
		for i, prm := range ps {
			p[i] = Setting{prm.Name, prm.Values[idx[i]]}
		}
		if !p.Equal(def) {
			_, ok, err := s.restrict(p)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, p)
			}
		}
		i := len(ps) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(ps[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}

// At returns the spec with its parameters fixed at p (completed by
// Complete): every expression, define value and geometry of the result
// sees p's values, its Point is p and its Digest covers p (the default
// point keeps the file's digest). s is unchanged. At refuses a point the
// restrictions do not allow, and one at which the domains' largest case
// is past a limit, as Parse refuses such a default.
func (s *Spec) At(p Point) (*Spec, error) {
	p, err := s.Complete(p)
	if err != nil {
		return nil, err
	}
	r, ok, err := s.restrict(p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &Error{Pos: r.Pos, Msg: fmt.Sprintf("point %s: restriction %s does not hold", p, r.Quoted())}
	}
	t := *s
	t.point = p
	t.Digest = s.fileDigest
	if !p.Equal(s.DefaultPoint()) {
		t.Digest = pointDigest(s.fileDigest, p)
	}
	if len(p) > 0 {
		pp := &parser{file: s.Path}
		pp.checkDomainLimits(&t)
		if err := pp.errs.Err(); err != nil {
			return nil, fmt.Errorf("point %s: %w", p, err)
		}
	}
	return &t, nil
}

// FileDigest returns the sha256 of the spec file's bytes, whatever point
// the spec is at: the key of what is the same for every point (held-out
// draws that baseline and points must share, say). Digest covers the
// point as well.
func (s *Spec) FileDigest() [32]byte { return s.fileDigest }

// pointDigest is the digest of a spec file's bytes (digest) fixed at a
// point other than its default.
func pointDigest(digest [32]byte, p Point) [32]byte {
	h := sha256.New()
	h.Write(digest[:])
	h.Write([]byte("\x00tune\x00"))
	h.Write([]byte(p.String()))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// DefineParams maps each parameter that some define's value names
// exactly (defines: {NSG: NSG}) to that define's name: the macro whose
// #define in the source carries the parameter, so that a retained change
// of the parameter can be a patch of that #define. The spec's own
// defines are looked at first, then the stages', then the sets', and the
// first define naming a parameter wins. A parameter no define names
// exactly (the host computes something from it, or it sets geometry only)
// is absent.
func (s *Spec) DefineParams() map[string]string {
	out := map[string]string{}
	if s.tune == nil {
		return out
	}
	groups := [][]define{s.defines}
	for _, st := range s.Stages {
		groups = append(groups, st.defines)
	}
	for _, set := range s.Sets {
		groups = append(groups, set.defines)
	}
	for _, g := range groups {
		for _, d := range g {
			v := strings.TrimSpace(d.value)
			if s.param(v) != nil {
				if _, ok := out[v]; !ok {
					out[v] = d.name
				}
			}
		}
	}
	return out
}

// A ParamUse is one place in a spec that reads a tune parameter: where a
// change of the parameter lands on the host side.
type ParamUse struct {
	What string // e.g. "threads of stage \"k\"", "define TPG", "count of buffer \"tg\""
	Pos  token.Position
}

// ParamUses returns every place of the spec that reads the parameter
// name, in the order the spec's sections are listed in the package
// documentation (defines, then expressions); restrictions are not uses.
// A sweep names them when a retained parameter change is not a #define.
func (s *Spec) ParamUses(name string) []ParamUse {
	var out []ParamUse
	probe := map[string]int64{name: 0}
	defs := func(ds []define, where string) {
		for _, d := range ds {
			if substParams(d.value, probe) != d.value {
				out = append(out, ParamUse{fmt.Sprintf("define %s%s", d.name, where), d.pos})
			}
		}
	}
	ex := func(e *Expr, what string) {
		if e != nil && slices.Contains(e.idents, name) {
			out = append(out, ParamUse{what, e.Pos})
		}
	}
	gen := func(g genSpec, what string) {
		for _, k := range sortedKeys(g) {
			ex(g[k].e, fmt.Sprintf("%s %s", what, k))
		}
	}
	defs(s.defines, "")
	for _, st := range s.Stages {
		defs(st.defines, fmt.Sprintf(" of stage %q", st.Entry))
	}
	for _, set := range s.Sets {
		defs(set.defines, fmt.Sprintf(" of set %q", set.Name))
	}
	ex(s.dispatches, "dispatches")
	for _, v := range s.vars {
		ex(v.e, fmt.Sprintf("var %s", v.name))
	}
	for _, v := range s.lets {
		ex(v.e, fmt.Sprintf("let %s", v.name))
	}
	for _, c := range s.constants {
		ex(c.value, fmt.Sprintf("constant %s", c.name))
	}
	for _, tn := range sortedKeys(s.Structs) {
		for _, f := range s.Structs[tn].Fields {
			for _, e := range f.value.exprs() {
				ex(e, fmt.Sprintf("field %s of struct %s", f.Name, tn))
			}
		}
	}
	for _, b := range s.Buffers {
		what := fmt.Sprintf(" of buffer %q", b.Name)
		ex(b.count, "count"+what)
		for _, e := range b.shape {
			ex(e, "shape"+what)
		}
		ex(b.slack, "slack"+what)
		for _, k := range sortedKeys(b.values) {
			for _, e := range b.values[k].exprs() {
				ex(e, fmt.Sprintf("value %s%s", k, what))
			}
		}
		gen(b.gen, "gen"+what)
	}
	for _, st := range s.Stages {
		what := fmt.Sprintf(" of stage %q", st.Entry)
		for _, e := range st.threadgroups {
			ex(e, "threadgroups"+what)
		}
		for _, e := range st.threads {
			ex(e, "threads"+what)
		}
		for _, c := range st.constants {
			ex(c.value, fmt.Sprintf("constant %s%s", c.name, what))
		}
	}
	for _, set := range s.Sets {
		what := fmt.Sprintf(" of set %q", set.Name)
		for _, v := range set.vars {
			ex(v.e, fmt.Sprintf("var %s%s", v.name, what))
		}
		for _, c := range set.constants {
			ex(c.value, fmt.Sprintf("constant %s%s", c.name, what))
		}
		for _, b := range sortedKeys(set.gen) {
			gen(set.gen[b], fmt.Sprintf("gen of buffer %q%s", b, what))
		}
	}
	return out
}

// pointVars returns the values of the point s is at, by name.
func (s *Spec) pointVars() map[string]int64 {
	if s.tune == nil {
		return nil
	}
	out := map[string]int64{}
	for _, st := range s.Point() {
		out[st.Name] = st.Value
	}
	return out
}

// substParams replaces each identifier of a define's value that names a
// parameter with the parameter's value; text inside string and character
// literals is kept.
func substParams(v string, vals map[string]int64) string {
	if len(vals) == 0 {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(v) && v[j] != c {
				if v[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(v))
			b.WriteString(v[i:j])
			i = j
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			j := i
			for j < len(v) && (v[j] == '_' || 'a' <= v[j] && v[j] <= 'z' || 'A' <= v[j] && v[j] <= 'Z' || '0' <= v[j] && v[j] <= '9') {
				j++
			}
			word := v[i:j]
			if x, ok := vals[word]; ok { // a word starting with a digit names nothing
				b.WriteString(strconv.FormatInt(x, 10))
			} else {
				b.WriteString(word)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// tune parses the tune: section; s's vars, lets, sets and domains are
// parsed already, so that a parameter that takes one of their names is
// refused.
func (p *parser) tune(s *Spec, n *yaml.Node) {
	f := p.fields(n, "tune", "params", "restrictions")
	t := &tuneSpec{pos: p.pos(n)}
	errs := len(p.errs)
	pn := f["params"]
	if pn == nil {
		p.errorf(n, "tune: missing params")
		return
	}
	if pn.Kind == yaml.MappingNode && len(pn.Content) == 0 {
		p.errorf(pn, "tune: params: want at least one parameter")
		return
	}
	taken := s.takenNames()
	for _, kv := range p.pairs(pn, "tune: params") {
		if why := taken[kv[0].Value]; why != "" {
			p.errorf(kv[0], "tune parameter %q: the name of %s", kv[0].Value, why)
			continue
		}
		prm, ok := p.param(kv[0], kv[1])
		if !ok {
			continue
		}
		t.params = append(t.params, prm)
	}
	if len(p.errs) > errs {
		return
	}
	grid := uint64(1)
	var counts []string
	for _, prm := range t.params {
		hi, lo := bits.Mul64(grid, uint64(len(prm.Values)))
		if hi != 0 {
			lo = math.MaxUint64
		}
		grid = lo
		counts = append(counts, fmt.Sprintf("%s %d", prm.Name, len(prm.Values)))
	}
	if grid > MaxTunePoints {
		p.errorf(pn, "tune: params: the grid has %d points (%s), over the limit of %d; narrow the ranges or lengthen the steps", grid, strings.Join(counts, " x "), MaxTunePoints)
		return
	}
	if rn := f["restrictions"]; rn != nil {
		if rn.Kind != yaml.SequenceNode {
			p.errorf(rn, "tune: restrictions: want a list of conditions")
		} else {
			for _, c := range rn.Content {
				e := p.expr(c, "tune: restriction")
				if e == nil {
					continue
				}
				bad := false
				for _, id := range e.idents {
					if !slices.ContainsFunc(t.params, func(q Param) bool { return q.Name == id }) {
						p.errorf(c, "tune: restriction %s: unknown name %q: a restriction reads tune parameters only%s", e.Quoted(), id, paramNames(t.params))
						bad = true
					}
				}
				if !bad {
					t.restrictions = append(t.restrictions, e)
				}
			}
		}
	}
	if len(p.errs) > errs {
		return
	}
	s.tune = t
	r, ok, err := s.restrict(s.DefaultPoint())
	switch {
	case err != nil:
		if e, isErr := err.(*Error); isErr {
			p.errs = append(p.errs, &Error{Pos: e.Pos, Msg: "tune: " + e.Msg})
		} else {
			p.errorf(n, "tune: %v", err)
		}
	case !ok:
		p.errs = append(p.errs, &Error{Pos: r.Pos, Msg: fmt.Sprintf("tune: restriction %s does not hold at the default point %s", r.Quoted(), s.DefaultPoint())})
	}
}

func paramNames(ps []Param) string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return fmt.Sprintf(" (have %s)", strings.Join(names, ", "))
}

// checkParamsUsed refuses a parameter that nothing reads (ParamUses):
// every point would run one program.
func (p *parser) checkParamsUsed(s *Spec) {
	if s.tune == nil {
		return
	}
	for _, prm := range s.tune.params {
		if len(s.ParamUses(prm.Name)) == 0 {
			p.errs = append(p.errs, &Error{Pos: prm.Pos, Msg: fmt.Sprintf("tune parameter %q: nothing reads it (no define value, geometry or other expression names it), so every point would run the same program", prm.Name)})
		}
	}
}

// takenNames returns the names a parameter may not take, each with what
// it already names.
func (s *Spec) takenNames() map[string]string {
	out := map[string]string{}
	for _, n := range []string{"i", "j", "r"} {
		out[n] = "an index variable of struct values and generators"
	}
	for n := range funcNames {
		out[n] = "a function"
	}
	for _, v := range s.vars {
		out[v.name] = "a var"
	}
	for _, v := range s.lets {
		out[v.name] = "a let"
	}
	for _, set := range s.Sets {
		for _, v := range set.vars {
			out[v.name] = fmt.Sprintf("a var of set %q", set.Name)
		}
		for _, c := range set.Cases {
			for _, v := range c.Vars {
				if out[v.Name] == "" {
					out[v.Name] = fmt.Sprintf("a variable of case %s/%s", set.Name, c.Name)
				}
			}
		}
	}
	for _, d := range s.Domains {
		out[d.Var] = "a domain variable"
	}
	return out
}

// MaxParamValues bounds one parameter's values.
const MaxParamValues = MaxTunePoints

// param parses one parameter: a list of values, or a mapping with values
// or a range (min, max, and step or pow2) and an optional default.
func (p *parser) param(k, v *yaml.Node) (Param, bool) {
	prm := Param{Name: k.Value, Pos: p.pos(k)}
	what := fmt.Sprintf("tune parameter %q", prm.Name)
	if !isIdentText(prm.Name) {
		p.errorf(k, "%s: want an identifier", what)
		return prm, false
	}
	if e, err := compileExpr(prm.Name, prm.Pos); err != nil || len(e.idents) != 1 || e.idents[0] != prm.Name {
		p.errorf(k, "%s: a word of the expression language, not usable as a name", what)
		return prm, false
	}
	list := func(n *yaml.Node) bool {
		if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
			p.errorf(n, "%s: values: want a non-empty list of integers", what)
			return false
		}
		if len(n.Content) > MaxParamValues {
			p.errorf(n, "%s: %d values, over the limit of %d", what, len(n.Content), MaxParamValues)
			return false
		}
		ok := true
		for _, c := range n.Content {
			x, good := p.integer(c, what+" value")
			if !good {
				ok = false
				continue
			}
			if slices.Contains(prm.Values, x) {
				p.errorf(c, "%s: value %d listed twice", what, x)
				ok = false
				continue
			}
			prm.Values = append(prm.Values, x)
		}
		return ok
	}
	var defNode *yaml.Node
	switch v.Kind {
	case yaml.SequenceNode:
		if !list(v) {
			return prm, false
		}
	case yaml.MappingNode:
		f := p.fields(v, what, "values", "min", "max", "step", "pow2", "default")
		defNode = f["default"]
		if vn := f["values"]; vn != nil {
			for _, key := range []string{"min", "max", "step", "pow2"} {
				if f[key] != nil {
					p.errorf(f[key], "%s: give values or a range (min, max, step or pow2), not both", what)
					return prm, false
				}
			}
			if !list(vn) {
				return prm, false
			}
			break
		}
		if f["min"] == nil || f["max"] == nil {
			p.errorf(v, "%s: want values, or a range with min and max", what)
			return prm, false
		}
		lo, ok1 := p.integer(f["min"], what+" min")
		hi, ok2 := p.integer(f["max"], what+" max")
		if !ok1 || !ok2 {
			return prm, false
		}
		step, pow2 := int64(1), false
		if sn := f["step"]; sn != nil {
			x, ok := p.integer(sn, what+" step")
			if !ok {
				return prm, false
			}
			if x < 1 {
				p.errorf(sn, "%s: step %d: want at least 1", what, x)
				return prm, false
			}
			step = x
		}
		if bn := f["pow2"]; bn != nil {
			b, err := strconv.ParseBool(p.str(bn, what+" pow2"))
			if err != nil {
				p.errorf(bn, "%s: pow2: want true or false", what)
				return prm, false
			}
			if b && f["step"] != nil {
				p.errorf(bn, "%s: give step or pow2, not both", what)
				return prm, false
			}
			pow2 = b
		}
		if lo > hi {
			p.errorf(v, "%s: empty range: min %d is above max %d", what, lo, hi)
			return prm, false
		}
		if pow2 {
			for x := int64(1); x <= hi && x > 0; x *= 2 {
				if x >= lo {
					prm.Values = append(prm.Values, x)
				}
			}
			if len(prm.Values) == 0 {
				p.errorf(v, "%s: empty range: no power of two in [%d, %d]", what, lo, hi)
				return prm, false
			}
			break
		}
		span := uint64(hi - lo)
		if span/uint64(step) >= MaxParamValues {
			p.errorf(v, "%s: range [%d, %d] step %d has %d values, over the limit of %d", what, lo, hi, step, span/uint64(step)+1, MaxParamValues)
			return prm, false
		}
		for x := lo; ; x += step {
			prm.Values = append(prm.Values, x)
			if hi-x < step {
				break
			}
		}
	default:
		p.errorf(v, "%s: want a list of values, or a mapping with values or min and max", what)
		return prm, false
	}
	prm.Default = prm.Values[0]
	if defNode != nil {
		x, ok := p.integer(defNode, what+" default")
		if !ok {
			return prm, false
		}
		if !slices.Contains(prm.Values, x) {
			p.errorf(defNode, "%s: default %d is not one of its values %s", what, x, valueList(prm.Values))
			return prm, false
		}
		prm.Default = x
	}
	return prm, true
}
