package property_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"metalab/backend/cpu/cputest"
	"metalab/check"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/dropbarrier"
	"metalab/spec"
	"metalab/variants"
)

// accessSpec is the spec of the conformance kernels with one memory
// operation each (docs/CATALOGUE.md, "What the proofs see");
// mutate/elidebarrier's TestProofsSeeEveryAccess checks that no proof
// offers their needed barriers.
const accessSpec = "testdata/proof_accesses.yaml"

// needed returns the 1-based lines of the barriers marked NEEDED.
func needed(src []byte) []int {
	var out []int
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, "// NEEDED") {
			out = append(out, i+1)
		}
	}
	return out
}

// TestNeededBarriersAreNeeded runs the kernels without each barrier marked
// NEEDED and wants the checking mode to catch every one: the operation
// really is ordered by it, so a proof that missed the operation would be
// unsound, not merely imprecise.
func TestNeededBarriersAreNeeded(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and checks a variant per needed barrier on the cpu backend")
	}
	back := cputest.Shared(t)
	s, err := spec.Load(accessSpec)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(s.Source)
	if err != nil {
		t.Fatal(err)
	}
	f, err := msl.Parse(s.Source, src)
	if err != nil {
		t.Fatal(err)
	}
	found, err := mutate.Find(f, []*mutate.Mutation{dropbarrier.Mutation}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// One check per barrier, of the one stage whose kernel holds it (or
	// calls the helper that does): the other kernels are unchanged.
	type job struct {
		id    string
		entry string
		v     check.Variant
	}
	var jobs []job
	for _, line := range needed(src) {
		var site *mutate.FoundSite
		for _, fs := range found {
			if f.Position(fs.Pos).Line == line {
				site = fs
			}
		}
		if site == nil {
			t.Errorf("line %d: no drop-barrier site", line)
			continue
		}
		v, err := variants.Build(f, found, []mutate.SiteRef{site.Ref("")})
		if err != nil {
			t.Fatal(err)
		}
		entry := site.Func.Name
		if site.Func.Kind != msl.Kernel {
			ks := f.KernelsReaching(site.Func)
			if len(ks) != 1 {
				t.Fatalf("%s: %d kernels reach %s", site.ID, len(ks), site.Func.Name)
			}
			entry = ks[0].Name
		}
		jobs = append(jobs, job{site.ID, entry, check.Variant{Name: v.Name, Path: v.Name + ".metal", Text: v.Source}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if len(jobs) != len(needed(src)) {
		t.Fatalf("%d variants for %d needed barriers", len(jobs), len(needed(src)))
	}
	for _, j := range jobs {
		one := *s
		one.Stages = nil
		for _, st := range s.Stages {
			if st.Entry == j.entry {
				one.Stages = append(one.Stages, st)
			}
		}
		if len(one.Stages) != 1 {
			t.Fatalf("%s: %d stages run %s", j.id, len(one.Stages), j.entry)
		}
		rep, err := check.Run(ctx, check.Options{Spec: &one, Variants: []check.Variant{j.v}, Backend: back, Sets: []string{"quick"}, Race: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Control.Status != check.Pass {
			t.Fatalf("%s: control %s: %s", j.entry, rep.Control.Status, rep.Control.Msg)
		}
		r := rep.Variants[0]
		if !slices.Contains(caughtBy, r.Status) {
			t.Errorf("%s: %s (want it caught: the barrier is needed)", j.id, r.Status)
		}
		t.Logf("%s on %s: %s", j.id, j.entry, r.Status)
	}
}
