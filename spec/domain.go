package spec

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"go/token"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A Domain is the set of values a case variable may take, as the spec's
// domains: key declares it: integers in [Min, Max] that are multiples of
// MultipleOf (and one of Values when listed), bounded by earlier domain
// variables through Le and Ge. Cases nobody listed (held-out cases) are
// drawn from the domains; see Spec.Draw.
type Domain struct {
	Var        string
	Pos        token.Position
	Min, Max   int64
	MultipleOf int64   // 1 when not given
	Values     []int64 // nil: every integer of [Min, Max]
	Le, Ge     string  // another domain variable bounding this one, or ""
	// DrawMax bounds the values drawn for held-out cases (draw_max:, at
	// most Max; Max when not given): listed cases may go to Max, say a
	// production shape, while drawn ones stay quick to run.
	DrawMax int64
}

// MaxDomainSpan bounds a domain's range: values are drawn from it, and a
// range wider than this is a mistake.
const MaxDomainSpan = 1 << 40

func (p *parser) domains(s *Spec, n *yaml.Node) {
	for _, kv := range p.pairs(n, "domains") {
		name := kv[0].Value
		what := fmt.Sprintf("domain %q", name)
		d := &Domain{Var: name, Pos: p.pos(kv[0]), MultipleOf: 1, Min: math.MinInt64, Max: math.MaxInt64}
		f := p.fields(kv[1], what, "min", "max", "multiple_of", "values", "le", "ge", "draw_max")
		bad := false
		num := func(k string) (int64, bool) {
			if f[k] == nil {
				return 0, false
			}
			v, ok := p.integer(f[k], what+" "+k)
			bad = bad || !ok
			return v, ok
		}
		if v, ok := num("min"); ok {
			d.Min = v
		}
		if v, ok := num("max"); ok {
			d.Max = v
		}
		if v, ok := num("multiple_of"); ok {
			if v < 1 {
				p.errorf(f["multiple_of"], "%s: multiple_of must be at least 1", what)
			} else {
				d.MultipleOf = v
			}
		}
		if vn := f["values"]; vn != nil {
			if vn.Kind != yaml.SequenceNode || len(vn.Content) == 0 {
				p.errorf(vn, "%s: values: want a non-empty list of integers", what)
			} else {
				for _, c := range vn.Content {
					if v, ok := p.integer(c, what+" values"); ok {
						d.Values = append(d.Values, v)
					} else {
						bad = true
					}
				}
				if len(d.Values) == 0 {
					continue
				}
				slices.Sort(d.Values)
				d.Values = slices.Compact(d.Values)
				if f["min"] == nil {
					d.Min = d.Values[0]
				}
				if f["max"] == nil {
					d.Max = d.Values[len(d.Values)-1]
				}
			}
		} else if f["min"] == nil || f["max"] == nil {
			p.errorf(kv[1], "%s: want min and max, or values", what)
			continue
		}
		if bad {
			s.Domains = append(s.Domains, d) // reported; known to the relations after it
			continue
		}
		for _, k := range []string{"le", "ge"} {
			rn := f[k]
			if rn == nil {
				continue
			}
			other := p.str(rn, what+" "+k)
			if s.domain(other) == nil {
				p.errorf(rn, "%s: %s %s: not a domain declared before this one", what, k, clip(other))
				continue
			}
			if k == "le" {
				d.Le = other
			} else {
				d.Ge = other
			}
		}
		if d.Min > d.Max {
			p.errorf(kv[1], "%s: min %d is above max %d: no valid value", what, d.Min, d.Max)
			continue
		}
		d.DrawMax = d.Max
		if v, ok := num("draw_max"); ok {
			if v > d.Max || len(d.valid(d.Min, v, 1)) == 0 {
				p.errorf(f["draw_max"], "%s: draw_max %d: want a bound up to max %d with a valid value below it", what, v, d.Max)
				continue
			}
			d.DrawMax = v
		}
		if d.Values == nil && (d.Max-d.Min > MaxDomainSpan || d.Max-d.Min < 0) {
			p.errorf(kv[1], "%s: range [%d, %d] is wider than %d", what, d.Min, d.Max, int64(MaxDomainSpan))
			continue
		}
		if len(d.valid(d.Min, d.Max, 1)) == 0 {
			p.errorf(kv[1], "%s: no valid value (none of [%d, %d] is a multiple of %d%s)", what, d.Min, d.Max, d.MultipleOf, d.listed())
			continue
		}
		if s.domain(name) != nil {
			p.errorf(kv[0], "%s: declared twice", what)
			continue
		}
		s.Domains = append(s.Domains, d)
	}
}

