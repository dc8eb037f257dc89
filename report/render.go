package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"metalab/internal/atomicfile"
)

// Schema is the value of report.json's "schema" field; it changes only
// when a field changes meaning or goes away.
const Schema = "metalab-report/1"

// ManifestName is the file that marks a directory as a report directory
// and lists the files Render wrote there with their sha256.
const ManifestName = ".metalab-report.json"

// tmpPrefix starts the name of a file being written; a leftover one (a
// crash mid-write) is removed by the next Render.
const tmpPrefix = ".metalab-tmp-"

// Errors of Render.
var (
	// ErrNotReportDir: the directory holds files but no manifest, so it
	// is not a report directory and Render writes nothing into it.
	ErrNotReportDir = errors.New("not a report directory")
	// ErrNotOurs: a file Render would write exists and Render did not
	// write it, or it changed since Render wrote it.
	ErrNotOurs = errors.New("file not written by metalab")
)

// document is report.json: the input with the summary counts and the plots.
type document struct {
	Schema string `json:"schema"`
	*Input
	Summary Summary `json:"summary"`
	Plots   []Plot  `json:"plots"`
}

// A Summary counts what became of the variants.
type Summary struct {
	Variants int `json:"variants"`
	Failed   int `json:"failed"` // failed to compile or check (proof violations apart)
	// ProofViolated counts the variants of proven operators only that
	// failed: metalab's bugs. FailedAfterTiming those whose outputs after
	// a measurement differed (rejected ones included).
	ProofViolated     int `json:"proof_violated"`
	FailedAfterTiming int `json:"failed_after_timing"`
	Timed             int `json:"timed"`
	Retained          int `json:"retained"`
	Rejected          int `json:"rejected"`
	Inconclusive      int `json:"inconclusive"`
	// HandWritten counts the variants from files given to the sweep,
	// NotBitwise those judged under a tolerance whose outputs were not
	// bitwise identical.
	HandWritten int `json:"hand_written,omitempty"`
	NotBitwise  int `json:"not_bitwise,omitempty"`
}

func summarize(in *Input) Summary {
	s := Summary{Variants: len(in.Variants), NotBitwise: len(notBitwise(in))}
	for _, v := range in.Variants {
		for _, c := range v.Cases {
			if c.Timing != nil {
				s.Timed++
				break
			}
		}
		if v.HandWritten() {
			s.HandWritten++
		}
		if v.ProofViolated {
			s.ProofViolated++
			continue
		}
		if v.Check == "fail-after-timing" {
			s.FailedAfterTiming++
		}
		switch v.Verdict {
		case "retain":
			s.Retained++
		case "reject":
			s.Rejected++
		case "inconclusive":
			s.Inconclusive++
		case "":
			if (v.Compile != "ok" || v.Check != "pass") && v.Check != "fail-after-timing" {
				s.Failed++
			}
		}
	}
	return s
}

// JSON returns report.json for in.
func JSON(in *Input, plots []Plot) ([]byte, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if plots == nil {
		plots = []Plot{}
	}
	b, err := json.MarshalIndent(document{Schema: Schema, Input: normalized(in), Summary: summarize(in), Plots: plots}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report json: %w", err)
	}
	return append(b, '\n'), nil
}

