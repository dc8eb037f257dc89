package property_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"metalab/backend"
	"metalab/backend/cpu/cputest"
	"metalab/check"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/all"
	"metalab/mutate/geometry"
	"metalab/spec"
	"metalab/variants"
)

// behaviourChanging lists the mutations that may change what a kernel
// computes; check may catch their variants. Every other mutation must
// keep the outputs bitwise and race-free.
var behaviourChanging = map[string]bool{"drop-barrier": true}

// opStats are the numbers the test reports per mutation.
// sampledElsewhere are specs the default sample leaves to tests of their
// own: the access kernels' needed barriers are each dropped and caught by
// TestNeededBarriersAreNeeded, and their proofs by elide-barrier's
// TestProofsSeeEveryAccess; METALAB_PROPERTY=proofs or all checks them here.
var sampledElsewhere = map[string]bool{"proof_accesses.yaml": true}

type opStats struct {
	Sites       int `json:"sites"`          // sites found on the specs' sources
	Alone       int `json:"alone"`          // variants applying one of its choices alone
	AlonePasses int `json:"alone_passes"`   // of those, bitwise identical and race-free
	RaceCatches int `json:"race_catches"`   // of those, caught by the checking mode (race, uninitialised read, lockstep, bad access, deadlock)
	Parity      int `json:"parity_catches"` // of those, caught by parity (outputs differ from the baseline's)
	Composed    int `json:"composed"`       // compositions (at once or in sequence) that apply it
	ComposedOK  int `json:"composed_passes"`
	Caught      int `json:"composed_caught"` // compositions caught, each including drop-barrier
	Infeasible  int `json:"infeasible"`      // compositions refused as conflicting
}

// A candidate is one variant to check and what it applied.
type candidate struct {
	name string
	src  []byte
	ops  []string // mutations applied, with repeats for sequences
	desc string   // refs, for failure messages
	site string   // for a variant of one site: its siteKey
}

// A siteResult is what the variants of one site, applied alone, got.
type siteResult struct {
	Source   string `json:"source"`
	Key      string `json:"key"` // siteKey: mutation, function and text hash
	ID       string `json:"id"`
	Variants int    `json:"variants"` // one per choice
	Passes   int    `json:"passes"`
	Caught   int    `json:"caught"` // behaviour-changing variants caught
}

// siteKey names a site across listings under different geometries (whose
// ordinals may differ): its mutation, function and the hash of its text
// and occurrence, "preadd kernel_norm_f32 4bb720" (two sites of one loop
// share its position), as scripts/proofs/run keys metalab sites --json.
func siteKey(fs *mutate.FoundSite) string {
	parts := strings.SplitN(fs.ID, "/", 3)
	_, tail, _ := strings.Cut(parts[len(parts)-1], "-")
	return fmt.Sprintf("%s %s %s", fs.Mutation.Name, fs.Func.Name, tail)
}

// caughtBy are the verdicts that catch a variant which changes behaviour.
var caughtBy = []check.Status{check.FailRace, check.FailUninit, check.FailLockstep, check.FailParity, check.BadAccess, check.Deadlock}

func specPaths(t *testing.T) []string {
	t.Helper()
	paths := []string{"../../kernels/qsa_prompt.yaml", "../../kernels/qsa_prep.yaml"}
	pats := []string{"../../kernels/examples/*.yaml", "testdata/*.yaml"}
	if externalSpecs() {
		// Specs of files that are not ours (the public libraries' kernels,
		// scripts/proofs): checked instead of the bundled ones.
		paths, pats = nil, filepath.SplitList(os.Getenv("METALAB_PROPERTY_SPECS"))
	}
	for _, pat := range pats {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) == 0 && externalSpecs() {
			t.Fatalf("METALAB_PROPERTY_SPECS: %s matches no file", pat)
		}
		paths = append(paths, m...)
	}
	return paths
}

