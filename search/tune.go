package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"metalab/backend"
	"metalab/internal/edit"
	"metalab/patches"
	"metalab/spec"
	"metalab/variants"
)

// Tunable parameters. A spec's tune: section gives parameters whose
// values the spec's defines, geometry, constants and buffer sizes may
// read; the baseline runs at their defaults. A candidate is a source (the
// baseline's, an edit variant's or a hand-written file's) at a point: its
// checks run under the spec at that point (check.Variant.Spec) and it is
// compared with the baseline at the default point on every case, its
// threadgroup memory judged at its own point. A candidate at a point other
// than the default is keyed by its source's and its point's hash
// together, named with "@" and the point, and recorded with a "point:"
// ref, so resuming finds it again.

// PointRefPrefix starts the ref that records a candidate's point.
const PointRefPrefix = "point:"

// pointSuffix is the part of a variant's name that says its point:
// "@NSG=2,TILE=64".
func pointSuffix(pt spec.Point) string {
	return "@" + strings.ReplaceAll(pt.String(), " ", ",")
}

// pointKey is the store's key of source (its sha256) at point pt.
func pointKey(sourceSHA string, pt spec.Point) string {
	return sha([]byte(sourceSHA + "\x00point\x00" + pt.String()))
}

// atPoint returns v at point pt (v itself for the empty point), and
// remembers the point of the variant it returns.
func (s *Space) atPoint(v *variants.Variant, pt spec.Point) *variants.Variant {
	if len(pt) == 0 {
		return v
	}
	w := *v
	w.Name = v.Name + pointSuffix(pt)
	w.Sha256 = pointKey(v.Sha256, pt)
	if s.pointOf == nil {
		s.pointOf = map[string]spec.Point{}
	}
	s.pointOf[w.Sha256] = pt
	return &w
}

// PointOf returns the point the variant of sha256 runs at: nil for the
// spec's default.
func (s *Space) PointOf(sum string) spec.Point { return s.pointOf[sum] }

// baseVariant is the baseline's source as a candidate (at a point only).
func (s *Space) baseVariant() *variants.Variant {
	return &variants.Variant{Name: "point", Source: s.File.Src, Sha256: sha(s.File.Src), BasePath: s.File.Name, BaseSha256: sha(s.File.Src)}
}

// parsePoints reads the plan's points.
func (s *Space) parsePoints(p *Plan) error {
	s.Points = nil
	for _, text := range p.Search.Points {
		pt, err := spec.ParsePoint(text)
		if err != nil {
			return fmt.Errorf("plan point %q: %w", text, err)
		}
		s.Points = append(s.Points, pt)
	}
	if p.Search.Point != "" {
		pt, err := spec.ParsePoint(p.Search.Point)
		if err != nil {
			return fmt.Errorf("plan point %q: %w", p.Search.Point, err)
		}
		s.Fixed = pt
	}
	return nil
}

// splitPointRef returns refs without their point ref, and the point.
func splitPointRef(refs []string) ([]string, spec.Point, error) {
	var out []string
	var pt spec.Point
	for _, r := range refs {
		if text, ok := strings.CutPrefix(r, PointRefPrefix); ok {
			q, err := spec.ParsePoint(text)
			if err != nil {
				return nil, nil, fmt.Errorf("ref %s: %w", r, err)
			}
			pt = q
			continue
		}
		out = append(out, r)
	}
	return out, pt, nil
}

