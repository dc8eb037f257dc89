package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"metalab/internal/inputfile"
)

// A Spec is a parsed kernel spec. See the package documentation for the
// file format.
type Spec struct {
	Path   string // the YAML file as given to Load or Parse
	Dir    string // directory of Path; relative paths resolve against it
	Source string // the main .metal file, resolved against Dir
	// Includes are the directories #include "..." searches after the
	// including file's directory and the source's, resolved against Dir.
	Includes []string
	Seed     uint64
	Structs  map[string]*Type
	Buffers  []*BufferSpec
	Stages   []*StageSpec
	Sets     []*Set
	// Defaults are the case sets to run when none is named, as the spec's
	// defaults: key declares them; nil when it declares none (see
	// DefaultSets).
	Defaults []string
	// Domains are the values case variables may take (the domains:
	// key), in the order declared; held-out cases are drawn from them.
	Domains []*Domain
	// Digest is the sha256 of the spec's bytes.
	Digest     [32]byte
	dispatches *Expr
	sourcePos  token.Position
	vars       []namedExpr
	lets       []namedExpr
	defines    []define
	constants  []constant
	// tune is the tune: section, nil when absent; point is the point
	// At fixed the parameters at, nil for the default point; fileDigest
	// is the sha256 of the spec's bytes, whatever the point.
	tune       *tuneSpec
	point      Point
	fileDigest [32]byte
}

// A BufferSpec is a buffer as the spec declares it.
type BufferSpec struct {
	Name     string
	Index    int // -1 when absent
	Type     *Type
	Role     Role
	Sentinel []byte
	Pos      token.Position
	IndexPos token.Position // where index: is written; zero when absent
	count    *Expr
	shape    []*Expr
	slack    *Expr // host slack in bytes, or nil
	gen      genSpec
	values   map[string]*fieldValue
}

// MaxIndex is the largest [[buffer(n)]] or [[threadgroup(n)]] index a spec
// may bind: Metal has 31 argument slots of each kind.
const MaxIndex = 30

// A slotKey is an argument slot: buffer and threadgroup indices are
// separate spaces, so [[buffer(0)]] and [[threadgroup(0)]] coexist.
type slotKey struct {
	threadgroup bool
	index       int
}

func (k slotKey) space() string {
	if k.threadgroup {
		return "threadgroup"
	}
	return "buffer"
}

// A Role says how a buffer is filled and whether it is compared.
type Role string

const (
	Input       Role = "input"
	Output      Role = "output"
	InOut       Role = "inout"
	Threadgroup Role = "threadgroup"
)

// A StageSpec is one kernel of a pipeline as the spec declares it.
type StageSpec struct {
	Entry     string
	Source    string         // resolved .metal path
	SourcePos token.Position // where the spec names Source
	Pos       token.Position
	// Includes are the spec's include directories, then the stage's own,
	// resolved against the spec's directory.
	Includes []string
	// Bindings are the stage's argument bindings, sorted by space and
	// index; see stageBindings.
	Bindings     []Binding
	threadgroups []*Expr
	threads      []*Expr
	defines      []define
	constants    []constant
}

// A Set is a named list of cases with overrides.
type Set struct {
	Name      string
	Pos       token.Position
	Cases     []Case
	vars      []namedExpr
	defines   []define
	constants []constant
	gen       map[string]genSpec
}

// A Case is one binding of case variables within a set.
type Case struct {
	Set  string
	Name string
	Vars []Var // in the order written
	// Seed, when not 0, replaces the spec's seed for the case's input
	// bytes (fresh seeds, held-out cases).
	Seed uint64
	// HeldOut says the case was drawn from the domains, not listed.
	HeldOut bool
}

// A Var is one case variable binding.
type Var struct {
	Name  string
	Value any            // int, float64 or bool
	Pos   token.Position // where a listed case writes it; zero otherwise
}

type namedExpr struct {
	name string
	e    *Expr
}

type define struct {
	name, value string
	pos         token.Position // of the value
}

type constant struct {
	name, typ string // typ "" in a set override keeps the declared type
	value     *Expr
	pos       token.Position
}