// externalSpecs reports whether METALAB_PROPERTY_SPECS names the specs to
// check instead of the bundled ones.
func externalSpecs() bool { return os.Getenv("METALAB_PROPERTY_SPECS") != "" }

func TestProperty(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and checks many variants on the cpu backend; run without -short (METALAB_PROPERTY=all for every site)")
	}
	back := cputest.Shared(t)
	full := os.Getenv("METALAB_PROPERTY") == "all"
	proofs := os.Getenv("METALAB_PROPERTY") == "proofs"
	mode := map[bool]string{true: "all", false: "sample"}[full]
	if proofs {
		mode = "proofs"
	}
	start := time.Now()
	stats := map[string]*opStats{}
	for _, m := range all.Mutations {
		stats[m.Name] = &opStats{}
	}
	// The specs run two at a time (compiles dominate, one core each); each
	// keeps its own counts, added up when it ends.
	var mu sync.Mutex
	var sites []*siteResult
	t.Run("specs", func(t *testing.T) {
		for _, path := range specPaths(t) {
			name := strings.TrimSuffix(filepath.Base(path), ".yaml")
			if !full && !proofs && sampledElsewhere[filepath.Base(path)] {
				continue
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				own := map[string]*opStats{}
				for _, m := range all.Mutations {
					own[m.Name] = &opStats{}
				}
				res := runSpec(t, back, path, full, proofs, own)
				mu.Lock()
				defer mu.Unlock()
				sites = append(sites, res...)
				for op, s := range own {
					stats[op].add(s)
				}
				// The report so far: a run cut short keeps the specs
				// that finished.
				writeReport(t, mode, time.Since(start), stats, sites)
			})
		}
	})
	elapsed := time.Since(start)
	var b strings.Builder
	fmt.Fprintf(&b, "mode %s, %s\n", mode, elapsed.Round(time.Second))
	fmt.Fprintf(&b, "%-16s %6s %6s %6s %5s %7s %9s %7s %7s %11s\n", "MUTATION", "SITES", "ALONE", "PASS", "CHECK", "PARITY", "COMPOSED", "PASS", "CAUGHT", "INFEASIBLE")
	for _, m := range all.Mutations {
		s := stats[m.Name]
		fmt.Fprintf(&b, "%-16s %6d %6d %6d %5d %7d %9d %7d %7d %11d\n", m.Name, s.Sites, s.Alone, s.AlonePasses, s.RaceCatches, s.Parity, s.Composed, s.ComposedOK, s.Caught, s.Infeasible)
	}
	t.Logf("property test summary:\n%s", b.String())
	writeReport(t, mode, elapsed, stats, sites)
}

// writeReport writes METALAB_PROPERTY_REPORT, when set: the per-mutation
// numbers and the per-site results so far.
func writeReport(t *testing.T, mode string, elapsed time.Duration, stats map[string]*opStats, sites []*siteResult) {
	out := os.Getenv("METALAB_PROPERTY_REPORT")
	if out == "" {
		return
	}
	data, _ := json.MarshalIndent(map[string]any{"mode": mode, "seconds": elapsed.Seconds(), "mutations": stats, "sites": sites}, "", "  ")
	if err := os.WriteFile(out+".part", data, 0o644); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(out+".part", out); err != nil {
		t.Error(err)
	}
}