// points tries every point of the plan on the baseline's source, on
// every hand-written variant's and on every edit variant's that passed its
// checks (every one built, in a sharded sweep): sources x points (grid and
// random: the plan fixed which points when it was made).
func (x *explorer) points(ctx context.Context) error {
	srcs := []candidate{{v: x.sp.baseVariant()}}
	for i := range x.sp.Files {
		srcs = append(srcs, candidate{v: x.sp.Files[i].Variant, file: &x.sp.Files[i]})
	}
	for _, e := range x.edits {
		if x.shard.Count > 1 || e.o.Passed {
			srcs = append(srcs, candidate{atoms: e.atoms, v: e.v})
		}
	}
	for _, pt := range x.sp.Points {
		for _, src := range srcs {
			c := src
			c.v, c.point = x.sp.atPoint(src.v, pt), pt
			if _, err := x.tryCandidate(ctx, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// pointCount is how many candidates points tries on the baseline's and
// the hand-written variants' sources (edit variants add theirs, not
// known in advance).
func (x *explorer) pointCount() int { return len(x.sp.Points) * (1 + len(x.sp.Files)) }

// PlanPoints returns the points a parameter strategy tries on s: every
// point the restrictions allow but the default (grid), or samples of them
// drawn by seed and kept in grid order (random).
func PlanPoints(s *spec.Spec, strategy string, samples int, seed uint64) ([]string, error) {
	if len(s.Params()) == 0 {
		return nil, fmt.Errorf("the %s strategy searches tunable parameters, and %s has no tune: section", strategy, s.Path)
	}
	all, err := s.Points()
	if err != nil {
		return nil, err
	}
	def := s.DefaultPoint()
	var pts []spec.Point
	for _, p := range all {
		if !p.Equal(def) {
			pts = append(pts, p)
		}
	}
	if strategyOf(strategy).Samples && samples < len(pts) {
		r := rand.NewPCG(seed, 0x7475_6e65) // "tune"
		idx := make([]int, len(pts))
		for i := range idx {
			idx[i] = i
		}
		for i := len(idx) - 1; i > 0; i-- {
			j := int(r.Uint64() % uint64(i+1))
			idx[i], idx[j] = idx[j], idx[i]
		}
		idx = idx[:samples]
		slices.Sort(idx)
		var drawn []spec.Point
		for _, i := range idx {
			drawn = append(drawn, pts[i])
		}
		pts = drawn
	}
	var out []string
	for _, p := range pts {
		out = append(out, p.String())
	}
	return out, nil
}

// FixedPoint completes text (--point NSG=4) on s and checks the
// restrictions allow it; the default point is "".
func FixedPoint(s *spec.Spec, text string) (string, error) {
	if text == "" {
		return "", nil
	}
	if len(s.Params()) == 0 {
		return "", fmt.Errorf("--point %s: %s has no tune: section", text, s.Path)
	}
	p, err := spec.ParsePoint(text)
	if err != nil {
		return "", fmt.Errorf("--point: %w", err)
	}
	p, err = s.Complete(p)
	if err != nil {
		return "", fmt.Errorf("--point %s: %w", text, err)
	}
	ok, err := s.Allowed(p)
	if err != nil {
		return "", fmt.Errorf("--point %s: %w", text, err)
	}
	if !ok {
		return "", fmt.Errorf("--point %s: the spec's restrictions do not allow it", p)
	}
	if p.Equal(s.DefaultPoint()) {
		return "", nil
	}
	return p.String(), nil
}

// A pointChange is what a retained variant at a point other than the
// default changes besides its source: the #defines the patch edits, and
// the host-side values the patch cannot change.
type pointChange struct {
	edits []edit.Edit
	host  []string
}

// changeAt works out the change of the baseline s (its default point) to
// point pt for a variant of source text: a parameter that some define
// of the spec carries (Spec.DefineParams) and whose #define the source
// holds becomes an edit of that #define; a parameter that is not, and
// any stage geometry the point changes at case in, is a host-side note.
func changeAt(s *spec.Spec, in, pin *spec.Instance, text []byte, pt spec.Point, kernel string) (pointChange, error) {
	var ch pointChange
	def := s.DefaultPoint()
	defs := s.DefineParams()
	for _, st := range pt {
		old, _ := def.Value(st.Name)
		if old == st.Value {
			continue
		}
		if name, ok := defs[st.Name]; ok {
			e, err := patches.DefineEdit(text, name, fmt.Sprint(st.Value))
			switch {
			case err == nil:
				ch.edits = append(ch.edits, e)
				if d, _ := patches.FindDefine(text, name); d != nil && d.Guarded {
					ch.host = append(ch.host, fmt.Sprintf("the spec passes %s to the compiler (its defines:), which overrides the #define's default: pass %d there too, or stop passing it", name, st.Value))
				}
				continue
			case !errors.Is(err, patches.ErrNoDefine):
				return ch, err
			}
			ch.host = append(ch.host, fmt.Sprintf("set %s from %d to %d (tune parameter %s: the define %s has no #define in %s, so the host passes it)", name, old, st.Value, st.Name, name, filepath.Base(kernel)))
			continue
		}
		ch.host = append(ch.host, fmt.Sprintf("set %s from %d to %d (tune parameter %s, read by the host's values in the spec, not by a #define of %s)", st.Name, old, st.Value, st.Name, filepath.Base(kernel)))
	}
	if in != nil && pin != nil {
		for i, a := range in.Stages {
			if i >= len(pin.Stages) {
				break
			}
			b := pin.Stages[i]
			if a.Threads != b.Threads {
				ch.host = append(ch.host, fmt.Sprintf("dispatch %s with %v threads per threadgroup, not %v (at %s)", a.Entry, dims(b.Threads), dims(a.Threads), caseName(in)))
			}
			if a.Threadgroups != b.Threadgroups {
				ch.host = append(ch.host, fmt.Sprintf("dispatch %s with %v threadgroups, not %v (at %s)", a.Entry, dims(b.Threadgroups), dims(a.Threadgroups), caseName(in)))
			}
		}
	}
	return ch, nil
}

func dims(d backend.Dim3) string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// hostFile is the file beside a variant's patch that names the host-side
// values to change with it, one a line.
func hostFile(name string) string { return filepath.Join(PatchesDir, fileName(name)+".host.txt") }

// readHostNotes reads the host-side notes of variant name in dir.
func readHostNotes(dir, name string) []string {
	b, err := os.ReadFile(filepath.Join(dir, hostFile(name)))
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
