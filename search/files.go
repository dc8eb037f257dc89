package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"metalab/internal/atomicfile"
	"metalab/measure"
	"metalab/report"
)

// fileName is a variant's name made safe as a file name: names longer
// than a file system takes keep their start and their hash suffix.
func fileName(name string) string {
	const max = 150
	if len(name) <= max {
		return name
	}
	return name[:max-10] + "~" + name[len(name)-9:]
}

// writeFile writes b to path atomically (a synced temporary file renamed
// over it), creating its directory; an existing file with the same bytes
// is left alone.
func writeFile(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := atomicfile.Write(path, b, ".tmp-"); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ensureReportDir makes dir a report directory (report.Render writes
// only into a new, empty or report directory) before anything else is
// written into it, by rendering an empty report.
func ensureReportDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, report.ManifestName)); err == nil {
		return nil
	}
	return report.Render(dir, &report.Input{Title: "sweep starting", BaselineTGBytes: -1})
}

// A Manifest is manifest.json: what produced a sweep's results.
type Manifest struct {
	Schema   string   `json:"schema"`
	Plan     string   `json:"plan_sha256"`
	Rule     string   `json:"rule_sha256"`
	Version  string   `json:"metalab_version"`
	Backend  string   `json:"backend"`
	Device   string   `json:"device"`
	Compiler string   `json:"compiler"`
	Clock    string   `json:"clock"`  // "gpu" or "host"
	Timing   string   `json:"timing"` // what a timing on the backend is
	Shard    string   `json:"shard"`
	Store    string   `json:"store"`
	Sources  []Source `json:"sources"` // the baseline's sources, the spec and every variant snapshot, with sha256
	Updated  string   `json:"updated"`
	// WorkDir is the directory the plan's relative paths (the spec, its
	// sources, hand-written variants) are relative to: where the sweep
	// began. A sweep resumed from elsewhere finds its files through it.
	WorkDir string `json:"workdir,omitempty"`
}

// ManifestSchema is the value of manifest.json's "schema" field.
const ManifestSchema = "metalab-sweep-manifest/1"

// ReadManifest reads dir's manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Schema != ManifestSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", filepath.Join(dir, ManifestFile), m.Schema, ManifestSchema)
	}
	return &m, nil
}

// Provenance is the report's provenance from a manifest.
func (m *Manifest) Provenance() report.Provenance {
	return report.Provenance{Version: m.Version, Backend: m.Backend, Device: m.Device, Compiler: m.Compiler, Clock: m.Timing, Store: StoreFile}
}

func (w *sweep) manifest() *Manifest {
	m := &Manifest{
		Schema: ManifestSchema, Plan: w.res.Plan, Rule: w.plan.RuleSHA256, Version: w.opts.Version,
		Backend: w.info.Name, Device: w.info.Device, Compiler: w.compiler, Clock: w.info.Clock, Timing: w.info.Timing,
		Shard: w.opts.Shard.String(), Store: StoreFile, Updated: w.now().UTC().Format(time.RFC3339),
		WorkDir: w.opts.WorkDir,
	}
	if m.WorkDir == "" {
		m.WorkDir, _ = os.Getwd()
	}
	m.Sources = append(m.Sources, w.plan.Sources...)
	m.Sources = append(m.Sources, Source{Path: w.plan.Spec, SHA256: w.plan.SpecSHA256})
	ents, _ := os.ReadDir(filepath.Join(w.opts.Dir, VariantsDir))
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name()[0] == '.' {
			continue
		}
		rel := filepath.Join(VariantsDir, e.Name())
		if b, err := os.ReadFile(filepath.Join(w.opts.Dir, rel)); err == nil {
			m.Sources = append(m.Sources, Source{Path: filepath.ToSlash(rel), SHA256: sha(b)})
		}
	}
	return m
}

func (w *sweep) writeManifest() error {
	b, err := json.MarshalIndent(w.manifest(), "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(w.opts.Dir, ManifestFile), append(b, '\n'))
}

// finish renders the report of what the store holds, updates the
// manifest and counts the verdicts into the result. It runs after an
// interruption too, so it does not use the sweep's context.
func (w *sweep) finish() error {
	ctx := context.Background()
	w.progress(Event{Stage: "report", Msg: "writing the report"})
	in, err := BuildInput(ctx, w.st, w.plan, w.sp, w.manifest().Provenance(), w.opts.Dir)
	if err != nil {
		return err
	}
	if err := report.Render(w.opts.Dir, in); err != nil {
		return err
	}
	w.res.Retained = []Retained{}
	w.res.Parity = "bitwise"
	if w.plan.Parity != "" {
		w.res.Parity = w.plan.Parity + " (a tolerance: not bitwise)"
	}
	for _, v := range in.Variants {
		if v.Parity != "" {
			w.res.NotBitwise++
		}
		switch measure.Outcome(v.Verdict) {
		case measure.Retain:
			r := Retained{Name: v.Name, SHA256: v.SHA256, Patch: v.Patch, Parity: v.Parity, Point: v.Point}
			if v.HostNote != "" {
				r.HostNotes = strings.Split(v.HostNote, "; ")
			}
			if v.Patch == "" {
				r.Note = "patch refused or not written: see " + filepath.Join(LogsDir, fileName(v.Name)+".log")
				if why := w.patchNotes[v.SHA256]; why != "" {
					r.Note = why
				}
			}
			w.res.Retained = append(w.res.Retained, r)
		case measure.Reject:
			w.res.Rejected++
		case measure.Inconclusive:
			w.res.Inconclusive++
		case measure.Pending:
			w.res.Pending++
		}
	}
	w.res.Budget = w.stopped
	w.suggest(in)
	return w.writeManifest()
}

func dispatchText(n int) string {
	if n == 1 {
		return "1 dispatch"
	}
	return fmt.Sprintf("%d dispatches", n)
}

// suggest sets the result's suggestion of more dispatches per sample
// when a measurement was contaminated and its samples were too short to
// time: the shortest such median decides.
func (w *sweep) suggest(in *report.Input) {
	var short time.Duration
	var at string
	consider := func(c string, contaminated bool, medianA float64) {
		d := time.Duration(medianA)
		if contaminated && d > 0 && d < measure.MinSampleTime && (short == 0 || d < short) {
			short, at = d, c
		}
	}
	for _, c := range in.Controls {
		consider(c.Case, c.Contaminated, c.MedianA)
	}
	for _, v := range in.Variants {
		for _, c := range v.Cases {
			if c.Timing != nil {
				consider(c.Case, c.Timing.Contaminated, c.Timing.MedianA)
			}
		}
	}
	if short == 0 {
		return
	}
	per := w.plan.Confirm.Dispatches
	if per == 0 {
		per = 1
		if in := w.insts[at]; in != nil {
			per = max(in.Dispatches, 1)
		}
	}
	n := measure.SuggestDispatches(short, per, 0)
	if n == 0 {
		return
	}
	w.res.Dispatches = n
	w.res.Suggest = fmt.Sprintf("samples of %s (%s per sample) at %s are too short to time on this machine, and measurements were contaminated: sweep again with --dispatches %d (samples of about %s)",
		short.Round(time.Microsecond), dispatchText(per), at, n, (short * time.Duration(n) / time.Duration(per)).Round(time.Microsecond))
	w.logf("baseline", "%s", w.res.Suggest)
}
