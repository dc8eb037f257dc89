package spec

import (
	"bytes"
	"strings"
	"testing"
)

// domainSpec is base with a domain for N and a second variable M.
const domainSpec = `source: k.metal
vars: {M: 2}
domains:
  N: {min: 1, max: 100}
  M: {min: 1, max: 64, le: N}
buffers:
  - {name: a, index: 0, type: float, count: N, role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: o, index: 1, type: float, count: N, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [N]}
sets:
  s:
    cases: [{N: 32}, {N: 64, M: 8}]
`

// TestDomainErrors checks that a domain with no valid value, one the
// listed cases contradict and a malformed one are refused at their line.
func TestDomainErrors(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"empty range", "N: {min: 1, max: 100}", "N: {min: 10, max: 5}", "k.yaml:4:6: domain \"N\": min 10 is above max 5: no valid value"},
		{"no multiple", "N: {min: 1, max: 100}", "N: {min: 1, max: 20, multiple_of: 32}", "k.yaml:4:6: domain \"N\": no valid value (none of [1, 20] is a multiple of 32)"},
		{"no listed value", "N: {min: 1, max: 100}", "N: {values: [3, 5], multiple_of: 2}", "no valid value"},
		{"case outside", "N: {min: 1, max: 100}", "N: {min: 1, max: 50}", "k.yaml:13:26: case s/N=64,M=8: N = 64 contradicts its domain (line 4): 64 is outside [1, 50]"},
		{"case not a multiple", "N: {min: 1, max: 100}", "N: {min: 1, max: 100, multiple_of: 3}", "k.yaml:13:17: case s/N=32: N = 32 contradicts its domain (line 4): 32 is not a multiple of 3"},
		{"relation", "cases: [{N: 32}, {N: 64, M: 8}]", "cases: [{N: 32}, {N: 4, M: 8}]", "k.yaml:13:32: case s/N=4,M=8: M = 8 contradicts its domain (line 5): 8 is outside [1, 4]"},
		{"spec var outside", "vars: {M: 2}", "vars: {M: 0}", "k.yaml:5:3: case s/N=32: M = 0 contradicts its domain (line 5): 0 is outside [1, 32]"},
		{"unknown relation", "le: N}", "le: K}", "k.yaml:5:28: domain \"M\": le \"K\": not a domain declared before this one"},
		{"unknown key", "N: {min: 1, max: 100}", "N: {min: 1, max: 100, step: 2}", "k.yaml:4:25: domain \"N\": unknown field \"step\""},
		{"no bounds", "N: {min: 1, max: 100}", "N: {min: 1}", "k.yaml:4:6: domain \"N\": want min and max, or values"},
		{"threads past the limit", "N: {min: 1, max: 100}", "N: {min: 1, max: 2048}", "k.yaml:4:3: domains: the largest case of set s (N=2048,M=64) is past a limit: k.yaml:10:45: threads 2048: 2048 threads per threadgroup, over Metal's 1024"},
		{"buffer past the limit", "N: {min: 1, max: 100}", "N: {min: 1, max: 1099511627776}", "is over the 4294967296-byte buffer limit"},
		{"draw_max above max", "N: {min: 1, max: 100}", "N: {min: 1, max: 100, draw_max: 200}", "draw_max 200: want a bound up to max 100"},
		{"not an integer", "N: {min: 1, max: 100}", "N: {min: one, max: 100}", "k.yaml:4:12: domain \"N\" min: want an integer, got \"one\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(domainSpec, tt.old, tt.new, 1)
			if src == domainSpec {
				t.Fatalf("%q not in the spec", tt.old)
			}
			_, err := Parse("k.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := Parse("k.yaml", []byte(domainSpec)); err != nil {
		t.Fatal(err)
	}
}

