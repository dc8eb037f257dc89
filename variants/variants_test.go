package variants_test

import (
	"errors"
	"strings"
	"testing"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/dropbarrier"
	"metalab/mutate/unrollpragma"
	"metalab/variants"
)

const src = `kernel void k(device float *out [[buffer(0)]], uint tid [[thread_position_in_threadgroup]])
{
    threadgroup float s[64];
    s[tid] = out[tid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0.0f;
    for (int i = 0; i < 4; ++i) {
        acc += s[i];
    }
    out[tid] = acc;
}
`

func setup(t *testing.T, src string, muts ...*mutate.Mutation) (*msl.File, []*mutate.FoundSite) {
	t.Helper()
	f, err := msl.Parse("k.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	found, err := mutate.Find(f, muts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, found
}

func refs(t *testing.T, ss ...string) []mutate.SiteRef {
	t.Helper()
	var rs []mutate.SiteRef
	for _, s := range ss {
		r, err := mutate.ParseSiteRef(s)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

func TestBuild(t *testing.T) {
	f, found := setup(t, src, unrollpragma.Mutation, dropbarrier.Mutation)
	if len(found) != 2 {
		t.Fatalf("found %d sites, want 2", len(found))
	}
	unroll, drop := found[0].ID, found[1].ID
	v, err := variants.Build(f, found, refs(t, unroll+"=count4", drop))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(src, "    threadgroup_barrier(mem_flags::mem_threadgroup);\n", "", 1)
	want = strings.Replace(want, "    for", "    #pragma clang loop unroll_count(4)\n    for", 1)
	if string(v.Source) != want {
		t.Errorf("Source =\n%s\nwant\n%s", v.Source, want)
	}
	if !strings.HasPrefix(v.Name, "drop-barrier.k.0=drop+unroll-pragma.k.0=count4-") || !strings.HasPrefix(v.Sha256, v.Name[len(v.Name)-8:]) {
		t.Errorf("Name = %q (sha256 %s)", v.Name, v.Sha256)
	}
	if v.BasePath != "k.metal" || len(v.Edits) != 2 || len(v.Refs) != 2 || v.Refs[0].Choice != "drop" {
		t.Errorf("provenance = %q %v %v", v.BasePath, v.Edits, v.Refs)
	}
	// Order of refs does not matter.
	v2, err := variants.Build(f, found, refs(t, drop, unroll+"=count4"))
	if err != nil {
		t.Fatal(err)
	}
	if v2.Name != v.Name || v2.Sha256 != v.Sha256 {
		t.Errorf("reordered refs give %s, want %s", v2.Name, v.Name)
	}
	// A different choice gives a different name.
	v3, err := variants.Build(f, found, refs(t, unroll+"=full"))
	if err != nil {
		t.Fatal(err)
	}
	if v3.Name == v.Name || !strings.HasPrefix(v3.Name, "unroll-pragma.k.0=full-") {
		t.Errorf("Name = %s", v3.Name)
	}
	// No refs: the base.
	v4, err := variants.Build(f, found, nil)
	if err != nil || string(v4.Source) != src || v4.Sha256 != v4.BaseSha256 {
		t.Errorf("Build(no refs) = %v, %v", v4, err)
	}
}

func TestBuildErrors(t *testing.T) {
	f, found := setup(t, src, unrollpragma.Mutation, dropbarrier.Mutation)
	unroll := found[0].ID
	tests := []struct {
		name    string
		refs    []string
		wantErr string
	}{
		{"same_site_twice", []string{unroll + "=full", unroll + "=count2"}, "sites " + unroll + "=full and " + unroll + "=count2 conflict"},
		{"stale", []string{unroll[:len(unroll)-6] + "000000"}, "stale site"},
		{"missing", []string{"drop-barrier/k/3-000000"}, "no site drop-barrier/k/3-000000"},
		{"bad_choice", []string{unroll + "=count8"}, `no choice "count8"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := variants.Build(f, found, refs(t, tt.refs...))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Build error = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

// Two test mutations whose edits overlap on every statement.
func stmtMutation(name, repl string) *mutate.Mutation {
	return &mutate.Mutation{Name: name, Doc: "test", Run: func(p *mutate.Pass) error {
		mutate.Inspect(p.Func, func(s msl.Stmt) bool {
			if e, ok := s.(*msl.ExprStmt); ok {
				p.Report(mutate.Site{Pos: e.Pos, End: e.End, Message: "stmt", Choices: []mutate.Choice{
					{Name: "x", Edits: []edit.Edit{{Start: e.Pos, End: e.End, New: repl}}},
				}})
			}
			return true
		})
		return nil
	}}
}

func TestBuildConflict(t *testing.T) {
	f, found := setup(t, "void k() {\n    a();\n}\n", stmtMutation("aa", "b();"), stmtMutation("bb", "c();"))
	if len(found) != 2 {
		t.Fatalf("found %d sites", len(found))
	}
	_, err := variants.Build(f, found, refs(t, found[1].ID, found[0].ID))
	want := "sites " + found[0].ID + "=x and " + found[1].ID + "=x conflict"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Build error = %v, want containing %q", err, want)
	}
	var ce *variants.ConflictError
	if !errors.As(err, &ce) || ce.A.Mutation != "aa" || ce.B.Mutation != "bb" {
		t.Errorf("Build error = %#v, want a *ConflictError naming both", err)
	}
}

// TestBuildFlags checks that a variant records the macro flags, and that a
// ref listed under other flags is refused even where the site does not
// exist under the current ones.
func TestBuildFlags(t *testing.T) {
	const k = "kernel void k(device float *p [[buffer(0)]]) {\n    for (int i = 0; i < N; ++i) { p[i] = 0.0f; }\n}\n"
	f, err := msl.ParseOptions("k.metal", []byte(k), msl.Options{Defines: map[string]string{"N": "8"}, Undefs: []string{"DEBUG"}})
	if err != nil {
		t.Fatal(err)
	}
	found, err := mutate.Find(f, []*mutate.Mutation{unrollpragma.Mutation}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := variants.Build(f, found, refs(t, found[0].ID+"=count8"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Flags.String() != "-D N=8 -U DEBUG" || !strings.HasSuffix(v.Refs[0].ID(), "@N:8,-DEBUG") {
		t.Errorf("flags %s, refs %v", v.Flags, v.Refs)
	}
	plain, err := msl.Parse("k.metal", []byte(k))
	if err != nil {
		t.Fatal(err)
	}
	foundPlain, _ := mutate.Find(plain, []*mutate.Mutation{unrollpragma.Mutation}, nil)
	_, err = variants.Build(plain, foundPlain, refs(t, found[0].ID+"=count8"))
	var fe *mutate.FlagsError
	if !errors.As(err, &fe) || fe.Now.String() != "no macro flags" {
		t.Errorf("Build under other flags = %v, want a *mutate.FlagsError", err)
	}
}