// Load reads and parses the spec at path.
func Load(path string) (*Spec, error) {
	data, err := inputfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load spec: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a spec; name is its path, used for positions and to resolve
// relative paths.
func Parse(name string, data []byte) (*Spec, error) {
	p := &parser{file: name}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(name, data, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &Error{Pos: token.Position{Filename: name, Line: 1, Column: 1}, Msg: "empty spec"}
	}
	if err := p.tooBig(doc.Content[0], 1); err != nil {
		return nil, err
	}
	s := p.spec(doc.Content[0])
	s.Digest = sha256.Sum256(data)
	s.fileDigest = s.Digest
	if err := p.errs.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// MaxDepth is how deeply a spec's YAML may nest mappings and lists. The
// deepest a spec needs is about eight (sets, a set, gen, a buffer, its
// generator, a parameter); anything past the limit is a mistake, reported
// at the node that goes too deep rather than walked.
const MaxDepth = 32

// Limits on a scalar's length: a key (a name) and any other value. An
// expression has its own, smaller limit (MaxExprLen).
const (
	MaxKeyLen    = 256
	MaxScalarLen = 4096
)

// tooBig returns an error for the first node of n's tree (n at level
// depth) that lies deeper than MaxDepth or is a scalar over its length
// limit, or nil. Aliases are not followed. The error does not quote the
// node.
func (p *parser) tooBig(n *yaml.Node, depth int) error {
	if depth > MaxDepth {
		return &Error{Pos: p.pos(n), Msg: fmt.Sprintf("spec nests deeper than %d levels", MaxDepth)}
	}
	for i, c := range n.Content {
		limit, what := MaxScalarLen, "value"
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			limit, what = MaxKeyLen, "key"
		}
		if c.Kind == yaml.ScalarNode && len(c.Value) > limit {
			return &Error{Pos: p.pos(c), Msg: fmt.Sprintf("%s of %d bytes is over the %d-byte limit", what, len(c.Value), limit)}
		}
		if err := p.tooBig(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// resolvePath resolves a path named in the spec: an absolute path stands as
// written, a relative one is relative to the spec's directory.
func resolvePath(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

type parser struct {
	file string
	errs ErrorList
}

func (p *parser) pos(n *yaml.Node) token.Position {
	return token.Position{Filename: p.file, Line: n.Line, Column: n.Column}
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, &Error{Pos: p.pos(n), Msg: fmt.Sprintf(format, args...)})
}

// fields checks that n is a mapping with only the allowed keys and returns
// its values by key; what names n in errors.
func (p *parser) fields(n *yaml.Node, what string, allowed ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: want a mapping", what)
		return out
	}
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !ok[k.Value]:
			p.errorf(k, "%s: unknown field %q", what, k.Value)
		case out[k.Value] != nil:
			p.errorf(k, "%s: duplicate field %q", what, k.Value)
		default:
			out[k.Value] = v
		}
	}
	return out
}

// pairs returns the key/value pairs of a mapping, in order.
func (p *parser) pairs(n *yaml.Node, what string) [][2]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: want a mapping", what)
		return nil
	}
	var out [][2]*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			p.errorf(k, "%s: duplicate key %q", what, k.Value)
			continue
		}
		seen[k.Value] = true
		out = append(out, [2]*yaml.Node{k, n.Content[i+1]})
	}
	return out
}

func (p *parser) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, "%s: want a scalar", what)
		return ""
	}
	return n.Value
}

// dirs reads a directory or a list of directories, each resolved against
// dir unless absolute.
func (p *parser) dirs(dir string, n *yaml.Node, what string) []string {
	var items []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		items = []*yaml.Node{n}
	case yaml.SequenceNode:
		items = n.Content
	default:
		p.errorf(n, "%s: want a directory or a list of directories", what)
		return nil
	}
	var out []string
	for _, it := range items {
		v := p.str(it, what)
		if it.Kind == yaml.ScalarNode && v == "" {
			p.errorf(it, "%s: empty directory", what)
			continue
		}
		if v != "" {
			out = append(out, resolvePath(dir, v))
		}
	}
	return out
}

func (p *parser) expr(n *yaml.Node, what string) *Expr {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		p.errorf(n, "%s: want an expression", what)
		return nil
	}
	e, err := compileExpr(n.Value, p.pos(n))
	if err != nil {
		hint := ""
		if strings.Count(n.Value, "(") != strings.Count(n.Value, ")") {
			hint = "; an expression with a comma inside a YAML flow list [a, b] must be quoted, e.g. \"ceil_div(T, 64)\""
		}
		p.errorf(n, "%s: %v%s", what, err, hint)
		return nil
	}
	return e
}

