package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/msl"
	"metalab/report"
	"metalab/search/store"
)

// writeVariants writes hand-written variants of the fixture's kernel:
// drop (the barrier dropped by hand, inside k), outside (the same and a
// line outside k) and big (over the threadgroup memory limit).
func (fx fixture) writeVariants(t *testing.T) (drop, outside, big string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fx.dir, "k.metal"))
	if err != nil {
		t.Fatal(err)
	}
	base := string(b)
	barrier := "    threadgroup_barrier(mem_flags::mem_threadgroup); // fake: time 1ms\n"
	if !strings.Contains(base, barrier) {
		t.Fatal("the fixture has no barrier line")
	}
	d := strings.Replace(base, barrier, "", 1)
	o := strings.Replace(d, "struct P { uint c; };", "struct P { uint c; }; // edited outside k", 1)
	g := strings.Replace(base, "threadgroup uchar s[64];", "threadgroup uchar s[64];\n    threadgroup uchar pad[32768];\n    pad[tid] = 0;", 1)
	dir := filepath.Join(fx.dir, "mine")
	os.MkdirAll(dir, 0o755)
	drop, outside, big = filepath.Join(dir, "drop.metal"), filepath.Join(dir, "outside.metal"), filepath.Join(dir, "big.metal")
	for p, text := range map[string]string{drop: d, outside: o, big: g} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return drop, outside, big
}

