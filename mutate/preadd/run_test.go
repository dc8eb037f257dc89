package preadd_test

import (
	"context"
	"os"
	"testing"
	"time"

	"metalab/backend/cpu/cputest"
	"metalab/check"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/preadd"
	"metalab/spec"
	"metalab/variants"
)

// TestRunMacros runs every variant preadd offers on a kernel whose
// subscripts use macros (typed by their expansions) on the cpu backend:
// each must be bitwise identical to the baseline and race-free.
func TestRunMacros(t *testing.T) {
	if testing.Short() {
		t.Skip("runs kernels on the cpu backend; -short skips it")
	}
	s, err := spec.Load("testdata/run/macro.yaml")
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
	found, _, err := mutate.FindAllWith(f, []*mutate.Mutation{preadd.Mutation}, nil, mutate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 2 {
		t.Fatalf("preadd offers %d sites on macro.metal, want 2 (both subscripts use macros)", len(found))
	}
	var vs []check.Variant
	for _, fs := range found {
		v, err := variants.Build(f, found, []mutate.SiteRef{fs.Ref(fs.ChoiceNames()[0])})
		if err != nil {
			t.Fatalf("%s: %v", fs.ID, err)
		}
		vs = append(vs, check.Variant{Name: v.Name, Path: v.Name + ".metal", Text: v.Source})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rep, err := check.Run(ctx, check.Options{Spec: s, Variants: vs, Backend: cputest.Shared(t), Race: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Control.Status != check.Pass {
		t.Fatalf("control %s: %s", rep.Control.Status, rep.Control.Msg)
	}
	for i, r := range rep.Variants {
		if r.Status != check.Pass {
			t.Errorf("%s: %s: %s\n%s", found[i].ID, r.Status, r.Msg, r.Log)
		}
	}
}
