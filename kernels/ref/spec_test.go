package ref_test

import (
	"testing"

	"metalab/kernels/ref"
	"metalab/spec"
)

// TestSpecsInstantiate checks that every case of both kernel specs
// instantiates and that the params block the spec lays out decodes to the
// case's shape, so the struct in the YAML and QsaParams agree.
func TestSpecsInstantiate(t *testing.T) {
	for _, path := range []string{"../qsa_prompt.yaml", "../qsa_prep.yaml"} {
		s, err := spec.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := s.Cases()
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, c := range cases {
			if c.Set == "full" {
				continue // large buffers; same code path as quick
			}
			checked++
			in, err := s.Instantiate(c)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			pb := in.Buffer("params")
			if pb == nil {
				t.Errorf("%s: no params buffer", path)
				continue
			}
			p, err := ref.DecodeParams(pb.Data)
			if err != nil {
				t.Errorf("%s %s/%s: %v", path, c.Set, c.Name, err)
				continue
			}
			if p.T != in.Vars["T"] || p.Pos0 != in.Vars["pos0"] || p.H != in.Vars["H"] || p.KVH != in.Vars["KVH"] {
				t.Errorf("%s %s/%s: params %+v do not match vars %v", path, c.Set, c.Name, p, in.Vars)
			}
			if len(pb.Data) != ref.ParamsSize {
				t.Errorf("%s: params are %d bytes, want %d", path, len(pb.Data), ref.ParamsSize)
			}
		}
		if checked == 0 {
			t.Errorf("%s: no case outside the full set to instantiate", path)
		}
	}
}