func (p *parser) exprs(n *yaml.Node, what string) []*Expr {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: want a list", what)
		return nil
	}
	var out []*Expr
	for _, c := range n.Content {
		out = append(out, p.expr(c, what))
	}
	return out
}

func (p *parser) integer(n *yaml.Node, what string) (int64, bool) {
	v, err := strconv.ParseInt(p.str(n, what), 0, 64)
	if err != nil && n.Kind == yaml.ScalarNode {
		p.errorf(n, "%s: want an integer, got %s", what, clip(n.Value))
		return 0, false
	}
	return v, err == nil
}

func (p *parser) namedExprs(n *yaml.Node, what string) []namedExpr {
	var out []namedExpr
	for _, kv := range p.pairs(n, what) {
		out = append(out, namedExpr{kv[0].Value, p.expr(kv[1], fmt.Sprintf("%s %q", what, kv[0].Value))})
	}
	return out
}

func (p *parser) defines(n *yaml.Node, what string) []define {
	var out []define
	for _, kv := range p.pairs(n, what) {
		out = append(out, define{kv[0].Value, p.str(kv[1], fmt.Sprintf("define %q", kv[0].Value)), p.pos(kv[1])})
	}
	return out
}

// constantTypes are the types a function constant may have.
var constantTypes = map[string]bool{
	"bool": true, "char": true, "uchar": true, "short": true, "ushort": true,
	"int": true, "uint": true, "long": true, "ulong": true, "half": true, "bfloat": true, "float": true,
}

// constants parses function constants; bare says a scalar value without a
// type is allowed (set overrides).
func (p *parser) constants(n *yaml.Node, bare bool) []constant {
	var out []constant
	for _, kv := range p.pairs(n, "constants") {
		what := fmt.Sprintf("constant %q", kv[0].Value)
		c := constant{name: kv[0].Value, pos: p.pos(kv[0])}
		if kv[1].Kind == yaml.ScalarNode && bare {
			c.value = p.expr(kv[1], what)
			out = append(out, c)
			continue
		}
		f := p.fields(kv[1], what, "type", "value")
		if t := f["type"]; t != nil {
			c.typ = p.str(t, what)
			if s, ok := canonScalar(c.typ); ok && constantTypes[s] {
				c.typ = s
			} else if c.typ != "" {
				p.errorf(t, "%s: unknown constant type %s", what, clip(c.typ))
			}
		} else if !bare {
			p.errorf(kv[1], "%s: missing type", what)
		}
		if v := f["value"]; v != nil {
			c.value = p.expr(v, what)
		} else {
			p.errorf(kv[1], "%s: missing value", what)
		}
		out = append(out, c)
	}
	return out
}

func (p *parser) spec(root *yaml.Node) *Spec {
	s := &Spec{Path: p.file, Dir: filepath.Dir(p.file), Seed: 1, Structs: map[string]*Type{}}
	f := p.fields(root, "spec", "source", "includes", "seed", "dispatches", "vars", "let", "defines",
		"constants", "structs", "buffers", "stages", "sets", "defaults", "domains", "tune")
	if n := f["source"]; n != nil {
		s.Source = resolvePath(s.Dir, p.str(n, "source"))
		s.sourcePos = p.pos(n)
	} else {
		p.errorf(root, "spec: missing source")
	}
	if n := f["includes"]; n != nil {
		s.Includes = p.dirs(s.Dir, n, "includes")
	}
	if n := f["seed"]; n != nil {
		if v, ok := p.integer(n, "seed"); ok {
			s.Seed = uint64(v)
		}
	}
	if n := f["dispatches"]; n != nil {
		s.dispatches = p.expr(n, "dispatches")
	}
	if n := f["vars"]; n != nil {
		s.vars = p.namedExprs(n, "var")
	}
	if n := f["let"]; n != nil {
		s.lets = p.namedExprs(n, "let")
	}
	if n := f["defines"]; n != nil {
		s.defines = p.defines(n, "defines")
	}
	if n := f["constants"]; n != nil {
		s.constants = p.constants(n, false)
	}
	if n := f["structs"]; n != nil {
		p.structs(s, n)
	}
	if n := f["buffers"]; n != nil {
		p.buffers(s, n)
	} else {
		p.errorf(root, "spec: missing buffers")
	}
	if n := f["stages"]; n != nil {
		p.stages(s, n)
	} else {
		p.errorf(root, "spec: missing stages")
	}
	if n := f["sets"]; n != nil {
		p.sets(s, n)
	} else {
		p.errorf(root, "spec: missing sets")
	}
	if n := f["defaults"]; n != nil {
		p.defaults(s, n)
	}
	if n := f["domains"]; n != nil {
		p.domains(s, n)
	}
	if n := f["tune"]; n != nil {
		p.tune(s, n)
	}
	if len(p.errs) == 0 {
		p.checkVars(s, root)
	}
	if len(p.errs) == 0 {
		p.checkDomains(s)
	}
	if len(p.errs) == 0 {
		p.checkDomainLimits(s)
	}
	return s
}