func (d *Domain) listed() string {
	if d.Values == nil {
		return ""
	}
	return fmt.Sprintf(" in the values %v", d.Values)
}

func (s *Spec) domain(name string) *Domain {
	for _, d := range s.Domains {
		if d.Var == name {
			return d
		}
	}
	return nil
}

// HasDomains reports whether any variable declares a domain.
func (s *Spec) HasDomains() bool { return len(s.Domains) > 0 }

// valid returns up to n valid values of d in [lo, hi], ascending (n < 1:
// no limit; only for lists).
func (d *Domain) valid(lo, hi int64, n int) []int64 {
	lo, hi = max(lo, d.Min), min(hi, d.Max)
	var out []int64
	if d.Values != nil {
		for _, v := range d.Values {
			if v >= lo && v <= hi && v%d.MultipleOf == 0 && (n < 1 || len(out) < n) {
				out = append(out, v)
			}
		}
		return out
	}
	if lo > hi {
		return nil
	}
	first := ceilMultiple(lo, d.MultipleOf)
	for v := first; v <= hi && v >= first && len(out) < max(n, 1); v += d.MultipleOf {
		out = append(out, v)
	}
	return out
}

// bounds returns the range of d given the values already bound (Le, Ge).
func (d *Domain) bounds(vals map[string]int64) (int64, int64) {
	lo, hi := d.Min, d.Max
	if v, ok := vals[d.Le]; ok && d.Le != "" {
		hi = min(hi, v)
	}
	if v, ok := vals[d.Ge]; ok && d.Ge != "" {
		lo = max(lo, v)
	}
	return lo, hi
}

func ceilMultiple(v, m int64) int64 {
	r := ((v % m) + m) % m
	if r == 0 {
		return v
	}
	return v + m - r
}

func floorMultiple(v, m int64) int64 {
	r := ((v % m) + m) % m
	return v - r
}

// contains reports whether v is a valid value of d given vals.
func (d *Domain) contains(v int64, vals map[string]int64) bool {
	lo, hi := d.bounds(vals)
	if v < lo || v > hi || v%d.MultipleOf != 0 {
		return false
	}
	return d.Values == nil || slices.Contains(d.Values, v)
}

// why says why v is not a valid value of d given vals.
func (d *Domain) why(v int64, vals map[string]int64) string {
	lo, hi := d.bounds(vals)
	switch {
	case v < lo || v > hi:
		return fmt.Sprintf("%d is outside [%d, %d]", v, lo, hi)
	case v%d.MultipleOf != 0:
		return fmt.Sprintf("%d is not a multiple of %d", v, d.MultipleOf)
	}
	return fmt.Sprintf("%d is not one of %v", v, d.Values)
}

// checkDomains refuses listed cases whose variables the domains
// contradict, at the value written in the case (or at the domain for a
// value a set or the spec's vars give).
func (p *parser) checkDomains(s *Spec) {
	for _, d := range s.Domains {
		for _, l := range s.lets {
			if l.name == d.Var {
				p.errs = append(p.errs, &Error{Pos: d.Pos, Msg: fmt.Sprintf("domain %q: %s is a let, which a case cannot set", d.Var, d.Var)})
			}
		}
	}
	for _, set := range s.Sets {
		for _, c := range set.Cases {
			vars, err := s.bind(set, c)
			if err != nil {
				continue // Instantiate reports it
			}
			vals := map[string]int64{}
			for _, d := range s.Domains {
				x, ok := vars[d.Var]
				if !ok {
					p.errs = append(p.errs, &Error{Pos: d.Pos, Msg: fmt.Sprintf("domain %q: case %s/%s does not bind %s", d.Var, set.Name, c.Name, d.Var)})
					continue
				}
				v, err := toInt(x)
				pos := d.Pos
				for _, cv := range c.Vars {
					if cv.Name == d.Var && cv.Pos.IsValid() {
						pos = cv.Pos
					}
				}
				if err != nil {
					p.errs = append(p.errs, &Error{Pos: pos, Msg: fmt.Sprintf("case %s/%s: %s: %v, but it has a domain (line %d)", set.Name, c.Name, d.Var, err, d.Pos.Line)})
					continue
				}
				if !d.contains(int64(v), vals) {
					p.errs = append(p.errs, &Error{Pos: pos, Msg: fmt.Sprintf("case %s/%s: %s = %d contradicts its domain (line %d): %s", set.Name, c.Name, d.Var, v, d.Pos.Line, d.why(int64(v), vals))})
				}
				vals[d.Var] = int64(v)
			}
		}
	}
}

