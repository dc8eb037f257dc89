package check

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"metalab/internal/f16"
	"metalab/spec"
)

// Parity rules. The default, and the rule of every comparison that is not
// a variant's outputs against the baseline's (determinism, the builds
// against each other, thread orders), is bitwise: every output byte
// equal. A tolerance rule (Options.Parity, opt-in) admits a variant whose
// floating-point outputs differ from the baseline's by a bounded amount,
// as reassociated arithmetic does; its results say "not bitwise" and by
// how much (Result.Tolerance).
//
// Under a tolerance rule an output element is compared component by
// component by the buffer's element type from the spec:
//
//   - float, half and bfloat components (scalars, vectors, struct members)
//     are within the rule when both are NaN (any payload), or both are
//     finite and within it: ulp=N counts the representable values of the
//     component's type between them (at most N), rel=X takes
//     |got-want| / max(|got|, |want|) (at most X; 0 when both are zero).
//     +0 and -0 are 0 ulp apart. A NaN against a number, an infinity
//     against anything but the same infinity, are outside every rule.
//   - integer and bool components, a buffer's slack bytes and every input
//     buffer are compared bitwise; padding bytes are not compared under
//     any rule (see Compare).
type ParityMode int

const (
	ParityBitwise ParityMode = iota // every byte equal (the zero Parity)
	ParityULP                       // float components within Parity.ULP units in the last place
	ParityRel                       // float components within relative error Parity.Rel
)

// MaxParityULP is the largest N of ulp=N: the distance between any two
// finite floats is below it.
const MaxParityULP = 1 << 32

// A Parity is the rule a variant's outputs are compared with the
// baseline's by. The zero Parity is bitwise.
type Parity struct {
	Mode ParityMode
	ULP  uint64  // ParityULP: the most units in the last place a component may differ by
	Rel  float64 // ParityRel: the largest relative error a component may have
}

// A ParityError is a parity rule that does not parse; Col is the 1-based
// column in Text where it goes wrong.
type ParityError struct {
	Text string
	Col  int
	Msg  string
}

func (e *ParityError) Error() string {
	return fmt.Sprintf("parity rule %q, column %d: %s", e.Text, e.Col, e.Msg)
}

const parityWant = "want bitwise (the default), ulp=N (float outputs within N units in the last place) or rel=X (within relative error X, e.g. rel=1e-6)"

// ParseParity parses a parity rule: "bitwise" (or ""), "ulp=N" with N a
// whole number from 0 to MaxParityULP, or "rel=X" with X a number from 0
// to 1.
func ParseParity(s string) (Parity, error) {
	perr := func(col int, format string, args ...any) (Parity, error) {
		return Parity{}, &ParityError{Text: s, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	if s == "" || s == "bitwise" {
		return Parity{}, nil
	}
	key, val, ok := strings.Cut(s, "=")
	if !ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "ulp", "ulps":
			return perr(len(s)+1, "ulp needs a count: ulp=N, e.g. ulp=4")
		case "rel":
			return perr(len(s)+1, "rel needs a bound: rel=X, e.g. rel=1e-6")
		case "bitwise", "exact", "bit", "bits":
			return perr(1, "%s", parityWant)
		}
		if i := strings.IndexAny(s, ":, "); i >= 0 {
			return perr(i+1, "%q: the rule and its value are joined by '=' (%s)", s[i], parityWant)
		}
		return perr(1, "unknown rule %q (%s)", s, parityWant)
	}
	vcol := len(key) + 2
	switch key {
	case "ulp":
		if val == "" {
			return perr(vcol, "ulp= needs a count, e.g. ulp=4")
		}
		n, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			if _, ferr := strconv.ParseFloat(val, 64); ferr == nil && !strings.HasPrefix(val, "-") {
				return perr(vcol, "%q: ulp counts whole units in the last place (want a whole number from 0 to %d)", val, uint64(MaxParityULP))
			}
			return perr(vcol, "%q is not a count (want a whole number from 0 to %d)", val, uint64(MaxParityULP))
		}
		if n > MaxParityULP {
			return perr(vcol, "%d ulp is more than any two floats are apart (want at most %d)", n, uint64(MaxParityULP))
		}
		return Parity{Mode: ParityULP, ULP: n}, nil
	case "rel":
		if val == "" {
			return perr(vcol, "rel= needs a bound, e.g. rel=1e-6")
		}
		x, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return perr(vcol, "%q is not a number (want a relative error from 0 to 1, e.g. 1e-6)", val)
		}
		if math.IsNaN(x) || x < 0 || x > 1 {
			return perr(vcol, "%s: want a relative error from 0 to 1 (1 admits any two numbers of one sign)", val)
		}
		return Parity{Mode: ParityRel, Rel: x}, nil
	case "ulps", "ULP", "Ulp":
		return perr(1, "unknown rule %q: did you mean ulp=%s?", key, val)
	case "REL", "Rel", "relative", "rtol":
		return perr(1, "unknown rule %q: did you mean rel=%s?", key, val)
	}
	return perr(1, "unknown rule %q (%s)", key, parityWant)
}