// defaults parses the defaults: mapping, whose cases: lists the case sets
// that run when none is named.
func (p *parser) defaults(s *Spec, n *yaml.Node) {
	f := p.fields(n, "defaults", "cases")
	cn := f["cases"]
	if cn == nil {
		return
	}
	if cn.Kind != yaml.SequenceNode || len(cn.Content) == 0 {
		p.errorf(cn, "defaults: cases: want a non-empty list of case set names")
		return
	}
	seen := map[string]bool{}
	for _, c := range cn.Content {
		name := p.str(c, "defaults: cases")
		switch {
		case name == "":
		case s.Set(name) == nil:
			p.errorf(c, "defaults: cases: no case set %q", name)
		case seen[name]:
			p.errorf(c, "defaults: cases: set %q listed twice", name)
		default:
			s.Defaults = append(s.Defaults, name)
		}
		seen[name] = true
	}
}

func (p *parser) structs(s *Spec, n *yaml.Node) {
	for _, kv := range p.pairs(n, "structs") {
		name := kv[0].Value
		if _, ok := LookupType(name); ok {
			p.errorf(kv[0], "struct %q: name of a built-in type", name)
			continue
		}
		t := &Type{Name: name, Kind: Struct}
		if kv[1].Kind != yaml.SequenceNode {
			p.errorf(kv[1], "struct %q: want a list of fields", name)
			continue
		}
		seen := map[string]bool{}
		for _, fn := range kv[1].Content {
			f := p.fields(fn, fmt.Sprintf("struct %q field", name), "name", "type", "len", "value")
			var fld Field
			if n := f["name"]; n != nil {
				fld.Name = p.str(n, "field name")
			} else {
				p.errorf(fn, "struct %q: field without a name", name)
				continue
			}
			what := fmt.Sprintf("struct %q field %q", name, fld.Name)
			if seen[fld.Name] {
				p.errorf(f["name"], "%s: duplicate field", what)
			}
			seen[fld.Name] = true
			if n := f["type"]; n != nil {
				fld.Type = p.elemType(s, n, what)
			} else {
				p.errorf(fn, "%s: missing type", what)
			}
			if n := f["len"]; n != nil {
				if v, ok := p.integer(n, what+" len"); ok {
					if v < 1 {
						p.errorf(n, "%s: len must be at least 1", what)
					}
					fld.Len = int(v)
				}
			}
			if n := f["value"]; n != nil && fld.Type != nil {
				fld.value = p.fieldValue(n, &fld, what)
			}
			if fld.Type != nil {
				t.Fields = append(t.Fields, fld)
			}
		}
		if len(t.Fields) == 0 {
			p.errorf(kv[1], "struct %q: no fields", name)
			continue
		}
		layoutStruct(t)
		s.Structs[name] = t
	}
}

func (p *parser) elemType(s *Spec, n *yaml.Node, what string) *Type {
	name := p.str(n, what+" type")
	if t, ok := LookupType(name); ok {
		return t
	}
	if t, ok := s.Structs[name]; ok {
		return t
	}
	if name != "" {
		p.errorf(n, "%s: unknown element type %s", what, clip(name))
	}
	return nil
}