// bind evaluates the variables of case c of set, for Instantiate and the
// held-out draws:
// the case's, then the set's vars, then the spec's, then the lets.
func (s *Spec) bind(set *Set, c Case) (map[string]any, error) {
	vars := map[string]any{}
	for _, v := range c.Vars {
		vars[v.Name] = v.Value
	}
	for name, v := range s.pointVars() {
		vars[name] = int(v) // a parameter is no case's to set
	}
	for _, group := range [][]namedExpr{set.vars, s.vars} {
		for _, v := range group {
			if _, ok := vars[v.name]; ok {
				continue
			}
			x, err := v.e.eval(vars)
			if err != nil {
				return nil, err
			}
			vars[v.name] = x
		}
	}
	for _, v := range s.lets {
		x, err := v.e.eval(vars)
		if err != nil {
			return nil, err
		}
		vars[v.name] = x
	}
	return vars, nil
}

// DeriveSeed hashes parts into a seed (never 0): the held-out cases and
// fresh input seeds of a run are drawn from one, made from the baseline's
// and the variant's sources, the spec and a per-run nonce.
func DeriveSeed(parts ...[]byte) uint64 {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return binary.LittleEndian.Uint64(h.Sum(nil)) | 1
}

// drawValue draws a value of d within [lo, hi]: log-uniform over the
// range, so small and large sizes both come up, rounded to a valid value.
func (d *Domain) drawValue(r *rng, lo, hi int64) (int64, bool) {
	if d.Values != nil {
		vs := d.valid(lo, hi, 0)
		if len(vs) == 0 {
			return 0, false
		}
		return vs[r.intn(uint64(len(vs)))], true
	}
	lo, hi = max(lo, d.Min), min(hi, d.Max)
	lo, hi = ceilMultiple(lo, d.MultipleOf), floorMultiple(hi, d.MultipleOf)
	if lo > hi {
		return 0, false
	}
	steps := (hi - lo) / d.MultipleOf
	var k int64
	if r.intn(4) == 0 {
		k = int64(r.intn(uint64(steps) + 1)) // uniform now and then
	} else {
		k = int64(math.Floor(math.Expm1(r.float()*math.Log1p(float64(steps))) + 0.5))
		k = min(max(k, 0), steps)
	}
	return lo + k*d.MultipleOf, true
}

// Draw returns n held-out cases drawn with seed from the domains: case k
// takes the variables of listed[k % len(listed)] (its set, and the values
// of variables without a domain) and draws every domain variable, so that
// no drawn case repeats a listed case's domain values when another can be
// found. Each drawn case has its own input seed. Draw returns nil when the
// spec declares no domain or listed is empty.
func (s *Spec) Draw(seed uint64, n int, listed []Case) []Case {
	if len(s.Domains) == 0 || len(listed) == 0 {
		return nil
	}
	r := &rng{s: seed}
	seen := map[string]bool{}
	for _, c := range listed {
		seen[s.domainKey(c.Vars)] = true
	}
	var out []Case
	for k := 0; k < n; k++ {
		tmpl := listed[k%len(listed)]
		var vars []Var
		for try := 0; try < 8; try++ {
			vals := map[string]int64{}
			vars = vars[:0]
			ok := true
			for _, d := range s.Domains {
				lo, hi := d.bounds(vals)
				v, good := d.drawValue(r, lo, min(hi, d.DrawMax))
				if !good {
					ok = false
					break
				}
				vals[d.Var] = v
				vars = append(vars, Var{Name: d.Var, Value: int(v)})
			}
			if ok && !seen[s.domainKey(vars)] {
				break
			}
		}
		if len(vars) < len(s.Domains) {
			continue
		}
		seen[s.domainKey(vars)] = true
		c := Case{Set: tmpl.Set, Vars: withVars(tmpl.Vars, vars), Seed: r.next() | 1, HeldOut: true}
		c.Name = fmt.Sprintf("heldout%d:%s", k+1, defaultCaseName(vars))
		out = append(out, c)
	}
	return out
}

func (s *Spec) domainKey(vars []Var) string {
	var b strings.Builder
	for _, d := range s.Domains {
		for _, v := range vars {
			if v.Name == d.Var {
				fmt.Fprintf(&b, "%s=%v;", v.Name, v.Value)
			}
		}
	}
	return b.String()
}

// withVars is base with the variables of over replacing or adding to
// its own.
func withVars(base, over []Var) []Var {
	out := slices.Clone(base)
	for _, o := range over {
		i := slices.IndexFunc(out, func(v Var) bool { return v.Name == o.Name })
		if i >= 0 {
			out[i] = Var{Name: o.Name, Value: o.Value}
		} else {
			out = append(out, Var{Name: o.Name, Value: o.Value})
		}
	}
	return out
}

