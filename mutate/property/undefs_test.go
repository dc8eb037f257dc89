package property_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"metalab/msl"
	"metalab/spec"
	"metalab/translate"
)

var (
	condNames   = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*(?:ifdef|ifndef)[ \t]+(\w+)|\bdefined[ \t]*\(?[ \t]*(\w+)`)
	definedName = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+(\w+)`)
)

// buildUndefs returns the macros that f (parsed from src) tests in its
// conditionals and that the spec's build certainly does not define: the
// translation preprocesses with -undef, so a build defines only
// translate.Predefined and the spec's defines, and what the file and the
// headers it includes define. Parsed with these as -U, the branches the
// build does not compile drop out (ggml's #ifdef GGML_METAL_HAS_TENSOR
// kernel_mul_mm, before the one its #else compiles), so that the sites the
// stages reach are sites of the code that runs: a site in a branch the
// build leaves out would pass its check without being tried. Names
// reserved to the implementation (__x) stay undecided, and nothing is
// returned when a header the file includes was not read, unless the -U
// leave its #include out.
func buildUndefs(f *msl.File, src []byte, s *spec.Spec, opts msl.Options) []string {
	texts, unread := includedTexts(f, src)
	out := undefinedNames(texts, s)
	if unread && len(out) > 0 {
		// A header not read may lie in a branch the -U leave out (ggml-
		// common.h's <cstdint> for C builds); else nothing is certain.
		opts.Undefs = out
		g, err := msl.ParseOptions(f.Name, src, opts)
		if err != nil {
			return nil
		}
		if _, unread := includedTexts(g, src); unread {
			return nil
		}
	}
	if unread && len(out) == 0 {
		return nil
	}
	return out
}

// includedTexts returns the texts of src and of the headers f includes,
// and whether a header it includes (not one of Metal's own) was not read.
func includedTexts(f *msl.File, src []byte) (texts []string, unread bool) {
	texts = []string{string(src)}
	var walk func(incs []*msl.Include)
	walk = func(incs []*msl.Include) {
		for _, in := range incs {
			if in.Metal {
				continue
			}
			if in.File == nil {
				unread = true
				continue
			}
			texts = append(texts, string(in.File.Src))
			walk(in.File.Includes)
		}
	}
	walk(f.Includes)
	return texts, unread
}

// undefinedNames returns the names texts test in conditionals that
// neither they, the spec nor the translation define.
func undefinedNames(texts []string, s *spec.Spec) []string {
	known := map[string]bool{}
	for k := range translate.Predefined {
		known[k] = true
	}
	for _, n := range s.DefineNames() {
		known[n] = true
	}
	tested := map[string]bool{}
	for _, t := range texts {
		for _, m := range definedName.FindAllStringSubmatch(t, -1) {
			known[m[1]] = true
		}
		for _, m := range condNames.FindAllStringSubmatch(t, -1) {
			tested[m[1]+m[2]] = true
		}
	}
	var out []string
	for n := range tested {
		if !known[n] && !strings.HasPrefix(n, "__") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// TestBuildUndefs: the names a file tests and its spec's build certainly
// leaves undefined, and none when a header it includes was not read.
func TestBuildUndefs(t *testing.T) {
	dir := t.TempDir()
	src := `#define LOCAL 1
#ifdef HAS_TENSOR
kernel void k(device float *out [[buffer(0)]]) { out[0] = 1.0f; }
#else
kernel void k(device float *out [[buffer(0)]]) { out[0] = 2.0f; }
#endif
#if defined(OTHER) && defined(LOCAL) || defined SPEC_D
#endif
#ifndef __METAL_VERSION__
#endif
#ifdef __RESERVED_ONE
#endif
`
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	metal := write("k.metal", src)
	sp := write("k.yaml", `source: k.metal
defines: {SPEC_D: 1}
buffers:
  - {name: out, index: 0, type: float, count: 1, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [1]}
sets:
  quick:
    cases:
      - {}
`)
	s, err := spec.Load(sp)
	if err != nil {
		t.Fatal(err)
	}
	f, err := msl.ParseOptions(metal, []byte(src), msl.Options{IncludeDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := buildUndefs(f, []byte(src), s, msl.Options{IncludeDirs: []string{dir}}), []string{"HAS_TENSOR", "OTHER"}; !slices.Equal(got, want) {
		t.Errorf("buildUndefs = %v, want %v", got, want)
	}
	f, err = msl.ParseOptions(metal, []byte(src), msl.Options{IncludeDirs: []string{dir}, Undefs: []string{"HAS_TENSOR", "OTHER"}})
	if err != nil {
		t.Fatal(err)
	}
	if ks := f.FuncsNamed("k"); len(ks) != 1 || !strings.Contains(string(f.Src[ks[0].Body.Lbrace:ks[0].Body.Rbrace]), "2.0f") {
		t.Errorf("with -U, kernels named k: %d; want only the #else one", len(ks))
	}
	missing := `#include "absent.h"
#ifdef HAS_TENSOR
#endif
`
	f, _ = msl.ParseOptions(metal, []byte(missing), msl.Options{IncludeDirs: []string{dir}})
	if got := buildUndefs(f, []byte(missing), s, msl.Options{IncludeDirs: []string{dir}}); got != nil {
		t.Errorf("with a header not read: %v, want none", got)
	}
}