func (p *parser) buffers(s *Spec, n *yaml.Node) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(n, "buffers: want a non-empty list")
		return
	}
	defer func() {
		for _, b := range s.Buffers {
			if b.Role != Threadgroup {
				return
			}
		}
		p.errorf(n, "buffers: only threadgroup buffers, so a run has nothing to compare")
	}()
	names := map[string]bool{}
	indexes := map[slotKey]string{}
	for _, bn := range n.Content {
		f := p.fields(bn, "buffer", "name", "index", "type", "count", "shape", "role", "gen", "values", "sentinel", "slack")
		b := &BufferSpec{Index: -1, Pos: p.pos(bn), Sentinel: []byte{0xa5}}
		if n := f["name"]; n != nil {
			b.Name = p.str(n, "buffer name")
		}
		if b.Name == "" {
			p.errorf(bn, "buffer: missing name")
			continue
		}
		what := fmt.Sprintf("buffer %q", b.Name)
		if names[b.Name] {
			p.errorf(f["name"], "%s: duplicate name", what)
		}
		names[b.Name] = true
		indexNode := f["index"]
		if indexNode != nil {
			if v, ok := p.integer(indexNode, what+" index"); ok {
				b.Index, b.IndexPos = int(v), p.pos(indexNode)
				if v < 0 || v > MaxIndex {
					p.errorf(indexNode, "%s: index %d out of range 0..%d", what, v, MaxIndex)
					b.Index = -1
				}
			}
		}
		if n := f["type"]; n != nil {
			b.Type = p.elemType(s, n, what)
		} else {
			p.errorf(bn, "%s: missing type", what)
		}
		if n := f["count"]; n != nil {
			b.count = p.expr(n, what+" count")
		}
		if n := f["shape"]; n != nil {
			b.shape = p.exprs(n, what+" shape")
		}
		if n := f["role"]; n != nil {
			b.Role = Role(p.str(n, what+" role"))
			switch b.Role {
			case Input, Output, InOut, Threadgroup:
			default:
				p.errorf(n, "%s: unknown role %s (want input, output, inout or threadgroup)", what, clip(string(b.Role)))
			}
		} else {
			p.errorf(bn, "%s: missing role", what)
		}
		if b.Index >= 0 {
			k := slotKey{b.Role == Threadgroup, b.Index}
			if other, dup := indexes[k]; dup {
				p.errorf(indexNode, "%s: duplicate %s index %d (also buffer %q)", what, k.space(), b.Index, other)
				b.Index = -1 // reported once, not again by every stage
			} else {
				indexes[k] = b.Name
			}
		}
		if n := f["slack"]; n != nil {
			b.slack = p.expr(n, what+" slack")
		}
		if n := f["sentinel"]; n != nil {
			v, err := hex.DecodeString(p.str(n, what+" sentinel"))
			if err != nil || len(v) == 0 {
				p.errorf(n, "%s: sentinel must be hex bytes, e.g. \"a5\" or \"deadbeef\"", what)
			} else {
				b.Sentinel = v
			}
			if b.Role != Output {
				p.errorf(n, "%s: sentinel only applies to output buffers", what)
			}
		}
		isStruct := b.Type != nil && b.Type.Kind == Struct
		if n := f["values"]; n != nil {
			if !isStruct {
				p.errorf(n, "%s: values only apply to struct buffers", what)
			} else {
				b.values = map[string]*fieldValue{}
				for _, kv := range p.pairs(n, what+" values") {
					fld := fieldOf(b.Type, kv[0].Value)
					if fld == nil {
						p.errorf(kv[0], "%s: struct %q has no field %q", what, b.Type.Name, kv[0].Value)
						continue
					}
					if v := p.fieldValue(kv[1], fld, fmt.Sprintf("%s value %q", what, kv[0].Value)); v != nil {
						b.values[kv[0].Value] = v
					}
				}
			}
		}
		if n := f["gen"]; n != nil {
			if b.Role != Input && b.Role != InOut {
				p.errorf(n, "%s: gen only applies to input and inout buffers", what)
			}
			if isStruct {
				p.errorf(n, "%s: a struct buffer takes values, not gen", what)
			}
			b.gen = p.gen(n, what)
			if b.Type != nil && !isStruct {
				p.checkGen(b.gen, b.Type, n, what)
			}
		} else if (b.Role == Input || b.Role == InOut) && !isStruct && b.Type != nil {
			p.errorf(bn, "%s: an %s buffer needs gen", what, b.Role)
		}
		s.Buffers = append(s.Buffers, b)
	}
}

func fieldOf(t *Type, name string) *Field {
	for i := range t.Fields {
		if t.Fields[i].Name == name {
			return &t.Fields[i]
		}
	}
	return nil
}

func (s *Spec) buffer(name string) *BufferSpec {
	for _, b := range s.Buffers {
		if b.Name == name {
			return b
		}
	}
	return nil
}

