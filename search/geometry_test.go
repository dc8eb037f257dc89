package search

import (
	"os"
	"testing"

	"metalab/msl"
	"metalab/spec"
)

// TestSpaceProvesForThePlansGeometry: a plan records the threads per
// threadgroup its spec dispatches each entry with, and the space's barrier
// proofs use them, so a kernel that reads thread positions' y is offered
// the barrier changes that hold for its two-dimensional threadgroups,
// where without a geometry the proofs assume one dimension and refuse it.
func TestSpaceProvesForThePlansGeometry(t *testing.T) {
	const path = "../mutate/property/testdata/corpus_grid.yaml"
	specBytes, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(path, specBytes)
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
	po := planOptions()
	po.Functions = []string{"transpose_2d"}
	po.Target = "SX=16,SY=2,SZ=4,NT=32"
	po.Search.Ops = []string{"elide-barrier", "cross-barrier", "split-partials", "merge-barriers"}
	p, err := NewPlan(s, specBytes, f, os.ReadFile, po)
	if err != nil {
		t.Fatal(err)
	}
	dims := p.Geometry["transpose_2d"]
	if len(dims) == 0 || dims[0][1] <= 1 {
		t.Fatalf("plan geometry of transpose_2d = %v, want the spec's two-dimensional threadgroups", dims)
	}
	with, err := NewSpace(f, p)
	if err != nil {
		t.Fatal(err)
	}
	p1d := *p
	p1d.Geometry = nil
	without, err := NewSpace(f, &p1d)
	if err != nil {
		t.Fatal(err)
	}
	if len(with.Atoms) == 0 {
		t.Errorf("no barrier change proven for transpose_2d under its geometry %v", dims)
	}
	if len(without.Atoms) != 0 {
		t.Errorf("without a geometry %d barrier changes offered for a kernel reading .y (want none: one dimension assumed)", len(without.Atoms))
	}
}
