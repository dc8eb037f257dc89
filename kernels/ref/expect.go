package ref

import (
	"fmt"
	"math"
	"strings"
)

// An Expect is a reference result: for every output element the exact value
// and the largest error a correct kernel can make.
type Expect struct {
	Want  []float64
	Bound []float64 // |got - want| <= Bound[i]; 0 asks for equality
}

func newExpect(n int) *Expect {
	return &Expect{Want: make([]float64, n), Bound: make([]float64, n)}
}

// Match reports whether got is an acceptable value for element i: a NaN or
// infinite Want must be matched exactly (NaN by any NaN), anything else
// must be finite and within Bound[i]. Signed zeros compare equal.
func (e *Expect) Match(i int, got float64) bool {
	w := e.Want[i]
	switch {
	case math.IsNaN(w):
		return math.IsNaN(got)
	case math.IsInf(w, 0):
		return got == w
	case math.IsNaN(got) || math.IsInf(got, 0):
		return false
	}
	return math.Abs(got-w) <= e.Bound[i]
}

// A Mismatch reports the elements of an output that are outside their bounds.
type Mismatch struct {
	Buffer string
	Count  int   // elements outside their bounds
	Total  int   // elements compared
	First  []int // indices of the first few, ascending
	Got    []float64
	Want   []float64
	Bound  []float64
}

func (m *Mismatch) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d of %d elements outside their bounds", m.Buffer, m.Count, m.Total)
	for k, i := range m.First {
		fmt.Fprintf(&b, "; [%d] got %g want %g ± %.3g", i, m.Got[k], m.Want[k], m.Bound[k])
	}
	return b.String()
}

// Check compares got with e element by element and returns a *Mismatch
// describing the first few failures, or nil. A length difference is an
// error too.
func (e *Expect) Check(name string, got []float64) error {
	if len(got) != len(e.Want) {
		return fmt.Errorf("%s: %d elements, want %d", name, len(got), len(e.Want))
	}
	var m *Mismatch
	for i, g := range got {
		if e.Match(i, g) {
			continue
		}
		if m == nil {
			m = &Mismatch{Buffer: name, Total: len(got)}
		}
		m.Count++
		if len(m.First) < 5 {
			m.First = append(m.First, i)
			m.Got = append(m.Got, g)
			m.Want = append(m.Want, e.Want[i])
			m.Bound = append(m.Bound, e.Bound[i])
		}
	}
	if m != nil {
		return m
	}
	return nil
}

// halfBound widens a float32 bound b on a value w into the bound on the
// fp16 rounding of that value.
func halfBound(w, b float64) float64 {
	return halfRel*(math.Abs(w)+b) + b + halfTiny
}
