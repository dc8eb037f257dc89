package spec

import (
	"strings"
	"testing"
)

// TestArithmeticOverflow checks that integer arithmetic in a spec
// expression that leaves 64 bits is a positioned error, not a wrapped
// value ("negative count -4").
func TestArithmeticOverflow(t *testing.T) {
	for _, src := range []string{
		"9223372036854775807 * 4", "T * 4611686018427387904", "9223372036854775807 + T",
		"-9223372036854775807 - T", "-(-9223372036854775807 - 1)", "align(9223372036854775807, 64)",
		"ceil_div(9223372036854775807, 2)",
	} {
		e, err := compileExpr(src, tokenPos())
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		n, err := e.Int(map[string]any{"T": 4})
		if err == nil || !strings.HasPrefix(err.Error(), "t:1:1: ") || !strings.Contains(err.Error(), "overflow") {
			t.Errorf("%s = %d, %v; want a positioned overflow error", src, n, err)
		}
	}
	// What fits still evaluates, floats and mixed operands as before.
	for src, want := range map[string]float64{
		"9223372036854775807 - 1 + 1": 9223372036854775807, "-9223372036854775807 - 1": -9223372036854775808,
		"T * -2": -8, "-T": -4, "T * 0.5": 2, "1.5 + T": 5.5, "2 - 0.25": 1.75, "-(0.5)": -0.5,
		"3000000000 * 3000000000": 9e18,
	} {
		e, err := compileExpr(src, tokenPos())
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := e.Float(map[string]any{"T": 4})
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
}

// stageSpec is a one-stage spec with the given threadgroups, threads and
// sets.
func stageSpec(groups, threads, sets string) string {
	return "source: k.metal\nbuffers:\n  - {name: o, index: 0, type: float, count: 4, role: output}\n" +
		"stages:\n  - {entry: k, threadgroups: [" + groups + "], threads: [" + threads + "]}\nsets:\n" + sets
}

// TestDispatchLimits checks that a threadgroup or a grid too large for any
// backend is refused at the spec's text, with a position.
func TestDispatchLimits(t *testing.T) {
	for _, tt := range []struct{ groups, threads, want string }{
		{"1", "2048", `k.yaml:5:45: case s/T=4: threads 2048: 2048 threads per threadgroup, over Metal's 1024`},
		{"1", "32, 32, 2", `k.yaml:5:45: case s/T=4: threads 32x32x2: 2048 threads per threadgroup, over Metal's 1024`},
		{"65536, 65536, 65536", "4", `k.yaml:5:31: case s/T=4: threadgroups 65536x65536x65536: 281474976710656 threadgroups`},
		{"4294967295, 4294967295, 4294967295", "4", `k.yaml:5:31: case s/T=4: threadgroups x dimension "4294967295" = 4294967295 is over 2^31`},
		{"2147483648, 2147483648, 2147483648", "4", `k.yaml:5:31: case s/T=4: threadgroups 2147483648x2147483648x2147483648: `},
		{"1", "9223372036854775807 * 4", `k.yaml:5:45: case s/T=4: expression "9223372036854775807 * 4": integer overflow`},
	} {
		s, err := Parse("k.yaml", []byte(stageSpec(tt.groups, tt.threads, "  s:\n    cases: [{T: 4}]\n")))
		if err != nil {
			t.Fatalf("%s/%s: %v", tt.groups, tt.threads, err)
		}
		cs, _ := s.Cases()
		if _, err = s.Instantiate(cs[0]); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("threadgroups [%s], threads [%s]:\n got %v\nwant %s", tt.groups, tt.threads, err, tt.want)
		}
	}
	// At the limits, a case instantiates.
	s, err := Parse("k.yaml", []byte(stageSpec("1048576, 1048576", "32, 32", "  s:\n    cases: [{T: 4}]\n")))
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := s.Cases()
	if _, err := s.Instantiate(cs[0]); err != nil {
		t.Errorf("a dispatch at the limits: %v", err)
	}
}

// TestNoCases checks that a spec whose sets hold no case is a positioned
// error: it would check nothing and pass.
func TestNoCases(t *testing.T) {
	for sets, want := range map[string]string{
		"  {}\n":                "k.yaml:7:3: sets: want at least one case set",
		"  s:\n    cases: []\n": `k.yaml:8:5: set "s": want a non-empty list of cases`,
		"":                      "k.yaml:6:6: sets: want a mapping",
	} {
		if _, err := Parse("k.yaml", []byte(stageSpec("1", "4", sets))); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("sets %q: got %v, want %s", sets, err, want)
		}
	}
}

// TestCRLineEndings checks that a spec with CR-only line breaks reads as
// its LF form does, positions included.
func TestCRLineEndings(t *testing.T) {
	lf := stageSpec("1", "9223372036854775807 * 4", "  s:\n    cases: [{T: 4}]\n")
	for _, eol := range []string{"\r\n", "\r"} {
		s, err := Parse("k.yaml", []byte(strings.ReplaceAll(lf, "\n", eol)))
		if err != nil {
			t.Fatalf("%q: %v", eol, err)
		}
		cs, err := s.Cases()
		if err != nil || len(cs) != 1 {
			t.Fatalf("%q: cases %v, %v", eol, cs, err)
		}
		if _, err := s.Instantiate(cs[0]); err == nil || !strings.HasPrefix(err.Error(), "k.yaml:5:45: ") {
			t.Errorf("%q line breaks: got %v, want the error at k.yaml:5:45", eol, err)
		}
	}
}