func (fx fixture) loadFiles(t *testing.T, paths ...string) []VariantFile {
	t.Helper()
	src, _ := os.ReadFile(filepath.Join(fx.dir, "k.metal"))
	f, err := msl.Parse(filepath.Join(fx.dir, "k.metal"), src)
	if err != nil {
		t.Fatal(err)
	}
	files, err := LoadVariantFiles(paths, os.ReadFile, src, f, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestLoadVariantFiles(t *testing.T) {
	fx := newFixture(t)
	drop, outside, _ := fx.writeVariants(t)
	files := fx.loadFiles(t, drop, outside)
	if files[0].OutsideFn != "" {
		t.Errorf("drop changes only k, got outside %q", files[0].OutsideFn)
	}
	if !strings.Contains(files[1].OutsideFn, "k.metal:9: change outside k") {
		t.Errorf("outside: %q, want the line outside k", files[1].OutsideFn)
	}
	if n := files[0].Name(); !strings.HasPrefix(n, "file.drop-") || len(n) != len("file.drop-")+8 || !strings.HasPrefix(files[0].SHA256, n[len("file.drop-"):]) {
		t.Errorf("name %q is not file.drop- and its sha256's start (%s)", n, files[0].SHA256)
	}
	src, _ := os.ReadFile(filepath.Join(fx.dir, "k.metal"))
	f, _ := msl.Parse("k.metal", src)
	if _, err := LoadVariantFiles([]string{filepath.Join(fx.dir, "k.metal")}, os.ReadFile, src, f, []string{"k"}); err == nil || !strings.Contains(err.Error(), "baseline's bytes") {
		t.Errorf("the baseline as a variant: %v", err)
	}
	if _, err := LoadVariantFiles([]string{drop, drop}, os.ReadFile, src, f, []string{"k"}); err == nil || !strings.Contains(err.Error(), "same bytes") {
		t.Errorf("one file twice: %v", err)
	}
	got, err := ExpandVariantPaths([]string{filepath.Join(fx.dir, "mine")})
	if err != nil || len(got) != 3 || filepath.Base(got[0]) != "big.metal" {
		t.Errorf("a directory: %v %v, want its three .metal files in name order", got, err)
	}
	if _, err := ExpandVariantPaths([]string{t.TempDir()}); err == nil {
		t.Error("an empty directory was taken")
	}
}

// TestSweepHandWritten sweeps hand-written variants alone (no operator):
// the dropped barrier is retained with a patch; the one that edits
// outside k is retained without one (its patch is refused by the scope)
// and labelled so; the one over the threadgroup memory limit is not
// compiled. With Scope "file" the outside variant gets its patch.
func TestSweepHandWritten(t *testing.T) {
	fx := newFixture(t)
	drop, outside, big := fx.writeVariants(t)
	files := fx.loadFiles(t, drop, outside, big)
	out := filepath.Join(t.TempDir(), "sweep")
	opts := fx.options(t, out, func(o *PlanOptions) { o.Search.Ops, o.Search.Files = nil, files })
	opts.ReadFile = os.ReadFile
	res := mustRun(t, opts)
	if res.Variants != 3 || res.Failed != 1 || len(res.Retained) != 2 {
		t.Fatalf("variants %d, failed %d, retained %+v; want 3, 1 and 2", res.Variants, res.Failed, res.Retained)
	}
	for _, r := range res.Retained {
		switch {
		case strings.HasPrefix(r.Name, "file.drop-"):
			if r.Patch == "" {
				t.Errorf("drop has no patch: %s", r.Note)
			}
		case strings.HasPrefix(r.Name, "file.outside-"):
			if r.Patch != "" || !strings.Contains(r.Note, "change outside k") || !strings.Contains(r.Note, "--scope file") {
				t.Errorf("outside: patch %q, note %q; want it refused by the scope", r.Patch, r.Note)
			}
		default:
			t.Errorf("retained %s", r.Name)
		}
	}
	sw, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Store.Close()
	rows, _ := sw.Store.Results(context.Background(), store.Query{Stage: store.StageCompile, Status: "fail-tgmem"})
	if len(rows) != 1 || !strings.HasPrefix(rows[0].Name, "file.big-") {
		t.Errorf("fail-tgmem rows %+v, want big's", rows)
	}
	in, err := BuildInput(context.Background(), sw.Store, sw.Plan, sw.Space, report.Provenance{}, out)
	if err != nil {
		t.Fatal(err)
	}
	if v := reportVariant(t, in, "file.outside-"); !v.OutsideFn || !strings.Contains(v.Outside, "change outside k") || v.Kind != report.KindHandWritten || v.File == "" || v.FileSHA256 != files[1].SHA256 || v.PatchRefused == "" {
		t.Errorf("outside in the report: %+v; want it hand-written, its file and sha256, changing code outside k, its patch refused", v)
	}

	file := filepath.Join(t.TempDir(), "file")
	opts = fx.options(t, file, func(o *PlanOptions) { o.Search.Ops, o.Search.Files, o.Search.Scope = nil, files[1:2], "file" })
	opts.ReadFile = os.ReadFile
	res = mustRun(t, opts)
	if len(res.Retained) != 1 || res.Retained[0].Patch == "" {
		t.Errorf("with scope file: %+v, want outside with its patch", res.Retained)
	}
}

// TestHandWrittenResume resumes a sweep of a hand-written variant to the
// same results, and refuses one whose file changed since.
func TestHandWrittenResume(t *testing.T) {
	fx := newFixture(t)
	drop, _, _ := fx.writeVariants(t)
	files := fx.loadFiles(t, drop)
	out := filepath.Join(t.TempDir(), "sweep")
	edit := func(o *PlanOptions) { o.Search.Ops, o.Search.Files = nil, files }
	opts := fx.options(t, out, edit)
	opts.ReadFile = os.ReadFile
	mustRun(t, opts)
	opts = fx.options(t, out, edit)
	opts.ReadFile, opts.Resume = os.ReadFile, true
	var taken []string
	opts.onResult = func(stage string, k store.Key) { taken = append(taken, stage) }
	res := mustRun(t, opts)
	if len(res.Retained) != 1 || len(taken) != 0 {
		t.Errorf("resumed: retained %+v, took %v again; want the one retained and nothing redone", res.Retained, taken)
	}
	os.WriteFile(drop, []byte("// edited\n"), 0o644)
	opts = fx.options(t, out, edit)
	opts.ReadFile, opts.Resume = os.ReadFile, true
	_, err := Run(context.Background(), opts)
	var fc *FileChangedError
	if !errors.As(err, &fc) || !strings.Contains(err.Error(), "changed since the sweep began") {
		t.Errorf("resumed with the file changed: %v, want a FileChangedError", err)
	}
}
