package check_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"

	"metalab/backend"
	"metalab/check"
	edits "metalab/internal/edit"
	"metalab/spec"
)

// diffEdits returns edits that make text from base, as a mutation's
// would: a character diff's insertions and deletions, each an edit.
func diffEdits(base, text []byte) []edits.Edit {
	dmp := diffmatchpatch.New()
	var out []edits.Edit
	pos := 0
	for _, d := range dmp.DiffMain(string(base), string(text), false) {
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			pos += len(d.Text)
		case diffmatchpatch.DiffDelete:
			out = append(out, edits.Edit{Start: pos, End: pos + len(d.Text)})
			pos += len(d.Text)
		case diffmatchpatch.DiffInsert:
			out = append(out, edits.Edit{Start: pos, End: pos, New: d.Text})
		}
	}
	// An insertion right after a deletion at its end is one replacement.
	var merged []edits.Edit
	for _, e := range out {
		if n := len(merged); n > 0 && e.Start == e.End && merged[n-1].End == e.Start && merged[n-1].New == "" && merged[n-1].Start < merged[n-1].End {
			merged[n-1].New = e.New
			continue
		}
		merged = append(merged, e)
	}
	return merged
}

// A patternCase is a variant of a baseline kernel and what check must
// say of it.
type patternCase struct {
	name   string
	file   string // under kernels/examples/baseline/variants/; "" means edit the baseline
	old    string // with file "": the baseline text to replace
	new    string
	edits  bool                // pass the variant's edits (else lines are mapped by a line diff)
	status check.Status        // the verdict
	msg    []string            // what the message must say
	kind   backend.FindingKind // the failing finding's kind, when it fails for one
	change bool                // the failing finding is in code the variant changed
}