// reachedSites keeps the sites in the stages' entry functions and the
// functions they call (msl's Reached, with the template arguments each
// entry's instantiation binds: calls on objects reach their type's
// members, an operator() of one struct not those of another).
func reachedSites(t *testing.T, f *msl.File, s *spec.Spec, found []*mutate.FoundSite) []*mutate.FoundSite {
	t.Helper()
	reached := map[*msl.Func]bool{}
	byName := map[string][]*msl.Func{}
	for _, g := range f.Functions() {
		byName[g.Name] = append(byName[g.Name], g)
	}
	reach := func(fn *msl.Func, targs map[string]string) {
		reached[fn] = true
		fs, _ := f.Reached(fn, targs)
		for _, c := range fs {
			reached[c] = true
		}
	}
	for _, st := range s.Stages {
		fn, targs, err := f.Entry(st.Entry)
		if err != nil {
			t.Fatalf("stage %s: %v", st.Entry, err)
		}
		reach(fn, targs)
		// A function passed as a template argument (ggml's
		// kernel_get_rows_q<block_q4_0, 2, dequantize_q4_0>) is called
		// through its parameter's name: reached too.
		for _, a := range targs {
			for _, g := range byName[strings.TrimSpace(a)] {
				reach(g, nil)
			}
		}
	}
	var out []*mutate.FoundSite
	for _, fs := range found {
		if reached[fs.Func] {
			out = append(out, fs)
		}
	}
	return out
}

func seedOf(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64() & 0x7fffffffffffffff)
}

// barrierProofs are the operators whose proofs read thread footprints:
// METALAB_PROPERTY=proofs checks every site and choice of these.
var barrierProofs = map[string]bool{"elide-barrier": true, "cross-barrier": true, "merge-barriers": true, "split-partials": true}