func (p *parser) stages(s *Spec, n *yaml.Node) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(n, "stages: want a non-empty list")
		return
	}
	for _, sn := range n.Content {
		f := p.fields(sn, "stage", "entry", "source", "includes", "threadgroups", "threads", "buffers", "bind", "defines", "constants")
		st := &StageSpec{Source: s.Source, SourcePos: s.sourcePos, Pos: p.pos(sn), Includes: s.Includes}
		if n := f["entry"]; n != nil {
			st.Entry = p.str(n, "stage entry")
		}
		if st.Entry == "" {
			p.errorf(sn, "stage: missing entry")
			continue
		}
		what := fmt.Sprintf("stage %q", st.Entry)
		if n := f["source"]; n != nil {
			st.Source = resolvePath(s.Dir, p.str(n, what+" source"))
			st.SourcePos = p.pos(n)
		}
		if n := f["includes"]; n != nil {
			st.Includes = append(append([]string{}, s.Includes...), p.dirs(s.Dir, n, what+" includes")...)
		}
		for _, k := range []string{"threadgroups", "threads"} {
			n := f[k]
			if n == nil {
				p.errorf(sn, "%s: missing %s", what, k)
				continue
			}
			d := p.exprs(n, what+" "+k)
			if len(d) < 1 || len(d) > 3 {
				p.errorf(n, "%s: %s wants 1 to 3 dimensions", what, k)
			}
			if k == "threads" {
				st.threads = d
			} else {
				st.threadgroups = d
			}
		}
		st.Bindings = p.stageBindings(s, sn, f["buffers"], f["bind"], what)
		if n := f["defines"]; n != nil {
			st.defines = p.defines(n, what+" defines")
		}
		if n := f["constants"]; n != nil {
			st.constants = p.constants(n, false)
		}
		s.Stages = append(s.Stages, st)
	}
}

// stageBindings resolves the buffers: and bind: keys of a stage into its
// bindings. Each listed buffer (every buffer with an index when buffers: is
// absent) is bound at its own index, or at the indices bind: gives it; a
// buffer named only in bind: is bound too. bind: takes one index or a list
// of them: a host may bind one buffer at several indices. Threadgroup
// buffers bind in the threadgroup index space, the rest in the buffer
// index space; two buffers in one slot are an error.
func (p *parser) stageBindings(s *Spec, sn, listNode, bindNode *yaml.Node, what string) []Binding {
	type at struct {
		index int
		pos   token.Position
	}
	bind := map[string][]at{}
	var bindOrder []string
	if bindNode != nil {
		for _, kv := range p.pairs(bindNode, what+" bind") {
			name := kv[0].Value
			if s.buffer(name) == nil {
				p.errorf(kv[0], "%s: unknown buffer %q", what, name)
				continue
			}
			items := []*yaml.Node{kv[1]}
			if kv[1].Kind == yaml.SequenceNode {
				items = kv[1].Content
				if len(items) == 0 {
					p.errorf(kv[1], "%s: bind %q: want an index or a non-empty list of indices", what, name)
					continue
				}
			}
			for _, it := range items {
				v, ok := p.integer(it, fmt.Sprintf("%s bind %q", what, name))
				if !ok {
					continue
				}
				if v < 0 || v > MaxIndex {
					p.errorf(it, "%s: bind %q: index %d out of range 0..%d", what, name, v, MaxIndex)
					continue
				}
				bind[name] = append(bind[name], at{int(v), p.pos(it)})
			}
			bindOrder = append(bindOrder, name)
		}
	}
	var out []Binding
	slots := map[slotKey]string{}
	add := func(b *BufferSpec, idx int, pos token.Position) {
		k := slotKey{b.Role == Threadgroup, idx}
		if other, ok := slots[k]; ok {
			if other == b.Name {
				p.errs = append(p.errs, &Error{Pos: pos, Msg: fmt.Sprintf("%s: buffer %q bound twice at %s index %d", what, b.Name, k.space(), idx)})
			} else {
				p.errs = append(p.errs, &Error{Pos: pos, Msg: fmt.Sprintf("%s: buffers %q and %q both bound at %s index %d", what, other, b.Name, k.space(), idx)})
			}
			return
		}
		slots[k] = b.Name
		out = append(out, Binding{Index: idx, Buffer: b.Name, Threadgroup: k.threadgroup, Pos: pos})
	}
	done := map[string]bool{}
	bindOne := func(b *BufferSpec, pos token.Position) {
		done[b.Name] = true
		if ats, ok := bind[b.Name]; ok {
			for _, a := range ats {
				add(b, a.index, a.pos)
			}
			return
		}
		add(b, b.Index, pos)
	}
	if listNode != nil {
		if listNode.Kind != yaml.SequenceNode {
			p.errorf(listNode, "%s: buffers: want a list of names", what)
		}
		for _, c := range listNode.Content {
			name := p.str(c, what+" buffer")
			b := s.buffer(name)
			_, bound := bind[name]
			switch {
			case b == nil:
				p.errorf(c, "%s: unknown buffer %q", what, name)
			case done[name]:
				p.errorf(c, "%s: buffer %q listed twice", what, name)
			case b.Index < 0 && !bound:
				p.errorf(c, "%s: buffer %q has no index and no bind", what, name)
				done[name] = true
			default:
				bindOne(b, p.pos(c))
			}
		}
	} else {
		for _, b := range s.Buffers {
			if _, bound := bind[b.Name]; bound || b.Index >= 0 {
				bindOne(b, b.IndexPos)
			}
		}
	}
	for _, name := range bindOrder {
		if !done[name] {
			bindOne(s.buffer(name), token.Position{})
		}
	}
	sortBindings(out)
	return out
}

