// Package mutatetest runs golden tests of a mutation, in the manner of
// go/analysis/analysistest.
//
// Each testdata/*.txtar archive is one case. Its comment is a description
// followed by flag lines:
//
//	-fn=NAME        only functions named NAME (repeatable; default all)
//	-diff=CHOICE    the choice want.diff shows (default: the first site's first choice)
//
// Its files are:
//
//	-- input.metal --          the kernel source
//	-- want/CHOICE.metal --    input with CHOICE of the first site applied
//	-- want/N=CHOICE.metal --  input with CHOICE of the N-th site (0-based, Find order) applied
//	-- want.diff --            the unified diff (path input.metal) for -diff
//
// In input.metal, `// want "regexp"` on a line says a site whose message
// matches regexp starts on that line, and `// skip "regexp"` says a place
// skipped with a matching reason does; each comment may list several
// quoted regexps. Sites or skips on lines without a matching comment, and
// comments without a site or skip, fail the test. Every want file and the
// diff, parsed back with sourcegraph/go-diff and applied, must give the
// variant, and every variant, built with variants.Build as metalab mutate
// builds it, must still parse. With -update, Run rewrites
// the want files and want.diff of existing archives instead of failing.
package mutatetest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"metalab/msl"
	"metalab/mutate"
	"metalab/patches"
	"metalab/patches/patchtest"
	"metalab/variants"
)

var update = flag.Bool("update", false, "rewrite the want sections of golden archives")

// Run runs the golden cases in dir/*.txtar against mutation m.
func Run(t *testing.T, dir string, m *mutate.Mutation) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden cases in %s", dir)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) { runCase(t, file, m) })
	}
}

// tb is the part of testing.TB a golden case reports through; a recorder
// can stand in for it to check that a bad golden fails.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// A caseFlags holds an archive's flag lines.
type caseFlags struct {
	fns  []string
	diff string
}

func parseFlags(comment []byte) (caseFlags, error) {
	var cf caseFlags
	for _, line := range strings.Split(string(comment), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "-") {
			continue
		}
		name, val, _ := strings.Cut(line[1:], "=")
		switch name {
		case "fn":
			cf.fns = append(cf.fns, val)
		case "diff":
			cf.diff = val
		default:
			return cf, fmt.Errorf("unknown flag line %q", line)
		}
	}
	return cf, nil
}

func runCase(t tb, file string, m *mutate.Mutation) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := parseFlags(ar.Comment)
	if err != nil {
		t.Fatal(err)
	}
	var input []byte
	haveInput := false
	for _, f := range ar.Files {
		if f.Name == "input.metal" {
			input, haveInput = f.Data, true
		}
	}
	if !haveInput {
		t.Fatal("no input.metal section")
	}
	f, err := msl.Parse("input.metal", input)
	if err != nil {
		t.Fatalf("parse input: %v", err)
	}
	found, skips, err := mutate.FindAll(f, []*mutate.Mutation{m}, cf.fns)
	if err != nil {
		t.Fatalf("find: %v", err)
	}
	checkComments(t, f, found, skips)

	// variant applies the choice named by a want-file key.
	variant := func(key string) ([]byte, error) {
		idx, choice := 0, key
		if n, c, ok := strings.Cut(key, "="); ok {
			i, err := strconv.Atoi(n)
			if err != nil {
				return nil, fmt.Errorf("bad site index in %q", key)
			}
			idx, choice = i, c
		}
		if idx < 0 || idx >= len(found) {
			return nil, fmt.Errorf("want %q: no site %d (found %d)", key, idx, len(found))
		}
		s := found[idx]
		ref := mutate.SiteRef{Mutation: s.Mutation.Name, Func: s.Func.Name, Ordinal: s.Ordinal, Hash: s.Hash, Choice: choice}
		v, err := variants.Build(f, found, []mutate.SiteRef{ref})
		if err != nil {
			return nil, err
		}
		return v.Source, nil
	}

	changed := false
	for i := range ar.Files {
		af := &ar.Files[i]
		var got []byte
		switch {
		case strings.HasPrefix(af.Name, "want/") && strings.HasSuffix(af.Name, ".metal"):
			key := strings.TrimSuffix(strings.TrimPrefix(af.Name, "want/"), ".metal")
			got, err = variant(key)
			if err != nil {
				t.Errorf("%s: %v", af.Name, err)
				continue
			}
			if _, err := msl.Parse("variant.metal", got); err != nil {
				t.Errorf("%s: variant does not parse: %v", af.Name, err)
			}
			checkPatch(t, af.Name, input, got)
		case af.Name == "want.diff":
			key := cf.diff
			if key == "" {
				if len(found) == 0 {
					t.Errorf("want.diff: no sites")
					continue
				}
				key = found[0].Choices[0].Name
			}
			v, err := variant(key)
			if err != nil {
				t.Errorf("want.diff: %v", err)
				continue
			}
			p, err := patches.Unified("input.metal", input, v)
			if err != nil {
				t.Errorf("want.diff: %v", err)
				continue
			}
			checkPatch(t, af.Name, input, v)
			got = []byte(p)
		default:
			continue
		}
		if bytes.Equal(got, af.Data) {
			continue
		}
		if *update {
			af.Data = got
			changed = true
			continue
		}
		t.Errorf("%s mismatch:\n--- got ---\n%s--- want ---\n%s", af.Name, got, af.Data)
	}
	if changed {
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %s", file)
	}
}