func runSpec(t *testing.T, back backend.Backend, path string, full, proofs bool, stats map[string]*opStats) []*siteResult {
	s, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(s.Source)
	if err != nil {
		t.Fatal(err)
	}
	// Headers are read as the compiler reads them: the spec's include
	// directories (the public libraries' kernels include their own).
	f, err := msl.ParseOptions(s.Source, src, msl.Options{IncludeDirs: s.Includes})
	if err != nil {
		t.Fatalf("parse %s: %v", s.Source, err)
	}
	// Then as the spec's build compiles it: its -undef preprocessing
	// leaves the file's undecided branches decided.
	popts := msl.Options{IncludeDirs: s.Includes}
	popts.Undefs = buildUndefs(f, src, s, popts)
	if len(popts.Undefs) > 0 {
		if f, err = msl.ParseOptions(s.Source, src, popts); err != nil {
			t.Fatalf("parse %s with -U %v: %v", s.Source, popts.Undefs, err)
		}
	}
	// Sites are listed under the spec's geometries, as the sweep lists
	// them: barrier proofs hold for the threads per threadgroup of every
	// case, two- and three-dimensional ones included.
	geo, err := geometry.Of(s)
	if err != nil {
		t.Fatal(err)
	}
	opts := mutate.Options{Threads: geo}
	find := func(f *msl.File) ([]*mutate.FoundSite, error) {
		found, _, err := mutate.FindAllWith(f, all.Mutations, nil, opts)
		return found, err
	}
	found, err := find(f)
	if err != nil {
		t.Fatal(err)
	}
	external := externalSpecs()
	if external {
		// A public library's file holds many kernels and a spec runs a
		// few: only sites in functions its stages reach are verified by
		// it (others would pass unexecuted).
		found = reachedSites(t, f, s, found)
	}
	for _, fs := range found {
		stats[fs.Mutation.Name].Sites++
	}
	rng := rand.New(rand.NewSource(seedOf(path)))
	var cands []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		if seen[string(c.src)] {
			return
		}
		seen[string(c.src)] = true
		cands = append(cands, c)
	}
	build := func(f *msl.File, found []*mutate.FoundSite, refs []mutate.SiteRef) (*variants.Variant, error) {
		return variants.Build(f, found, refs)
	}

	// Every site alone with every choice (full), or a deterministic
	// sample: per mutation, one site drawn by the seeded generator with its
	// first choice.
	byOp := map[string][]*mutate.FoundSite{}
	for _, fs := range found {
		byOp[fs.Mutation.Name] = append(byOp[fs.Mutation.Name], fs)
	}
	for _, m := range all.Mutations {
		sites := byOp[m.Name]
		pick := sites
		every := full || proofs && barrierProofs[m.Name]
		if !every && len(sites) > 1 {
			pick = []*mutate.FoundSite{sites[rng.Intn(len(sites))]}
		}
		for _, fs := range pick {
			choices := fs.ChoiceNames()
			if !every {
				choices = choices[:1]
			}
			for _, c := range choices {
				v, err := build(f, found, []mutate.SiteRef{fs.Ref(c)})
				if err != nil {
					t.Errorf("%s=%s alone: %v", fs.ID, c, err)
					continue
				}
				add(candidate{name: v.Name, src: v.Source, ops: []string{m.Name}, desc: fs.ID + "=" + c, site: siteKey(fs)})
			}
		}
	}

	// Random compositions applied at once: conflicts are answers.
	nAtOnce, nSeq := 2, 1
	if full {
		nAtOnce, nSeq = 24, 12
	}
	if n, err := strconv.Atoi(os.Getenv("METALAB_PROPERTY_COMPOSITIONS")); err == nil && n >= 0 {
		// Fewer (or more) compositions, for files whose variants take
		// long to build (ggml-metal.metal on the cpu backend): at once n,
		// in sequence n/2.
		nAtOnce, nSeq = n, n/2
	}
	for i := 0; i < nAtOnce && len(found) > 1; i++ {
		k := 2 + rng.Intn(2)
		var refs []mutate.SiteRef
		var ops []string
		for _, j := range rng.Perm(len(found))[:min(k, len(found))] {
			fs := found[j]
			cs := fs.ChoiceNames()
			refs = append(refs, fs.Ref(cs[rng.Intn(len(cs))]))
			ops = append(ops, fs.Mutation.Name)
		}
		v, err := build(f, found, refs)
		var ce *variants.ConflictError
		switch {
		case errors.As(err, &ce):
			for _, op := range ops {
				stats[op].Infeasible++
			}
			continue
		case err != nil:
			t.Errorf("composition %v: %v (want a variant or a conflict)", refs, err)
			continue
		}
		add(candidate{name: v.Name, src: v.Source, ops: ops, desc: fmt.Sprint(refs)})
	}

	// Random sequences: list the sites of each variant again and apply one
	// of them, three steps deep.
	for i := 0; i < nSeq; i++ {
		cur, curSrc := f, src
		var ops, steps []string
		for step := 0; step < 3; step++ {
			fnd, err := find(cur)
			if err != nil {
				t.Errorf("sites of a variant (after %v): %v", steps, err)
				break
			}
			if external {
				fnd = reachedSites(t, cur, s, fnd)
			}
			if len(fnd) == 0 {
				break
			}
			fs := fnd[rng.Intn(len(fnd))]
			cs := fs.ChoiceNames()
			ref := fs.Ref(cs[rng.Intn(len(cs))])
			v, err := build(cur, fnd, []mutate.SiteRef{ref})
			if err != nil {
				t.Errorf("step %d %s after %v: %v", step, ref, steps, err)
				break
			}
			steps = append(steps, ref.String())
			ops = append(ops, fs.Mutation.Name)
			curSrc = v.Source
			cur, err = msl.ParseOptions(s.Source, curSrc, popts)
			if err != nil {
				t.Errorf("variant after %v does not parse: %v", steps, err)
				break
			}
		}
		if len(steps) > 0 {
			add(candidate{name: fmt.Sprintf("seq%d-%s", i, shortHash(curSrc)), src: curSrc, ops: ops, desc: strings.Join(steps, " then ")})
		}
	}

	if len(cands) == 0 {
		t.Logf("%s: no variants", path)
		return nil
	}
	var vs []check.Variant
	for _, c := range cands {
		vs = append(vs, check.Variant{Name: c.name, Path: c.name + ".metal", Text: c.src})
	}
	var sets []string
	for _, set := range s.Sets {
		if set.Name == "quick" {
			sets = []string{"quick"}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	t0 := time.Now()
	copts := check.Options{Spec: s, Variants: vs, Backend: back, Sets: sets, Race: true}
	if n, err := strconv.Atoi(os.Getenv("METALAB_PROPERTY_JOBS")); err == nil && n > 1 {
		// A spec's variants at once (its specs run in parallel too): for
		// many-core machines, where one spec of a hundred variants of
		// ggml-metal.metal would otherwise run alone for hours.
		copts.Jobs = n
	}
	if external {
		// The public libraries size threadgroup memory for Apple GPUs'
		// 32 KiB (candle's softmax takes 16464 bytes); the property is
		// about outputs, not the bundled kernels' 16 KiB budget.
		copts.TGLimit = 32768
	}
	rep, err := check.Run(ctx, copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d variants checked in %s", path, len(cands), time.Since(t0).Round(time.Second))
	if rep.Control.Status != check.Pass {
		t.Fatalf("control %s: %s", rep.Control.Status, rep.Control.Msg)
	}
	ids := map[string]string{}
	for _, fs := range found {
		ids[siteKey(fs)] = fs.ID
	}
	bySite := map[string]*siteResult{}
	var results []*siteResult
	for i, r := range rep.Variants {
		c := cands[i]
		if c.site != "" {
			sr := bySite[c.site]
			if sr == nil {
				sr = &siteResult{Source: s.Source, Key: c.site, ID: ids[c.site]}
				bySite[c.site] = sr
				results = append(results, sr)
			}
			sr.Variants++
			switch {
			case r.Status == check.Pass:
				sr.Passes++
			case behaviourChanging[c.ops[0]] && slices.Contains(caughtBy, r.Status):
				sr.Caught++
			}
		}
		changing := slices.ContainsFunc(c.ops, func(op string) bool { return behaviourChanging[op] })
		// A behaviour-changing operator may be caught by any of the
		// checker's verdicts: the checking mode (race, uninitialised read,
		// lockstep reliance, bad access, deadlock) or parity.
		caught := slices.Contains(caughtBy, r.Status)
		for _, op := range dedupe(c.ops) {
			st := stats[op]
			if len(c.ops) == 1 {
				st.Alone++
				switch r.Status {
				case check.Pass:
					st.AlonePasses++
				case check.FailParity:
					st.Parity++
				default:
					if caught {
						st.RaceCatches++
					}
				}
				continue
			}
			st.Composed++
			if r.Status == check.Pass {
				st.ComposedOK++
			} else if caught {
				st.Caught++
			}
		}
		switch {
		case r.Status == check.Pass:
		case changing && caught:
		default:
			msg := r.Msg
			if r.Mismatch != nil {
				msg = r.Mismatch.String()
			}
			t.Errorf("%s (%s): %s: %s\n%s", c.desc, strings.Join(c.ops, ","), r.Status, msg, firstLines(r.Log, 20))
		}
		for _, tg := range r.TGMem {
			if tg.SourceAfter >= 0 && tg.SourceAfter != tg.After {
				t.Errorf("%s: %s static threadgroup memory: source %d, compiled %d", c.desc, tg.Entry, tg.SourceAfter, tg.After)
			}
		}
	}
	return results
}

func dedupe(ops []string) []string {
	out := slices.Clone(ops)
	sort.Strings(out)
	return slices.Compact(out)
}

func shortHash(b []byte) string {
	h := fnv.New32a()
	h.Write(b)
	return fmt.Sprintf("%08x", h.Sum32())
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// add adds o's counts to s.
func (s *opStats) add(o *opStats) {
	s.Sites += o.Sites
	s.Alone += o.Alone
	s.AlonePasses += o.AlonePasses
	s.RaceCatches += o.RaceCatches
	s.Parity += o.Parity
	s.Composed += o.Composed
	s.ComposedOK += o.ComposedOK
	s.Caught += o.Caught
	s.Infeasible += o.Infeasible
}