func (p *parser) sets(s *Spec, n *yaml.Node) {
	if n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		// A spec with no case runs nothing: every check of it would pass.
		p.errorf(n, "sets: want at least one case set")
		return
	}
	for _, kv := range p.pairs(n, "sets") {
		set := &Set{Name: kv[0].Value, Pos: p.pos(kv[0])}
		what := fmt.Sprintf("set %q", set.Name)
		f := p.fields(kv[1], what, "cases", "vars", "defines", "constants", "gen")
		if n := f["vars"]; n != nil {
			set.vars = p.namedExprs(n, what+" var")
		}
		if n := f["defines"]; n != nil {
			set.defines = p.defines(n, what+" defines")
		}
		if n := f["constants"]; n != nil {
			set.constants = p.constants(n, true)
			for _, c := range set.constants {
				if c.typ == "" && s.constType(c.name) == "" {
					p.errs = append(p.errs, &Error{Pos: c.pos, Msg: fmt.Sprintf("%s: constant %q: no declared type; give {type, value}", what, c.name)})
				}
			}
		}
		if n := f["gen"]; n != nil {
			set.gen = map[string]genSpec{}
			for _, g := range p.pairs(n, what+" gen") {
				b := s.buffer(g[0].Value)
				if b == nil {
					p.errorf(g[0], "%s: unknown buffer %q", what, g[0].Value)
					continue
				}
				bw := fmt.Sprintf("%s: buffer %q", what, b.Name)
				if b.gen == nil {
					p.errorf(g[0], "%s has no gen to override", bw)
					continue
				}
				o := p.gen(g[1], bw)
				set.gen[b.Name] = o
				if b.Type != nil {
					p.checkGen(b.gen.merge(o), b.Type, g[1], bw)
				}
			}
		}
		cn := f["cases"]
		if cn == nil || cn.Kind != yaml.SequenceNode || len(cn.Content) == 0 {
			p.errorf(kv[1], "%s: want a non-empty list of cases", what)
		} else {
			seen := map[string]bool{}
			for _, c := range cn.Content {
				cs := Case{Set: set.Name}
				for _, v := range p.pairs(c, what+" case") {
					if v[0].Value == "name" {
						cs.Name = p.str(v[1], what+" case name")
						continue
					}
					val, ok := literal(p.str(v[1], "case variable"))
					if !ok {
						p.errorf(v[1], "%s: case variable %q: want a number or a boolean, got %s", what, v[0].Value, clip(v[1].Value))
					}
					cs.Vars = append(cs.Vars, Var{v[0].Value, val, p.pos(v[1])})
				}
				if cs.Name == "" {
					cs.Name = defaultCaseName(cs.Vars)
				}
				if seen[cs.Name] {
					p.errorf(c, "%s: duplicate case %q", what, cs.Name)
				}
				seen[cs.Name] = true
				set.Cases = append(set.Cases, cs)
			}
		}
		s.Sets = append(s.Sets, set)
	}
}

func defaultCaseName(vars []Var) string {
	if len(vars) == 0 {
		return "default"
	}
	var b []byte
	for i, v := range vars {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%s=%v", v.Name, v.Value)
	}
	return string(b)
}