// TestBaselinePatterns checks the three baselines written like kernels
// projects ship with findings of their own (a threadgroup scratch array
// guarded by a mem_none barrier, every thread storing the same value to one
// output, a scan over slots it never wrote): each control passes with its
// one baseline finding of the pattern's kind; variants that keep the
// finding's code pass, with its lines mapped by a line diff and through
// edits; a new race, a removed guard, a new unwritten read, an unwritten
// read that reaches the output and a finding in code the variant changed
// fail; and --strict-baseline refuses each baseline.
func TestBaselinePatterns(t *testing.T) {
	b := cpuBackend(t)
	tests := []struct {
		spec     string
		kind     backend.FindingKind
		strict   check.Status
		variants []patternCase
	}{
		{"softmax_memnone.yaml", backend.FindMemNone, check.FailRace, []patternCase{
			{name: "shifted", file: "softmax_memnone_shifted.metal", status: check.Pass},
			{name: "shifted-edits", file: "softmax_memnone_shifted.metal", edits: true, status: check.Pass},
			{name: "race", file: "softmax_memnone_race.metal", status: check.FailRace, kind: backend.FindRace, msg: []string{"race on threadgroup array scratch"}},
			{name: "unguarded", file: "softmax_memnone_unguarded.metal", status: check.FailRace, kind: backend.FindRace,
				msg: []string{"race on threadgroup array scratch[0]", "the baseline orders this pair with an execution barrier"}},
		}},
		{"argmax_same.yaml", backend.FindSameValue, check.FailRace, []patternCase{
			{name: "shifted", file: "argmax_same_shifted.metal", status: check.Pass},
			{name: "race", file: "argmax_same_race.metal", status: check.FailRace, kind: backend.FindRace, msg: []string{"race on threadgroup array where[0]"}},
			{name: "store-changed", old: "idx[row] = where[0];", new: "idx[row] = where[0] | 0;", edits: true, status: check.FailRace,
				kind: backend.FindSameValue, change: true, msg: []string{"same-value-write", "in code the variant changed"}},
		}},
		{"scan_unwritten.yaml", backend.FindUnwrittenUnused, check.FailUninit, []patternCase{
			{name: "shifted", file: "scan_unwritten_shifted.metal", status: check.Pass},
			{name: "shifted-edits", file: "scan_unwritten_shifted.metal", edits: true, status: check.Pass},
			{name: "extra", file: "scan_unwritten_extra.metal", status: check.FailUninit, kind: backend.FindUnwrittenUnused, change: true,
				msg: []string{"unwritten read of threadgroup array slot", "reaches no output"}},
			{name: "short", file: "scan_unwritten_short.metal", status: check.FailUninit, kind: backend.FindUninit,
				msg: []string{"uninitialised read of threadgroup array slot", "the bytes it reads reach the output"}},
		}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.spec, ".yaml"), func(t *testing.T) {
			s, err := spec.Load(filepath.Join("..", "kernels", "examples", "baseline", tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			base, err := os.ReadFile(s.Source)
			if err != nil {
				t.Fatal(err)
			}
			var vs []check.Variant
			for _, pc := range tt.variants {
				var text []byte
				if pc.file != "" {
					text, err = os.ReadFile(filepath.Join(filepath.Dir(s.Source), "variants", pc.file))
					if err != nil {
						t.Fatal(err)
					}
				} else {
					text = edit(t, base, pc.old, pc.new)
				}
				v := check.Variant{Name: pc.name, Path: pc.name + ".metal", Text: text}
				if pc.edits {
					v.Edits = diffEdits(base, text)
					if got, err := edits.Apply(base, v.Edits); err != nil || !bytes.Equal(got, text) {
						t.Fatalf("%s: the edits do not give the variant (%v)", pc.name, err)
					}
				}
				vs = append(vs, v)
			}
			rep, err := check.Run(context.Background(), check.Options{Spec: s, Backend: b, Variants: vs, Timeout: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", &text)
			ctl := rep.Control
			if ctl.Status != check.Pass {
				t.Fatalf("control: %s %s, want pass with a baseline finding", ctl.Status, ctl.Msg)
			}
			if len(ctl.BaselineFindings) != 1 || ctl.BaselineFindings[0].Kind != tt.kind || !ctl.BaselineFindings[0].Baseline {
				t.Fatalf("baseline findings %+v, want one of kind %s", ctl.BaselineFindings, tt.kind)
			}
			if !strings.Contains(text.String(), "baseline findings: 1") {
				t.Errorf("the text report does not list the baseline finding")
			}
			for i, pc := range tt.variants {
				r := rep.Variants[i]
				if r.Status != pc.status {
					t.Errorf("%s: %s (%s), want %s", pc.name, r.Status, r.Msg, pc.status)
					continue
				}
				for _, m := range pc.msg {
					if !strings.Contains(r.Msg, m) {
						t.Errorf("%s: message %q does not say %q", pc.name, r.Msg, m)
					}
				}
				if pc.status == check.Pass {
					if !r.Verified || r.Verification.Status != check.Pass || r.Confirmation.Status != check.Pass {
						t.Errorf("%s: verified %v, parts %s/%s, want both passed", pc.name, r.Verified, r.Verification.Status, r.Confirmation.Status)
					}
					kept := false
					for _, c := range r.Cases {
						for _, f := range c.Findings {
							kept = kept || f.Baseline && f.Kind == tt.kind
							if !f.Baseline && !f.Warning {
								t.Errorf("%s: a passing variant with a new finding: %s", pc.name, f.Msg)
							}
						}
					}
					if !kept {
						t.Errorf("%s: no finding of the variant matched the baseline's %s", pc.name, tt.kind)
					}
					continue
				}
				if r.Stopped != check.PartVerification || r.Confirmation.Status != check.NotRun {
					t.Errorf("%s: stopped at %q, confirmation %s; want verification, not run", pc.name, r.Stopped, r.Confirmation.Status)
				}
				var first *check.Finding
				for _, c := range r.Cases {
					for k := range c.Findings {
						if f := &c.Findings[k]; first == nil && !f.Baseline && !f.Warning {
							first = f
						}
					}
				}
				if first == nil || first.Kind != pc.kind || first.Changed != pc.change {
					t.Errorf("%s: first new finding %+v, want kind %s, changed %v", pc.name, first, pc.kind, pc.change)
				}
			}
		})
		t.Run(strings.TrimSuffix(tt.spec, ".yaml")+"/strict-baseline", func(t *testing.T) {
			s, err := spec.Load(filepath.Join("..", "kernels", "examples", "baseline", tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := check.Run(context.Background(), check.Options{Spec: s, Backend: b, StrictBaseline: true, Sets: []string{"quick"}, Timeout: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if c := rep.Control; c.Status != tt.strict || !strings.Contains(c.Msg, string(tt.kind)) {
				t.Errorf("--strict-baseline: control %s %q, want %s naming %s", c.Status, c.Msg, tt.strict, tt.kind)
			}
		})
	}
}
