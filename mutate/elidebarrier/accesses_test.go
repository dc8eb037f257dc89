package elidebarrier_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/elidebarrier"
	"metalab/mutate/geometry"
	"metalab/spec"
)

// accessSpec is the spec of the conformance kernels with one memory
// operation each (docs/CATALOGUE.md, "What the proofs see").
const accessSpec = "../property/testdata/proof_accesses.yaml"

// needWhy says, per function, what the refusal of each barrier marked
// NEEDED must cite: the operation's variable, or why it cannot be followed.
// Without geometry (first) and with the spec's (second).
var needWhy = map[string][2]string{
	"acc_plain":      {`needed: .* of s `, `needed: .* of s `},
	"acc_atomic":     {`needed: .* of count `, `needed: .* of count `},
	"acc_simd_store": {`needed: .* of s `, `needed: .* of s `},
	"acc_simd_load":  {`needed: .* of s `, `needed: .* of s `},
	"acc_cast":       {`needed: .* of s `, `needed: .* of s `},
	"acc_cast_bytes": {`needed: .* of shmem `, `needed: .* of shmem `},
	"acc_ref":        {`threadgroup reference r`, `threadgroup reference r`},
	"acc_call":       {`call of put`, `call of put`},
	"swap_pairs":     {`needed: .* of a `, `needed: .* of a `},
	"acc_2d":         {`assuming one-dimensional threadgroups, but the kernel reads tpitg\.y`, `needed: .* of s .*with 32x2x1 threads per threadgroup`},
	"acc_device":     {`needed: .* of (buf|lo|hi) `, `needed: .* of (buf|lo|hi) `},
}

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

// TestProofsSeeEveryAccess checks, from the source alone, that
// elide-barrier does not offer a barrier that one memory operation of the
// table needs, and that each refusal names the operation's variable (so
// that it is refused for that operation, not for another access). The
// other proven operators' sites in these kernels are checked by
// TestProperty.
func TestProofsSeeEveryAccess(t *testing.T) {
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
	geo, err := geometry.Of(s)
	if err != nil {
		t.Fatal(err)
	}
	lines := needed(src)
	if len(lines) < len(needWhy) {
		t.Fatalf("%d barriers marked NEEDED, want at least %d", len(lines), len(needWhy))
	}
	muts := []*mutate.Mutation{elidebarrier.Mutation}
	for k, opts := range []mutate.Options{{}, {Threads: geo}} {
		found, skips, err := mutate.FindAllWith(f, muts, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range lines {
			for _, fs := range found {
				if fs.Mutation != elidebarrier.Mutation {
					continue
				}
				if f.Position(fs.Pos).Line == line {
					t.Errorf("geometry %v: %s offered at the needed barrier of line %d", k == 1, fs.ID, line)
				}
			}
			var reason, fn string
			for _, sk := range skips {
				if sk.Mutation == elidebarrier.Mutation && f.Position(sk.Pos).Line == line {
					reason, fn = sk.Reason, sk.Func.Name
				}
			}
			want, ok := needWhy[fn]
			switch {
			case reason == "":
				t.Errorf("geometry %v: line %d: no elide-barrier skip", k == 1, line)
			case !ok:
				t.Errorf("line %d: function %s has no expected reason", line, fn)
			case !regexp.MustCompile(want[k]).MatchString(reason):
				t.Errorf("geometry %v: %s line %d: reason %q does not match %q", k == 1, fn, line, reason, want[k])
			}
		}
	}
}