func (s *Spec) constType(name string) string {
	for _, c := range s.constants {
		if c.name == name {
			return c.typ
		}
	}
	for _, st := range s.Stages {
		for _, c := range st.constants {
			if c.name == name {
				return c.typ
			}
		}
	}
	return ""
}

// checkVars reports expressions that read a variable no case can bind.
func (p *parser) checkVars(s *Spec, root *yaml.Node) {
	known := map[string]bool{}
	for _, v := range s.vars {
		known[v.name] = true
	}
	for _, v := range s.lets {
		known[v.name] = true
	}
	for _, prm := range s.Params() {
		known[prm.Name] = true
	}
	for _, set := range s.Sets {
		for _, v := range set.vars {
			known[v.name] = true
		}
		for _, c := range set.Cases {
			for _, v := range c.Vars {
				known[v.Name] = true
			}
		}
	}
	check := func(e *Expr, extra ...string) {
		if e == nil {
			return
		}
		for _, id := range e.idents {
			ok := known[id]
			for _, x := range extra {
				ok = ok || x == id
			}
			if !ok {
				p.errs = append(p.errs, &Error{Pos: e.Pos, Msg: fmt.Sprintf("expression %s: unknown variable %q", e.Quoted(), id)})
			}
		}
	}
	check(s.dispatches)
	for _, v := range s.vars {
		check(v.e)
	}
	for _, v := range s.lets {
		check(v.e)
	}
	for _, c := range s.constants {
		check(c.value)
	}
	for _, t := range s.Structs {
		for _, f := range t.Fields {
			for _, e := range f.value.exprs() {
				check(e, "i", "j")
			}
		}
	}
	checkGen := func(g genSpec) {
		for k, gp := range g {
			if gp.e != nil {
				if k == "selected" {
					check(gp.e, "r")
				} else {
					check(gp.e)
				}
			}
		}
	}
	for _, b := range s.Buffers {
		check(b.count)
		for _, e := range b.shape {
			check(e)
		}
		for _, v := range b.values {
			for _, e := range v.exprs() {
				check(e, "i", "j")
			}
		}
		check(b.slack)
		checkGen(b.gen)
	}
	for _, st := range s.Stages {
		for _, e := range append(append([]*Expr{}, st.threadgroups...), st.threads...) {
			check(e)
		}
		for _, c := range st.constants {
			check(c.value)
		}
	}
	for _, set := range s.Sets {
		for _, v := range set.vars {
			check(v.e)
		}
		for _, c := range set.constants {
			check(c.value)
		}
		for _, g := range set.gen {
			checkGen(g)
		}
	}
	p.checkParamsUsed(s)
}

// yamlError positions a YAML syntax error, whose message reads
// "yaml: line N: msg". The YAML decoder's own depth limit carries no line;
// that error is placed where the flow brackets first nest past MaxDepth.
func yamlError(name string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.Contains(msg, "exceeded max depth") {
		line, col := deepBracket(data)
		return &Error{Pos: token.Position{Filename: name, Line: line, Column: col}, Msg: fmt.Sprintf("spec nests deeper than %d levels", MaxDepth)}
	}
	line := 1
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if v, err := strconv.Atoi(n); err == nil {
				line, msg = v, after
			}
		}
	}
	return &Error{Pos: token.Position{Filename: name, Line: line, Column: 1}, Msg: msg}
}

// deepBracket returns the line and column of the first flow bracket that
// opens a level deeper than MaxDepth, counting brackets outside quotes and
// comments, or 1, 1 when there is none.
func deepBracket(data []byte) (line, col int) {
	line, col = 1, 0
	depth := 0
	var quote byte
	comment := false
	for _, c := range data {
		col++
		switch {
		case c == '\n':
			line, col, comment = line+1, 0, false
		case comment:
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			comment = true
		case c == '[' || c == '{':
			depth++
			if depth > MaxDepth {
				return line, col
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return 1, 1
}

// DefineNames returns every macro name the spec may define for a build
// (its own defines, its stages' and its sets'), sorted: the names a
// build's command line may carry beyond the translation's predefined ones.
func (s *Spec) DefineNames() []string {
	seen := map[string]bool{}
	add := func(ds []define) {
		for _, d := range ds {
			seen[d.name] = true
		}
	}
	add(s.defines)
	for _, st := range s.Stages {
		add(st.defines)
	}
	for _, set := range s.Sets {
		add(set.defines)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
