package report

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// tree returns every file under dir with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.Type()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			out[filepath.ToSlash(rel)] = "-> " + target
			return nil
		}
		b, err := os.ReadFile(path)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestRender(t *testing.T) {
	in := goldenInput(t, "metal_confirm.txtar")
	want, err := Files(in)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if err := Render(dir, in); err != nil {
		t.Fatal(err)
	}
	got := tree(t, dir)
	for name, b := range want {
		if got[name] != string(b) {
			t.Errorf("%s: not what Files returns", name)
		}
	}
	var m manifest
	if err := json.Unmarshal([]byte(got[ManifestName]), &m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if len(got) != len(want)+1 || len(m.Files) != len(want) {
		t.Errorf("files %v, manifest %+v; want %d files and the manifest", keys(got), m.Files, len(want))
	}
	for _, e := range m.Files {
		if e.SHA256 != sum(want[e.Name]) || e.Pending != "" {
			t.Errorf("manifest entry %+v: want sha256 %s, nothing pending", e, sum(want[e.Name]))
		}
	}

	// Again with the same input: the same files.
	if err := Render(dir, in); err != nil {
		t.Fatalf("second Render: %v", err)
	}
	if again := tree(t, dir); !reflect.DeepEqual(again, got) {
		t.Errorf("rendering twice changed the directory: %v", keys(again))
	}

	// A smaller sweep: the plots it no longer has go, files the user
	// added beside the report stay.
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plots", "mine.svg"), []byte("<svg/>"), 0o644))
	// An earlier plot the user annotated is theirs now: it stays.
	must(t, os.WriteFile(filepath.Join(dir, "plots", "ratio-pos0-0.svg"), []byte("<svg>annotated</svg>"), 0o644))
	small := goldenInput(t, "cpu_emulator.txtar")
	if err := Render(dir, small); err != nil {
		t.Fatalf("Render of a smaller sweep: %v", err)
	}
	wantSmall, _ := Files(small)
	got = tree(t, dir)
	for _, name := range keys(got) {
		if _, ok := wantSmall[name]; !ok && name != ManifestName && name != "notes.txt" && name != "plots/mine.svg" && name != "plots/ratio-pos0-0.svg" {
			t.Errorf("%s of the earlier report was left behind", name)
		}
	}
	if got["notes.txt"] != "mine" || got["plots/mine.svg"] != "<svg/>" || got["plots/ratio-pos0-0.svg"] != "<svg>annotated</svg>" {
		t.Error("Render touched files it did not write")
	}
	if strings.Contains(got[ManifestName], "ratio-pos0-0.svg") {
		t.Error("the manifest still claims the file the user changed")
	}
	if got["report.md"] != string(wantSmall["report.md"]) {
		t.Error("report.md is not the smaller sweep's")
	}
}

func TestRenderRefuses(t *testing.T) {
	in := goldenInput(t, "cpu_emulator.txtar")
	outside := filepath.Join(t.TempDir(), "outside.md")
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) // dir exists, rendered once unless noRender
		fresh   bool                           // dir is made by setup alone
		wantErr error
		wantMsg string
	}{
		{name: "not empty, no manifest", fresh: true, setup: func(t *testing.T, dir string) {
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "thesis.md"), []byte("chapter 1"), 0o644))
		}, wantErr: ErrNotReportDir},
		{name: "report.md not ours", fresh: true, setup: func(t *testing.T, dir string) {
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"schema":"metalab-report-manifest/1","files":[]}`), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "report.md"), []byte("my own report"), 0o644))
		}, wantErr: ErrNotOurs, wantMsg: "report.md is not listed"},
		{name: "report.md edited", setup: func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "report.md"), []byte("edited by hand"), 0o644))
		}, wantErr: ErrNotOurs, wantMsg: "report.md changed since metalab wrote it"},
		{name: "report.json a symlink out", setup: func(t *testing.T, dir string) {
			must(t, os.WriteFile(outside, []byte("keep"), 0o644))
			must(t, os.Remove(filepath.Join(dir, "report.json")))
			must(t, os.Symlink(outside, filepath.Join(dir, "report.json")))
		}, wantErr: ErrNotOurs, wantMsg: "not a regular file"},
		{name: "plots a symlink", setup: func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, "plots")))
			must(t, os.Symlink(t.TempDir(), filepath.Join(dir, "plots")))
		}, wantErr: ErrNotOurs, wantMsg: "plots is not a directory"},
		{name: "bad manifest", setup: func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"schema":"x"}`), 0o644))
		}, wantErr: ErrNotReportDir},
		{name: "manifest naming a file outside", setup: func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"schema":"metalab-report-manifest/1","files":[{"name":"../x","sha256":"00"}]}`), 0o644))
		}, wantErr: ErrNotReportDir},
		{name: "a file, not a directory", fresh: true, setup: func(t *testing.T, dir string) {
			must(t, os.WriteFile(dir, []byte("x"), 0o644))
		}, wantMsg: "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "report")
			if !tt.fresh {
				must(t, Render(dir, in))
			}
			tt.setup(t, dir)
			before := tree(t, dir)
			outsideBefore, _ := os.ReadFile(outside)
			err := Render(dir, in)
			if err == nil {
				t.Fatal("Render succeeded, want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Render: %v, want %v", err, tt.wantErr)
			}
			if tt.wantMsg != "" && !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Render: %v, want it to say %q", err, tt.wantMsg)
			}
			if after := tree(t, dir); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused Render changed the directory: %v, was %v", keys(after), keys(before))
			}
			if b, _ := os.ReadFile(outside); string(b) != string(outsideBefore) {
				t.Error("a refused Render wrote through a symlink")
			}
		})
	}
}

// TestRenderAfterCrash: a Render killed midway leaves its pending
// manifest, files with either their old or their new content, and
// temporary files; the next Render takes all of them as its own.
func TestRenderAfterCrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	small := goldenInput(t, "cpu_emulator.txtar")
	must(t, Render(dir, small))
	full := goldenInput(t, "metal_confirm.txtar")
	newFiles, _ := Files(full)
	oldMD, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	// What a crash after writing report.json (new) but not report.md (old)
	// leaves: the pending manifest and a temporary file.
	pending := manifest{Schema: manifestSchema}
	for _, name := range []string{"report.md", "report.json"} {
		pending.Files = append(pending.Files, entry{Name: name, SHA256: sum(map[string][]byte{"report.md": oldMD}[name]), Pending: sum(newFiles[name])})
	}
	must(t, writeManifest(dir, &pending))
	must(t, os.WriteFile(filepath.Join(dir, "report.json"), newFiles["report.json"], 0o644))
	must(t, os.WriteFile(filepath.Join(dir, tmpPrefix+"report.md-0123"), []byte("half"), 0o644))

	if err := Render(dir, full); err != nil {
		t.Fatalf("Render after a crash: %v", err)
	}
	got := tree(t, dir)
	for name := range got {
		if strings.Contains(name, tmpPrefix) {
			t.Errorf("temporary file %s left behind", name)
		}
	}
	if got["report.md"] != string(newFiles["report.md"]) || got["report.json"] != string(newFiles["report.json"]) {
		t.Error("report files are not the new report's")
	}
}

func TestRenderInvalidInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	in := goldenInput(t, "cpu_emulator.txtar")
	in.Variants[0].Cases[0].Timing.Ratio = math.NaN()
	if err := Render(dir, in); err == nil || !strings.Contains(err.Error(), "not a finite number") {
		t.Fatalf("Render of a NaN ratio: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Error("Render of an invalid input made the directory")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(in *Input)
		wantErr string
	}{
		{"valid", func(*Input) {}, ""},
		{"nil timing samples", func(in *Input) { in.Variants[0].Cases[0].Timing.Samples = nil }, ""},
		{"unnamed variant", func(in *Input) { in.Variants[1].Name = "" }, "variant 1 has no name"},
		{"duplicate", func(in *Input) { in.Variants[1].Name = in.Variants[0].Name }, "listed twice"},
		{"infinite median", func(in *Input) { in.Variants[0].Cases[0].Timing.MedianB = math.Inf(1) }, "not a finite number"},
		{"negative pairs", func(in *Input) { in.Variants[0].Cases[0].Timing.Pairs = -1 }, "-1 pairs"},
		{"NaN interval", func(in *Input) { in.Variants[0].Cases[0].Timing.CI.High = math.NaN() }, "interval"},
		{"negative sample", func(in *Input) { in.Variants[0].Cases[0].Timing.Samples[2].A = -5 }, "pair 2"},
		{"unnamed case", func(in *Input) { in.Variants[0].Cases[0].Case = "" }, "a case has no name"},
		{"control NaN spread", func(in *Input) { in.Controls[0].RatioMax = math.NaN() }, "control at quick"},
		{"control without case", func(in *Input) { in.Controls[0].Case = "" }, "a control has no case"},
		{"NaN level", func(in *Input) { in.Plan.CILevel = math.NaN() }, "ci_level"},
		{"hand-written", func(in *Input) { in.Variants[0].Kind = KindHandWritten }, ""},
		{"unknown kind", func(in *Input) { in.Variants[0].Kind = "handwritten" }, `kind "handwritten"`},
		{"attempt counts", func(in *Input) { in.Contamination = []Note{{Text: "x", Attempts: 3, ContaminatedAttempts: 3}} }, ""},
		{"more contaminated than attempts", func(in *Input) { in.Contamination = []Note{{Text: "x", Attempts: 1, ContaminatedAttempts: 3}} }, "3 of 1 attempts"},
		{"negative attempts", func(in *Input) { in.Contamination = []Note{{Text: "x", Attempts: -1}} }, "contamination note 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := goldenInput(t, "cpu_emulator.txtar")
			tt.edit(in)
			err := in.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate: %v, want %q", err, tt.wantErr)
			}
		})
	}
	var nilIn *Input
	if err := nilIn.Validate(); err == nil {
		t.Error("Validate of nil succeeded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