// Bitwise reports whether p is the bitwise rule.
func (p Parity) Bitwise() bool { return p.Mode == ParityBitwise }

// String formats p as ParseParity reads it.
func (p Parity) String() string {
	switch p.Mode {
	case ParityULP:
		return "ulp=" + strconv.FormatUint(p.ULP, 10)
	case ParityRel:
		return "rel=" + strconv.FormatFloat(p.Rel, 'g', -1, 64)
	}
	return "bitwise"
}

// MarshalText writes p as String does.
func (p Parity) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads p as ParseParity does.
func (p *Parity) UnmarshalText(b []byte) error {
	q, err := ParseParity(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// A Tolerance is how the outputs of a result judged under a tolerance
// rule compare with the baseline's: bitwise after all, or not bitwise and
// by how much. Where and the element values locate the largest deviation
// by the rule's own measure (ulp for ulp=N, relative error for rel=X).
type Tolerance struct {
	Rule    string `json:"rule"`    // the parity rule, as ParseParity reads it
	Bitwise bool   `json:"bitwise"` // every compared byte was equal: the rule was not needed
	// MaxULP and MaxRel are the largest deviations of a float component
	// within the rule, over every compared case.
	MaxULP uint64  `json:"max_ulp"`
	MaxRel float64 `json:"max_rel"`
	// Differing counts the elements that are not bitwise equal (within
	// the rule), over every compared case; Cases the cases with any.
	Differing int `json:"differing"`
	Cases     int `json:"cases"`
	// The largest deviation: case, buffer, element (and coordinates),
	// the baseline's and the variant's values.
	Case    string `json:"case,omitempty"`
	Buffer  string `json:"buffer,omitempty"`
	Element int    `json:"element"`
	Coords  []int  `json:"coords,omitempty"`
	Want    string `json:"want,omitempty"`
	Got     string `json:"got,omitempty"`
}

// Text is t in a few words, for a report's row: "bitwise (ulp=4 not
// needed)" or "not bitwise (ulp=4): max 3 ulp, rel 2.4e-07 at quick/N=64 out[5]".
func (t *Tolerance) Text() string {
	if t == nil {
		return "bitwise"
	}
	if t.Bitwise {
		return "bitwise (" + t.Rule + " not needed)"
	}
	return fmt.Sprintf("not bitwise (%s): max %d ulp, rel %.2g at %s %s%v", t.Rule, t.MaxULP, t.MaxRel, t.Case, t.Buffer, t.Coords)
}

// measure is the deviation that decides the rule: ulp or relative error.
func (p Parity) measure(ulp uint64, rel float64) float64 {
	if p.Mode == ParityRel {
		return rel
	}
	return float64(ulp)
}

// add merges the deviation of one comparison (a case) into t.
func (t *Tolerance) add(p Parity, d *Tolerance) {
	if d == nil || d.Bitwise {
		return
	}
	if t.Bitwise || p.measure(d.MaxULP, d.MaxRel) > p.measure(t.MaxULP, t.MaxRel) || t.Case == "" {
		t.Case, t.Buffer, t.Element, t.Coords, t.Want, t.Got = d.Case, d.Buffer, d.Element, d.Coords, d.Want, d.Got
	}
	t.Bitwise = false
	t.MaxULP = max(t.MaxULP, d.MaxULP)
	t.MaxRel = max(t.MaxRel, d.MaxRel)
	t.Differing += d.Differing
	t.Cases += d.Cases
}

// newTolerance is the Tolerance of no comparison yet: bitwise.
func newTolerance(p Parity) *Tolerance {
	return &Tolerance{Rule: p.String(), Bitwise: true, Element: -1}
}

// CompareParity compares the device buffers of in between want and got
// under p. With the bitwise rule it is Compare, and the Tolerance is nil.
// Under a tolerance rule the Mismatch is the first element outside the
// rule (or any other byte that differs: see ParityMode), its Msg saying
// by how much, and the Tolerance measures the elements that differ within
// the rule (Bitwise when none does).
func CompareParity(in *spec.Instance, want, got map[string][]byte, p Parity) (*Mismatch, *Tolerance) {
	if p.Bitwise() {
		return Compare(in, want, got), nil
	}
	tol := newTolerance(p)
	var first *Mismatch
	name := caseName(in)
	eachDiffering(in, want, got, func(b *spec.Buffer, w, g []byte, _ []bool) {
		if first != nil {
			// The tolerance of buffers after a failing one still counts,
			// but only the first failing buffer is described.
			if m := compareBuffer(name, b, w, g, p, tol); m != nil {
				first.Others = append(first.Others, b.Name)
			}
			return
		}
		first = compareBuffer(name, b, w, g, p, tol)
	})
	if tol.Differing > 0 {
		tol.Bitwise, tol.Cases = false, 1
	}
	return first, tol
}

// compareBuffer compares one buffer under tolerance rule p, adding the
// elements within the rule to tol, and returns the mismatch of the
// elements outside it, or nil.
func compareBuffer(caseName string, b *spec.Buffer, w, g []byte, p Parity, tol *Tolerance) *Mismatch {
	m := &Mismatch{Case: caseName, Buffer: b.Name, Type: b.Type.Name, Elements: b.Count, Element: -1}
	size := b.Type.Size
	if len(w) != len(g) {
		m.Msg = fmt.Sprintf("length %d bytes, want %d", len(g), len(w))
	}
	n := min(len(w), len(g))
	elems := min(n, b.Count*size)
	tolerant := b.Output() // inputs are compared bitwise: a variant must not write them
	pad := paddingOf(b.Type)
	for e := 0; e*size < n; e++ {
		lo, hi := e*size, min((e+1)*size, n)
		if bytes.Equal(w[lo:hi], g[lo:hi]) || (pad != nil && e < b.Count && hi-lo == size && equalMasked(pad, w[lo:hi], g[lo:hi])) {
			continue
		}
		ok, ulp, rel := false, uint64(0), 0.0
		if tolerant && hi <= elems {
			ok, ulp, rel = p.element(b.Type, w[lo:hi], g[lo:hi])
		}
		if ok {
			tol.Differing++
			if tol.Case == "" || p.measure(ulp, rel) > p.measure(tol.MaxULP, tol.MaxRel) {
				tol.Case, tol.Buffer, tol.Element, tol.Coords = caseName, b.Name, e, b.Coords(e)
				tol.Want, tol.Got = spec.FormatElement(b.Type, w[lo:hi]), spec.FormatElement(b.Type, g[lo:hi])
			}
			tol.MaxULP, tol.MaxRel = max(tol.MaxULP, ulp), max(tol.MaxRel, rel)
			continue
		}
		m.Differing++
		if m.Element < 0 {
			m.Element = e
			if e < b.Count {
				m.Coords = b.Coords(e)
			}
			m.Want = spec.FormatElement(b.Type, w[lo:hi])
			m.Got = spec.FormatElement(b.Type, g[lo:hi])
		}
	}
	if m.Differing == 0 && m.Msg == "" {
		return nil
	}
	if e := m.Element; e >= 0 {
		var why string
		switch {
		case !tolerant:
			why = "an input buffer is compared bitwise under every rule"
		case e >= b.Count:
			why = "slack bytes are compared bitwise under every rule"
		default:
			lo, hi := e*size, min((e+1)*size, n)
			why = fmt.Sprintf("outside %s: the first %s", p, deviationText(b.Type, w[lo:hi], g[lo:hi]))
		}
		if m.Msg != "" {
			m.Msg += "; "
		}
		m.Msg += why
	}
	return m
}

// deviationText says how far apart one element's values are, for a
// mismatch under a tolerance rule.
func deviationText(t *spec.Type, w, g []byte) string {
	_, ulp, rel, kind := elementDeviation(t, w, g)
	switch kind {
	case devFloat:
		return fmt.Sprintf("is %d ulp apart, relative error %.3g", ulp, rel)
	case devInteger:
		return "differs in an integer component, compared bitwise under every rule"
	case devNaN:
		return "is a NaN against a number"
	case devInf:
		return "is an infinity against another value"
	}
	return "differs"
}

// element reports whether two elements of type t are within p, with the
// largest ulp distance and relative error of their float components.
func (p Parity) element(t *spec.Type, w, g []byte) (bool, uint64, float64) {
	_, ulp, rel, kind := elementDeviation(t, w, g)
	if kind != devFloat {
		return false, ulp, rel
	}
	switch p.Mode {
	case ParityULP:
		return ulp <= p.ULP, ulp, rel
	case ParityRel:
		return rel <= p.Rel, ulp, rel
	}
	return false, ulp, rel
}

// A deviation kind says why two elements differ.
type devKind int

const (
	devNone    devKind = iota // equal bytes
	devFloat                  // only float components differ, each by a finite amount (or both NaN)
	devInteger                // an integer or bool component, or padding, differs
	devNaN                    // a NaN against a number
	devInf                    // an infinity against another value
)

// elementDeviation compares two elements of type t component by
// component: the largest ulp distance and relative error of the float
// components, and the worst kind of difference.
func elementDeviation(t *spec.Type, w, g []byte) (bool, uint64, float64, devKind) {
	var ulp uint64
	var rel float64
	kind := devNone
	worse := func(k devKind) {
		if k > kind {
			kind = k
		}
	}
	eachLeaf(t, 0, func(t *spec.Type, off int) {
		n := t.Size / max(t.Lanes, 1)
		if t.Lanes > 0 {
			if k, ok := scalarSize(t.Scalar); ok {
				n = k
			}
		}
		for l := range t.Lanes {
			lo, hi := off+l*n, off+(l+1)*n
			if hi > len(w) || hi > len(g) {
				worse(devInteger)
				return
			}
			if bytes.Equal(w[lo:hi], g[lo:hi]) {
				continue
			}
			u, r, k := componentDeviation(t.Scalar, w[lo:hi], g[lo:hi])
			ulp, rel = max(ulp, u), max(rel, r)
			worse(k)
		}
	})
	if len(w) != len(g) {
		worse(devInteger)
	}
	// Bytes no member covers are padding: not compared (see Compare).
	return kind == devNone, ulp, rel, kind
}

func scalarSize(s string) (int, bool) {
	switch s {
	case "bool", "char", "uchar":
		return 1, true
	case "short", "ushort", "half", "bfloat":
		return 2, true
	case "int", "uint", "float":
		return 4, true
	case "long", "ulong":
		return 8, true
	}
	return 0, false
}

// componentDeviation compares two differing components of scalar type s.
func componentDeviation(s string, w, g []byte) (uint64, float64, devKind) {
	var ow, og int64 // the values' places in the order of the type's numbers
	var fw, fg float64
	var nanW, nanG, infW, infG bool
	switch s {
	case "float":
		bw, bg := binary.LittleEndian.Uint32(w), binary.LittleEndian.Uint32(g)
		ow, og = ordered(uint64(bw), 32), ordered(uint64(bg), 32)
		fw, fg = float64(math.Float32frombits(bw)), float64(math.Float32frombits(bg))
	case "half", "bfloat":
		bw, bg := binary.LittleEndian.Uint16(w), binary.LittleEndian.Uint16(g)
		ow, og = ordered(uint64(bw), 16), ordered(uint64(bg), 16)
		if s == "half" {
			fw, fg = f16.ToFloat64(bw), f16.ToFloat64(bg)
		} else {
			fw, fg = f16.BFloatToFloat64(bw), f16.BFloatToFloat64(bg)
		}
	default:
		return 0, 0, devInteger
	}
	nanW, nanG = math.IsNaN(fw), math.IsNaN(fg)
	infW, infG = math.IsInf(fw, 0), math.IsInf(fg, 0)
	switch {
	case nanW && nanG:
		return 0, 0, devFloat
	case nanW || nanG:
		return 0, 0, devNaN
	case infW || infG:
		return 0, 0, devInf
	}
	d := ow - og
	if d < 0 {
		d = -d
	}
	rel := 0.0
	if den := max(math.Abs(fw), math.Abs(fg)); den > 0 {
		rel = math.Abs(fg-fw) / den
	}
	return uint64(d), rel, devFloat
}

// ordered maps the bits of an IEEE binary float of the given width to its
// place among the type's numbers: consecutive numbers are 1 apart, +0 and
// -0 both 0.
func ordered(bits uint64, width uint) int64 {
	sign := uint64(1) << (width - 1)
	mag := int64(bits &^ sign)
	if bits&sign != 0 {
		return -mag
	}
	return mag
}