// TestDraw checks that drawn cases are deterministic in the seed, keep to
// every domain (the relation included), repeat no listed case, and have
// input seeds of their own; that another seed draws other cases.
func TestDraw(t *testing.T) {
	s, err := Parse("k.yaml", []byte(domainSpec))
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := s.Cases()
	a, b := s.Draw(7, 20, listed), s.Draw(7, 20, listed)
	if len(a) != 20 {
		t.Fatalf("drew %d cases, want 20", len(a))
	}
	other := s.Draw(8, 20, listed)
	same := 0
	for i := range a {
		if a[i].Token() != b[i].Token() {
			t.Fatalf("case %d: %s, then %s", i, a[i].Token(), b[i].Token())
		}
		if a[i].Token() == other[i].Token() {
			same++
		}
		if err := s.CheckCase(a[i]); err != nil {
			t.Errorf("drawn case outside its domains: %v", err)
		}
		if !a[i].HeldOut || a[i].Seed == 0 {
			t.Errorf("case %s: not marked held out or no seed", a[i].Name)
		}
		key := s.domainKey(a[i].Vars)
		for _, l := range listed {
			if s.domainKey(l.Vars) == key && key != "N=32;M=2;" {
				t.Errorf("drawn case %s repeats listed case %s", a[i].Name, l.Name)
			}
		}
		if _, err := s.Instantiate(a[i]); err != nil {
			t.Errorf("instantiate %s: %v", a[i].Name, err)
		}
	}
	if same == len(a) {
		t.Error("seeds 7 and 8 draw the same cases")
	}
	small, err := Parse("k.yaml", []byte(strings.Replace(domainSpec, "N: {min: 1, max: 100}", "N: {min: 1, max: 100, draw_max: 10}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range small.Draw(7, 20, listed) {
		if n := c.Vars[0].Value.(int); n > 10 {
			t.Errorf("drawn N = %d past draw_max 10", n)
		}
	}
}

// TestShrinkAndToken checks shrink candidates (smaller, valid, smallest
// first) and that a token gives the case back with the same bytes.
func TestShrinkAndToken(t *testing.T) {
	s, err := Parse("k.yaml", []byte(domainSpec))
	if err != nil {
		t.Fatal(err)
	}
	c := Case{Set: "s", Name: "heldout1:N=37,M=20", Vars: []Var{{Name: "N", Value: 37}, {Name: "M", Value: 20}}, Seed: 99, HeldOut: true}
	cands := s.Shrink(c)
	if len(cands) == 0 {
		t.Fatal("no shrink candidates")
	}
	if got := cands[0].Vars[0].Value; got != 20 {
		// N may not go below M = 20.
		t.Errorf("first candidate N = %v, want 20 (the smallest with M = 20)", got)
	}
	for _, cc := range cands {
		if err := s.CheckCase(cc); err != nil {
			t.Errorf("candidate %s: %v", cc.Name, err)
		}
		if cc.Seed != 99 {
			t.Errorf("candidate %s lost the seed", cc.Name)
		}
	}
	for _, cc := range []Case{c, cands[0], {Set: "a@b/c", Name: "x y@z", Vars: []Var{{Name: "N", Value: 3}, {Name: "F", Value: 0.5}, {Name: "B", Value: true}}, Seed: 1}} {
		got, err := ParseToken(cc.Token())
		if err != nil {
			t.Fatal(err)
		}
		if got.Token() != cc.Token() || got.Set != cc.Set || got.Name != cc.Name || got.Seed != cc.Seed {
			t.Errorf("token %s gives %+v", cc.Token(), got)
		}
	}
	in1, err := s.Instantiate(c)
	if err != nil {
		t.Fatal(err)
	}
	back, _ := ParseToken(c.Token())
	in2, err := s.Instantiate(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in1.Buffers[0].Data, in2.Buffers[0].Data) {
		t.Error("a replayed case has other input bytes")
	}
	fresh, _ := s.Instantiate(FreshSeed(c, 5))
	if bytes.Equal(in1.Buffers[0].Data, fresh.Buffers[0].Data) {
		t.Error("a fresh seed gives the same input bytes")
	}
	for _, bad := range []string{"nothing", "s/x@zz/N=1", "s/x@1/N", "/x@1/N=1"} {
		if _, err := ParseToken(bad); err == nil {
			t.Errorf("token %q accepted", bad)
		}
	}
}
