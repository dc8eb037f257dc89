package mutate_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

func noop(*mutate.Pass) error { return nil }

func TestValidate(t *testing.T) {
	ok := &mutate.Mutation{Name: "unroll-pragma", Doc: "d", Run: noop}
	tests := []struct {
		name    string
		muts    []*mutate.Mutation
		wantErr string
	}{
		{"ok", []*mutate.Mutation{ok, {Name: "x2", Doc: "d", Run: noop}}, ""},
		{"upper", []*mutate.Mutation{{Name: "Unroll", Doc: "d", Run: noop}}, "name must be"},
		{"underscore", []*mutate.Mutation{{Name: "drop_barrier", Doc: "d", Run: noop}}, "name must be"},
		{"leading_digit", []*mutate.Mutation{{Name: "2x", Doc: "d", Run: noop}}, "name must be"},
		{"trailing_dash", []*mutate.Mutation{{Name: "x-", Doc: "d", Run: noop}}, "name must be"},
		{"empty_name", []*mutate.Mutation{{Doc: "d", Run: noop}}, "name must be"},
		{"duplicate", []*mutate.Mutation{ok, ok}, "duplicate name"},
		{"no_doc", []*mutate.Mutation{{Name: "a", Doc: " \n", Run: noop}}, "empty Doc"},
		{"no_run", []*mutate.Mutation{{Name: "a", Doc: "d"}}, "nil Run"},
		{"nil", []*mutate.Mutation{nil}, "is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mutate.Validate(tt.muts)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate error = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseSiteRef(t *testing.T) {
	tests := []struct {
		give    string
		want    mutate.SiteRef
		wantErr string
	}{
		{give: "unroll-pragma/qsa_flash/2-a1b2c3=full", want: mutate.SiteRef{Mutation: "unroll-pragma", Func: "qsa_flash", Ordinal: 2, Hash: "a1b2c3", Choice: "full"}},
		{give: "drop-barrier/reduce/0-000000", want: mutate.SiteRef{Mutation: "drop-barrier", Func: "reduce", Hash: "000000"}},
		{give: "drop-barrier/reduce/0-00000", wantErr: "hash must be 6"},
		{give: "drop-barrier/reduce/0-ABCDEF", wantErr: "hash must be 6"},
		{give: "drop-barrier/reduce/01-abcdef", wantErr: "bad ordinal"},
		{give: "drop-barrier/reduce/-1-abcdef", wantErr: "bad ordinal"},
		{give: "drop-barrier/reduce/abcdef", wantErr: "bad ordinal"},
		{give: "drop-barrier/reduce/3=drop", want: mutate.SiteRef{Mutation: "drop-barrier", Func: "reduce", Ordinal: 3, Choice: "drop"}},
		{give: "drop-barrier/reduce", wantErr: "three"},
		{give: "Drop/reduce/0-abcdef", wantErr: "bad mutation"},
		{give: "drop-barrier//0-abcdef", wantErr: "empty function"},
		{give: "drop-barrier/reduce/0-abcdef=", wantErr: "bad choice"},
		{give: "drop-barrier/reduce/0-abcdef=a=b", wantErr: "bad choice"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, err := mutate.ParseSiteRef(tt.give)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSiteRef error = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("ParseSiteRef = %+v, want %+v", got, tt.want)
			}
			if got.String() != tt.give {
				t.Errorf("String() = %q, want %q", got.String(), tt.give)
			}
		})
	}
}

// calls reports a site on every ExprStmt, with a choice that deletes it.
var calls = &mutate.Mutation{
	Name: "calls",
	Doc:  "test mutation",
	Run: func(p *mutate.Pass) error {
		mutate.Inspect(p.Func, func(s msl.Stmt) bool {
			if e, ok := s.(*msl.ExprStmt); ok {
				p.Report(mutate.Site{Pos: e.Pos, End: e.End, Message: "stmt", Choices: []mutate.Choice{
					{Name: "del", Edits: []edit.Edit{{Start: e.Pos, End: e.End}}},
				}})
			}
			return true
		})
		return nil
	},
}

const src = `void a() {
    x();
    y();
}

void b() {
    x();
}
`