// normalized returns a copy of in whose lists are empty rather than nil,
// so that report.json has an array wherever it can have one.
func normalized(in *Input) *Input {
	out := *in
	out.Plan.Functions = nonNil(in.Plan.Functions)
	out.Plan.Cases = nonNil(in.Plan.Cases)
	out.Controls = nonNil(in.Controls)
	out.Contamination = nonNil(in.Contamination)
	out.Variants = make([]Variant, len(in.Variants))
	for i, v := range in.Variants {
		v.Refs = nonNil(v.Refs)
		v.Cases = nonNil(v.Cases)
		if len(v.Reasons) > 0 {
			// Reasons count attempts as report.md does.
			rs := make([]string, len(v.Reasons))
			for j, r := range v.Reasons {
				rs[j] = attemptsFixed(in, v.Name, r)
			}
			v.Reasons = rs
		}
		out.Variants[i] = v
	}
	if in.Ablation != nil {
		a := *in.Ablation
		a.Rows = nonNil(a.Rows)
		out.Ablation = &a
	}
	return &out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Files returns every file of the report by name relative to its
// directory: report.md, report.json and plots/*.svg.
func Files(in *Input) (map[string][]byte, error) {
	plots, files, err := Plots(in)
	if err != nil {
		return nil, err
	}
	md, err := Markdown(in, plots)
	if err != nil {
		return nil, err
	}
	js, err := JSON(in, plots)
	if err != nil {
		return nil, err
	}
	files["report.md"] = md
	files["report.json"] = js
	return files, nil
}

// manifest is the content of ManifestName.
type manifest struct {
	Schema string  `json:"schema"`
	Files  []entry `json:"files"`
}

// An entry is a file Render wrote. While Render runs, Pending is the hash
// of the content being written: a crash leaves the file with either hash,
// and both count as Render's.
type entry struct {
	Name    string `json:"name"`
	SHA256  string `json:"sha256"`
	Pending string `json:"pending,omitempty"`
}

const manifestSchema = "metalab-report-manifest/1"

// Render writes the report of in into dir: report.md, report.json,
// plots/*.svg and the manifest. dir is created if missing; an existing
// dir must be empty or a report directory (ErrNotReportDir). Render
// overwrites only files its manifest lists with the content it wrote
// (ErrNotOurs otherwise), writes each file atomically (a temporary file
// renamed into place), and removes the files of an earlier report that
// this one no longer has, unless they were changed since. Nothing is
// written when the input is invalid or a file is in the way.
func Render(dir string, in *Input) error {
	files, err := Files(in)
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	if err := render(dir, files); err != nil {
		return fmt.Errorf("render report into %s: %w", dir, err)
	}
	return nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func fileSum(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return sum(b), nil
}

func render(dir string, files map[string][]byte) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	case err != nil:
		return err
	case !info.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	old, err := readManifest(dir)
	if err != nil {
		return err
	}
	if old == nil {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), tmpPrefix) {
				return fmt.Errorf("%w: it holds %s and no %s; give an empty or new directory", ErrNotReportDir, e.Name(), ManifestName)
			}
		}
		old = &manifest{}
	}
	owned := map[string]entry{}
	for _, e := range old.Files {
		owned[e.Name] = e
	}

	// Look at every file before writing any.
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	subdirs := map[string]bool{}
	for _, name := range names {
		if d := filepath.Dir(filepath.FromSlash(name)); d != "." {
			subdirs[d] = true
		}
	}
	for d := range subdirs {
		info, err := os.Lstat(filepath.Join(dir, d))
		if err == nil && !info.IsDir() {
			return fmt.Errorf("%w: %s is not a directory", ErrNotOurs, d)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	current := map[string]string{} // name -> hash on disk, for files that exist
	for _, name := range names {
		h, err := ours(dir, name, owned)
		if err != nil {
			return err
		}
		if h != "" {
			current[name] = h
		}
	}
	var stale []string // earlier files this report no longer has, unchanged
	for _, e := range old.Files {
		if _, ok := files[e.Name]; ok {
			continue
		}
		if h, err := ours(dir, e.Name, owned); err == nil && h != "" {
			stale = append(stale, e.Name)
		}
	}
	if err := removeTemps(dir); err != nil {
		return err
	}

	// The manifest first claims every file being written, with both its
	// old and new hash, then the files, then the final manifest.
	var pending manifest
	pending.Schema = manifestSchema
	for _, name := range names {
		e := entry{Name: name, SHA256: sum(files[name])}
		if h, ok := current[name]; ok && h != e.SHA256 {
			e.SHA256, e.Pending = h, e.SHA256
		}
		pending.Files = append(pending.Files, e)
	}
	for _, name := range stale {
		pending.Files = append(pending.Files, owned[name])
	}
	if err := writeManifest(dir, &pending); err != nil {
		return err
	}
	for _, name := range names {
		if current[name] == sum(files[name]) {
			continue // unchanged
		}
		if err := writeAtomic(filepath.Join(dir, filepath.FromSlash(name)), files[name]); err != nil {
			return err
		}
	}
	for _, name := range stale {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	final := manifest{Schema: manifestSchema}
	for _, name := range names {
		final.Files = append(final.Files, entry{Name: name, SHA256: sum(files[name])})
	}
	if err := writeManifest(dir, &final); err != nil {
		return err
	}
	return syncDir(dir)
}

// ours returns the hash of dir/name when it is Render's to overwrite, ""
// when it does not exist, and ErrNotOurs when it is someone else's.
func ours(dir, name string, owned map[string]entry) (string, error) {
	path := filepath.Join(dir, filepath.FromSlash(name))
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file", ErrNotOurs, name)
	}
	e, ok := owned[name]
	if !ok {
		return "", fmt.Errorf("%w: %s is not listed in %s", ErrNotOurs, name, ManifestName)
	}
	h, err := fileSum(path)
	if err != nil {
		return "", err
	}
	if h != e.SHA256 && h != e.Pending {
		return "", fmt.Errorf("%w: %s changed since metalab wrote it; move it away to write the report", ErrNotOurs, name)
	}
	return h, nil
}

func readManifest(dir string) (*manifest, error) {
	path := filepath.Join(dir, ManifestName)
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrNotReportDir, ManifestName)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Schema != manifestSchema {
		return nil, fmt.Errorf("%w: %s is not a metalab report manifest", ErrNotReportDir, ManifestName)
	}
	for _, e := range m.Files {
		if !validName(e.Name) {
			return nil, fmt.Errorf("%w: %s lists %q", ErrNotReportDir, ManifestName, e.Name)
		}
	}
	return &m, nil
}

// validName reports whether name is a file a report may hold: relative,
// clean, inside the directory.
func validName(name string) bool {
	if name == "" || name == ManifestName || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) {
		return false
	}
	c := filepath.ToSlash(filepath.Clean(filepath.FromSlash(name)))
	return c == name && c != "." && !strings.HasPrefix(c, "../") && c != ".."
}

func writeManifest(dir string, m *manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, ManifestName), append(b, '\n'))
}

// writeAtomic writes b to path through a temporary file in the same
// directory, synced, then renamed over path.
func writeAtomic(path string, b []byte) error { return atomicfile.Write(path, b, tmpPrefix) }

// removeTemps removes the temporary files a crashed Render left in dir and
// its plots directory.
func removeTemps(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, "plots")} {
		ents, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), tmpPrefix) && e.Type().IsRegular() {
				if err := os.Remove(filepath.Join(d, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func syncDir(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, "plots")} {
		f, err := os.Open(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		f.Sync() // best effort: not every file system syncs directories
		f.Close()
	}
	return nil
}