// FreshSeed returns c with an input seed drawn from seed and c's name:
// the same variables, other input bytes.
func FreshSeed(c Case, seed uint64) Case {
	c.Seed = DeriveSeed(binary.LittleEndian.AppendUint64(nil, seed), []byte(c.Set), []byte(c.Name))
	return c
}

// Shrink returns the cases one step smaller than c within the domains,
// the most promising first: for each domain variable in order, its
// smallest valid value, then values halfway towards it, then the next
// smaller valid value. Every candidate keeps to every domain (relations
// included). A greedy shrinker runs them in order and starts again from
// the first that still fails.
func (s *Spec) Shrink(c Case) []Case {
	cur := map[string]int64{}
	for _, v := range c.Vars {
		if s.domain(v.Name) != nil {
			if n, err := toInt(v.Value); err == nil {
				cur[v.Name] = int64(n)
			}
		}
	}
	var out []Case
	seen := map[string]bool{}
	for _, d := range s.Domains {
		v, ok := cur[d.Var]
		if !ok {
			continue
		}
		var cands []int64
		if d.Values != nil {
			for _, x := range d.Values {
				if x < v {
					cands = append(cands, x)
				}
			}
		} else {
			// The smallest value the other variables allow.
			lo, _ := d.bounds(cur)
			for _, e := range s.Domains {
				if e.Le == d.Var {
					lo = max(lo, cur[e.Var])
				}
			}
			for _, x := range []int64{lo, lo + (v-lo)/2, v - (v-lo)/4, v - d.MultipleOf} {
				x = ceilMultiple(x, d.MultipleOf)
				if x < v {
					cands = append(cands, x)
				}
			}
		}
		for _, x := range cands {
			trial := map[string]int64{}
			for k, y := range cur {
				trial[k] = y
			}
			trial[d.Var] = x
			if !s.allContain(trial) {
				continue
			}
			vars := slices.Clone(c.Vars)
			for i := range vars {
				if vars[i].Name == d.Var {
					vars[i].Value = int(x)
				}
			}
			key := s.domainKey(vars)
			if seen[key] {
				continue
			}
			seen[key] = true
			nc := c
			nc.Vars = vars
			nc.Name = shrunkName(c.Name, s.domainKeyVars(vars))
			out = append(out, nc)
		}
	}
	return out
}

func (s *Spec) domainKeyVars(vars []Var) []Var {
	var out []Var
	for _, d := range s.Domains {
		for _, v := range vars {
			if v.Name == d.Var {
				out = append(out, v)
			}
		}
	}
	return out
}

func shrunkName(name string, vars []Var) string {
	prefix, _, _ := strings.Cut(name, ":")
	prefix = strings.TrimSuffix(prefix, "-shrunk")
	return prefix + "-shrunk:" + defaultCaseName(vars)
}

func (s *Spec) allContain(vals map[string]int64) bool {
	for _, d := range s.Domains {
		if v, ok := vals[d.Var]; ok && !d.contains(v, vals) {
			return false
		}
	}
	return true
}

// Token encodes c so that ParseToken gives it back: its set, name, input
// seed and variables, for metalab check --replay. It is one shell word:
// set/name@seed/V=1,W=2 with the set and name escaped.
func (c Case) Token() string {
	var b strings.Builder
	esc := func(s string) string { return strings.ReplaceAll(url.PathEscape(s), "@", "%40") }
	b.WriteString(esc(c.Set))
	b.WriteByte('/')
	b.WriteString(esc(c.Name))
	fmt.Fprintf(&b, "@%x/", c.Seed)
	for i, v := range c.Vars {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%v", esc(v.Name), v.Value)
	}
	return b.String()
}

