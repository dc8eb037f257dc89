package unroll_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/unroll"
	"metalab/variants"
)

// simulate runs a loop header `int i = S; i OP B; i += D` (or -=, ++, --)
// in Go, independently of msl's evaluator, and returns the values i takes
// (nil when more than limit).
func simulate(start int64, op string, bound, step int64, limit int) []int64 {
	var out []int64
	for i := start; ; i += step {
		ok := false
		switch op {
		case "<":
			ok = i < bound
		case "<=":
			ok = i <= bound
		case ">":
			ok = i > bound
		case ">=":
			ok = i >= bound
		case "!=":
			ok = i != bound
		}
		if !ok {
			return out
		}
		out = append(out, i)
		if len(out) > limit {
			return nil
		}
	}
}

var header = regexp.MustCompile(`for \(int i = (-?\d+); i (<=|>=|<|>|!=) (-?\d+); (i \+= (\d+)|i -= (\d+)|i\+\+|i--)\)`)

// parseHeader reads back a header of the form the test and by-k write.
func parseHeader(t *testing.T, src string) (int64, string, int64, int64) {
	t.Helper()
	m := header.FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("no loop header in\n%s", src)
	}
	start, _ := strconv.ParseInt(m[1], 10, 64)
	bound, _ := strconv.ParseInt(m[3], 10, 64)
	step := int64(1)
	switch {
	case m[5] != "":
		step, _ = strconv.ParseInt(m[5], 10, 64)
	case m[6] != "":
		step, _ = strconv.ParseInt(m[6], 10, 64)
		step = -step
	case m[4] == "i--":
		step = -1
	}
	return start, m[2], bound, step
}

// TestPartialDivides lists the sites of loops of many trip counts, starts,
// comparisons and steps, and checks every partial unroll against a
// simulation of the loops: by-k is offered exactly when k divides the trip
// count and the loop runs more than k times, and the unrolled loop, whose
// copies run i, i + step, ..., i + (k-1) step, runs exactly the original
// loop's values, in order.
func TestPartialDivides(t *testing.T) {
	type shape struct {
		start int64
		op    string
		bound int64
		post  string
		step  int64
	}
	var shapes []shape
	for _, s := range []int64{0, 1, 3, -5} {
		for trips := int64(0); trips <= 17; trips++ {
			for _, d := range []int64{1, 2, 3} {
				post := fmt.Sprintf("i += %d", d)
				if d == 1 {
					post = "i++"
				}
				shapes = append(shapes,
					shape{s, "<", s + trips*d, post, d},
					shape{s, "<=", s + trips*d - 1, post, d},
					shape{s, "!=", s + trips*d, post, d})
				dpost := fmt.Sprintf("i -= %d", d)
				if d == 1 {
					dpost = "i--"
				}
				shapes = append(shapes,
					shape{s, ">", s - trips*d, dpost, -d},
					shape{s, ">=", s - trips*d + 1, dpost, -d})
			}
		}
	}
	for _, sh := range shapes {
		src := fmt.Sprintf("kernel void k(device float *out [[buffer(0)]]) {\n    for (int i = %d; i %s %d; %s) {\n        out[i + 64] = 1.0f;\n    }\n}\n", sh.start, sh.op, sh.bound, sh.post)
		want := simulate(sh.start, sh.op, sh.bound, sh.step, 1000)
		if want == nil {
			continue // != loops that never meet their bound
		}
		f, err := msl.Parse("k.metal", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		found, skips, err := mutate.FindAll(f, []*mutate.Mutation{unroll.Mutation}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, fs := range found {
			names = append(names, fs.ChoiceNames()...)
		}
		n := int64(len(want))
		for _, k := range []int64{2, 4} {
			offered := slices.Contains(names, fmt.Sprintf("by%d", k))
			if should := n > k && n%k == 0; offered != should {
				var why []string
				for _, s := range skips {
					why = append(why, s.Reason)
				}
				t.Errorf("%s: %d iterations: by%d offered %v, want %v (skips %q)", header.FindString(src), n, k, offered, should, why)
			}
		}
		for _, fs := range found {
			for _, c := range fs.ChoiceNames() {
				k, err := strconv.ParseInt(c[len("by"):], 10, 64)
				if c == "full" || err != nil {
					continue
				}
				v, err := variants.Build(f, found, []mutate.SiteRef{fs.Ref(c)})
				if err != nil {
					t.Fatal(err)
				}
				s0, op, b, step := parseHeader(t, string(v.Source))
				if step != sh.step*k {
					t.Errorf("%s %s: step %d, want %d", header.FindString(src), c, step, sh.step*k)
				}
				var got []int64
				for _, i := range simulate(s0, op, b, step, 1000) {
					for j := int64(0); j < k; j++ {
						got = append(got, i+j*sh.step)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %s: the unrolled loop runs %v, the loop %v", header.FindString(src), c, got, want)
				}
			}
		}
	}
}