// checkPatch checks that the patch from input to want, parsed back and
// applied, yields want.
func checkPatch(t tb, name string, input, want []byte) {
	t.Helper()
	p, err := patches.Unified("input.metal", input, want)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	got, err := patchtest.Apply(p, input)
	if err != nil {
		t.Errorf("%s: patch does not apply: %v\n%s", name, err, p)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: applying the patch gives\n%s\nwant\n%s", name, got, want)
	}
}

var commentRE = regexp.MustCompile(`//\s*(want|skip)\s+(".*)$`)

// expectation is one quoted regexp of a want or skip comment.
type expectation struct {
	kind string // "want" or "skip"
	line int
	re   *regexp.Regexp
	met  bool
}

// checkComments matches sites and skips against the input's want and skip
// comments, line by line.
func checkComments(t tb, f *msl.File, found []*mutate.FoundSite, skips []*mutate.FoundSkip) {
	t.Helper()
	var exps []*expectation
	for i, line := range strings.Split(string(f.Src), "\n") {
		m := commentRE.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		rest := strings.TrimSpace(m[2])
		for rest != "" {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				t.Fatalf("input.metal:%d: bad %s comment: %v", i+1, m[1], err)
			}
			s, _ := strconv.Unquote(q)
			re, err := regexp.Compile(s)
			if err != nil {
				t.Fatalf("input.metal:%d: %v", i+1, err)
			}
			exps = append(exps, &expectation{kind: m[1], line: i + 1, re: re})
			rest = strings.TrimSpace(rest[len(q):])
		}
	}
	match := func(kind string, line int, msg string) bool {
		for _, e := range exps {
			if !e.met && e.kind == kind && e.line == line && e.re.MatchString(msg) {
				e.met = true
				return true
			}
		}
		return false
	}
	for _, s := range found {
		p := f.Position(s.Pos)
		if !match("want", p.Line, s.Message) {
			t.Errorf("input.metal:%d:%d: unexpected site %s: %s", p.Line, p.Column, s.ID, s.Message)
		}
	}
	for _, s := range skips {
		p := f.Position(s.Pos)
		if !match("skip", p.Line, s.Reason) {
			t.Errorf("input.metal:%d:%d: unexpected skip: %s", p.Line, p.Column, s.Reason)
		}
	}
	for _, e := range exps {
		if !e.met {
			t.Errorf("input.metal:%d: no %s matching %q", e.line, map[string]string{"want": "site", "skip": "skip"}[e.kind], e.re)
		}
	}
}