// ParseToken decodes a case Token made.
func ParseToken(tok string) (Case, error) {
	bad := func(why string) (Case, error) {
		return Case{}, fmt.Errorf("replay token %s: %s (want set/name@seed/VAR=value,...)", clip(tok), why)
	}
	head, varsPart, ok := strings.Cut(strings.TrimSpace(tok), "@")
	if !ok {
		return bad("no @")
	}
	setEnc, nameEnc, ok := strings.Cut(head, "/")
	if !ok {
		return bad("no set/name")
	}
	seedHex, list, ok := strings.Cut(varsPart, "/")
	if !ok {
		return bad("no /variables")
	}
	var c Case
	var err error
	if c.Set, err = url.PathUnescape(setEnc); err != nil || c.Set == "" {
		return bad("bad set")
	}
	if c.Name, err = url.PathUnescape(nameEnc); err != nil || c.Name == "" {
		return bad("bad name")
	}
	if c.Seed, err = strconv.ParseUint(seedHex, 16, 64); err != nil {
		return bad("bad seed")
	}
	if list != "" {
		for _, kv := range strings.Split(list, ",") {
			k, v, ok := strings.Cut(kv, "=")
			name, err := url.PathUnescape(k)
			if !ok || err != nil || name == "" {
				return bad("bad variable " + clip(kv))
			}
			val, ok := literal(v)
			if !ok {
				return bad("bad value " + clip(kv))
			}
			c.Vars = append(c.Vars, Var{Name: name, Value: val})
		}
	}
	c.HeldOut = strings.HasPrefix(c.Name, "heldout")
	return c, nil
}

// CheckCase refuses a case (a replayed one) whose set the spec lacks or
// whose variables its domains contradict.
func (s *Spec) CheckCase(c Case) error {
	set := s.Set(c.Set)
	if set == nil {
		return fmt.Errorf("case %s/%s: spec %s has no case set %q", c.Set, c.Name, s.Path, c.Set)
	}
	vars, err := s.bind(set, c)
	if err != nil {
		return caseErr(c, err)
	}
	vals := map[string]int64{}
	for _, d := range s.Domains {
		n, err := toInt(vars[d.Var])
		if err != nil {
			return fmt.Errorf("case %s/%s: %s: %v", c.Set, c.Name, d.Var, err)
		}
		if !d.contains(int64(n), vals) {
			return &Error{Pos: d.Pos, Msg: fmt.Sprintf("case %s/%s: %s = %d contradicts its domain: %s", c.Set, c.Name, d.Var, n, d.why(int64(n), vals))}
		}
		vals[d.Var] = int64(n)
	}
	return nil
}

// largest returns c with every domain variable at its largest valid
// value (relations kept, in order).
func (s *Spec) largest(c Case) Case {
	vals := map[string]int64{}
	var vars []Var
	for _, d := range s.Domains {
		lo, hi := d.bounds(vals)
		vs := d.valid(lo, hi, 0)
		var v int64
		switch {
		case d.Values != nil && len(vs) > 0:
			v = vs[len(vs)-1]
		case d.Values == nil && floorMultiple(hi, d.MultipleOf) >= lo:
			v = floorMultiple(hi, d.MultipleOf)
		default:
			return c // no valid value left: nothing to check
		}
		vals[d.Var] = v
		vars = append(vars, Var{Name: d.Var, Value: int(v)})
	}
	c.Vars = withVars(c.Vars, vars)
	c.Name = "largest:" + defaultCaseName(vars)
	return c
}

// checkDomainLimits refuses domains whose largest case, made from the
// first case of each set, is past a limit: a buffer over MaxBufferSize,
// threads over MaxThreadgroupThreads, a grid too large. Nothing is
// allocated. The error is at the first domain and quotes the limit's own.
func (p *parser) checkDomainLimits(s *Spec) {
	if len(s.Domains) == 0 {
		return
	}
	for _, set := range s.Sets {
		if len(set.Cases) == 0 {
			continue
		}
		c := s.largest(set.Cases[0])
		vars, err := s.bind(set, c)
		if err != nil {
			p.errs = append(p.errs, &Error{Pos: s.Domains[0].Pos, Msg: fmt.Sprintf("domains: the largest case of set %s (%s): %v", set.Name, c.Name, err)})
			return
		}
		fail := func(err error) {
			p.errs = append(p.errs, &Error{Pos: s.Domains[0].Pos, Msg: fmt.Sprintf("domains: the largest case of set %s (%s) is past a limit: %v", set.Name, strings.TrimPrefix(c.Name, "largest:"), err)})
		}
		for _, b := range s.Buffers {
			if b.count == nil || b.Type == nil {
				continue
			}
			n, err := b.count.Int(vars)
			if err == nil && n > MaxBufferSize/b.Type.Size {
				err = &Error{Pos: b.count.Pos, Msg: fmt.Sprintf("buffer %q: count %d of %d-byte %s is over the %d-byte buffer limit", b.Name, n, b.Type.Size, b.Type.Name, MaxBufferSize)}
			}
			if err != nil {
				fail(err)
				return
			}
		}
		for _, st := range s.Stages {
			if _, err := dim3(st.threads, "threads", vars); err != nil {
				fail(err)
				return
			}
			if _, err := dim3(st.threadgroups, "threadgroups", vars); err != nil {
				fail(err)
				return
			}
		}
	}
}