func parse(t *testing.T, src string) *msl.File {
	t.Helper()
	f, err := msl.Parse("k.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFindIDs(t *testing.T) {
	f := parse(t, src)
	found, err := mutate.Find(f, []*mutate.Mutation{calls}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range found {
		ids = append(ids, s.ID)
	}
	// x(); hashes the same in a and b; ordinals count per function.
	if len(ids) != 3 || !strings.HasPrefix(ids[0], "calls/a/0-") || !strings.HasPrefix(ids[1], "calls/a/1-") || !strings.HasPrefix(ids[2], "calls/b/0-") {
		t.Fatalf("ids = %v", ids)
	}
	if ids[0][len("calls/a/0-"):] != ids[2][len("calls/b/0-"):] {
		t.Errorf("same text, different hashes: %v", ids)
	}
	if ids[0][len("calls/a/0-"):] == ids[1][len("calls/a/1-"):] {
		t.Errorf("different text, same hash: %v", ids)
	}
	// The hash is the first 6 hex digits of the sha256 of the site's text
	// and its occurrence among the function's sites of identical text (here
	// each text is the first of one: 0/1).
	for _, s := range found {
		sum := sha256.Sum256(append(append([]byte{}, f.Src[s.Pos:s.End]...), "\x000/1"...))
		if want := hex.EncodeToString(sum[:3]); s.Hash != want || !strings.HasSuffix(s.ID, "-"+want) {
			t.Errorf("site %s of text %q: hash %s, want %s", s.ID, f.Src[s.Pos:s.End], s.Hash, want)
		}
	}
	if text := string(f.Src[found[0].Pos:found[0].End]); text != "x();" {
		t.Errorf("first site's text = %q, want x();", text)
	}
	only, err := mutate.Find(f, []*mutate.Mutation{calls}, []string{"b"})
	if err != nil || len(only) != 1 || only[0].ID != ids[2] {
		t.Fatalf("Find(b) = %v, %v", only, err)
	}
	if _, err := mutate.Find(f, []*mutate.Mutation{calls}, []string{"nope"}); err == nil || !strings.Contains(err.Error(), "functions: a, b") {
		t.Fatalf("Find(nope) error = %v", err)
	}
}

func TestResolve(t *testing.T) {
	f := parse(t, src)
	found, err := mutate.Find(f, []*mutate.Mutation{calls}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := mutate.ParseSiteRef(found[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	s, c, err := mutate.Resolve(found, ref)
	if err != nil || s != found[1] || c.Name != "del" {
		t.Fatalf("Resolve = %v, %v, %v", s, c, err)
	}
	// The same ref against an edited source whose second call changed.
	f2 := parse(t, strings.Replace(src, "y();", "z();", 1))
	found2, err := mutate.Find(f2, []*mutate.Mutation{calls}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := mutate.Resolve(found2, ref); err == nil || !strings.Contains(err.Error(), "stale site "+ref.ID()) {
		t.Fatalf("Resolve(stale) error = %v", err)
	}
	ref.Ordinal = 5
	if _, _, err := mutate.Resolve(found, ref); err == nil || !strings.Contains(err.Error(), "a has 2 calls site(s)") {
		t.Fatalf("Resolve(missing) error = %v", err)
	}
	ref.Ordinal = 0
	ref.Hash = found[0].Hash
	ref.Choice = "nope"
	if _, _, err := mutate.Resolve(found, ref); err == nil || !strings.Contains(err.Error(), "choices: del") {
		t.Fatalf("Resolve(bad choice) error = %v", err)
	}
}

func TestFindRejectsInvalidChoices(t *testing.T) {
	f := parse(t, src)
	fa := f.Func("a")
	bad := func(name string, c mutate.Choice) *mutate.Mutation {
		return &mutate.Mutation{Name: name, Doc: "d", Run: func(p *mutate.Pass) error {
			if p.Func.Name == "a" {
				p.Report(mutate.Site{Pos: fa.Body.Lbrace, End: fa.Body.Lbrace + 1, Message: "m", Choices: []mutate.Choice{c}})
			}
			return nil
		}}
	}
	tests := []struct {
		m       *mutate.Mutation
		wantErr string
	}{
		{bad("outside", mutate.Choice{Name: "c", Edits: []edit.Edit{{Start: fa.End + 1, End: fa.End + 1, New: "x"}}}), "outside owned scope"},
		{bad("overlap", mutate.Choice{Name: "c", Edits: []edit.Edit{{Start: fa.Pos + 1, End: fa.Pos + 4}, {Start: fa.Pos + 2, End: fa.Pos + 3}}}), "overlapping"},
		{bad("range", mutate.Choice{Name: "c", Edits: []edit.Edit{{Start: fa.Pos, End: len(f.Src) + 1}}}), "out of range"},
		{bad("noname", mutate.Choice{Edits: []edit.Edit{{Start: fa.Pos, End: fa.Pos}}}), "choice name"},
		{bad("noedits", mutate.Choice{Name: "c"}), "no edits"},
	}
	for _, tt := range tests {
		t.Run(tt.m.Name, func(t *testing.T) {
			_, err := mutate.Find(f, []*mutate.Mutation{tt.m}, nil)
			if err == nil || !strings.Contains(err.Error(), "mutation "+tt.m.Name+" reported an invalid site") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Find error = %v, want naming the mutation and %q", err, tt.wantErr)
			}
		})
	}
}

func TestExtractDoc(t *testing.T) {
	src := "// Copyright.\n\n//go:build x\n\n// Package p does a thing.\n//\n//\tindented\npackage p\n"
	want := "Package p does a thing.\n\n\tindented"
	if got := mutate.ExtractDoc(src); got != want {
		t.Errorf("ExtractDoc = %q, want %q", got, want)
	}
	if got := mutate.ExtractDoc("package p\n"); got != "" {
		t.Errorf("ExtractDoc(no doc) = %q", got)
	}
}

// barriers reports every barrier statement as a site, so identical texts
// repeat.
var barriers = &mutate.Mutation{Name: "barriers", Doc: "d", Run: func(p *mutate.Pass) error {
	mutate.Inspect(p.Func, func(s msl.Stmt) bool {
		if b, ok := s.(*msl.Barrier); ok {
			p.Report(mutate.Site{Pos: b.Pos, End: b.End, Message: "b", Choices: []mutate.Choice{{Name: "drop", Edits: []edit.Edit{{Start: b.Pos, End: b.End}}}}})
		}
		return true
	})
	return nil
}}

// TestIdenticalTexts checks that sites with identical texts get distinct
// hashes, so that an ordinal that shifts onto another identical site (a
// barrier removed before it) is refused rather than resolved to the wrong
// place.
func TestIdenticalTexts(t *testing.T) {
	const three = "kernel void k() {\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n}\n"
	f := parse(t, three)
	found, err := mutate.Find(f, []*mutate.Mutation{barriers}, nil)
	if err != nil || len(found) != 3 {
		t.Fatalf("found %d sites, %v", len(found), err)
	}
	seen := map[string]bool{}
	for _, s := range found {
		if seen[s.Hash] {
			t.Errorf("two sites share hash %s", s.Hash)
		}
		seen[s.Hash] = true
	}
	// The first barrier removed: ordinal 1 now names the old third one.
	two := strings.Replace(three, "    threadgroup_barrier(mem_flags::mem_threadgroup);\n", "", 1)
	found2, err := mutate.Find(parse(t, two), []*mutate.Mutation{barriers}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range found[:2] {
		ref, _ := mutate.ParseSiteRef(s.ID)
		_, _, err := mutate.Resolve(found2, ref)
		var stale *mutate.StaleError
		if !errors.As(err, &stale) {
			t.Errorf("Resolve(%s) on the shifted source = %v, want a *StaleError", s.ID, err)
		}
	}
}

func TestTypedRefErrors(t *testing.T) {
	f := parse(t, src)
	found, err := mutate.Find(f, []*mutate.Mutation{calls}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := found[0].Ref("")
	var unknown *mutate.UnknownSiteError
	r := ref
	r.Ordinal = 9
	if _, _, err := mutate.Resolve(found, r); !errors.As(err, &unknown) || unknown.Count != 2 {
		t.Errorf("unknown ordinal: %v", err)
	}
	var choice *mutate.UnknownChoiceError
	r = ref
	r.Choice = "nope"
	if _, _, err := mutate.Resolve(found, r); !errors.As(err, &choice) || choice.Choice != "nope" {
		t.Errorf("unknown choice: %v", err)
	}
	var flags *mutate.FlagsError
	r = ref
	r.Flags = mutate.NewFlags(map[string]string{"N": "4"}, []string{"X"})
	if _, _, err := mutate.Resolve(found, r); !errors.As(err, &flags) || !strings.Contains(err.Error(), "-D N=4 was dropped; -U X was dropped") {
		t.Errorf("other flags: %v", err)
	}
	for _, e := range []error{&mutate.StaleError{}, unknown, choice, flags} {
		if _, ok := e.(mutate.RefError); !ok {
			t.Errorf("%T is not a RefError", e)
		}
	}
}

func TestFlags(t *testing.T) {
	fl := mutate.NewFlags(map[string]string{"B": "a b,c=d", "A": ""}, []string{"Z", "Y", "Z"})
	if got := fl.Tag(); got != "A:1,B:a%20b%2Cc%3Dd,-Y,-Z" {
		t.Errorf("Tag = %q", got)
	}
	if got := fl.String(); got != "-D A=1 -D B=a b,c=d -U Y -U Z" {
		t.Errorf("String = %q", got)
	}
	back, err := mutate.ParseFlagsTag(fl.Tag())
	if err != nil || back != fl {
		t.Errorf("ParseFlagsTag(Tag) = %v, %v", back, err)
	}
	ref, err := mutate.ParseSiteRef("unroll/k/2-a1b2c3@" + fl.Tag() + "=by2")
	if err != nil || ref.Flags != fl || ref.Choice != "by2" || ref.Hash != "a1b2c3" {
		t.Fatalf("ParseSiteRef = %+v, %v", ref, err)
	}
	if ref.String() != "unroll/k/2-a1b2c3@"+fl.Tag()+"=by2" {
		t.Errorf("String = %s", ref)
	}
	for _, bad := range []string{"unroll/k/2@", "unroll/k/2@1A:1", "unroll/k/2@A", "unroll/k/2@A:%zz"} {
		if _, err := mutate.ParseSiteRef(bad); err == nil {
			t.Errorf("ParseSiteRef(%q) succeeded", bad)
		}
	}
	now := mutate.NewFlags(map[string]string{"A": "2", "C": "1"}, []string{"Y"})
	if got := strings.Join(fl.Diff(now), "; "); got != "-D A=1 is now -D A=2; -D B=a b,c=d was dropped; -D C=1 was added; -U Z was dropped" {
		t.Errorf("Diff = %q", got)
	}
}
