package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"metalab/internal/inputfile"
	"metalab/measure"
	"metalab/msl"
	"metalab/report"
	"metalab/search/store"
)

// A Sweep is a sweep's directory opened for reading: its plan, as the
// store holds it, the baseline snapshot parsed as the sweep parsed it, and
// the space of atoms.
type Sweep struct {
	Dir   string
	Plan  *Plan
	Store *store.Store
	File  *msl.File
	Space *Space
}

// Open opens the sweep in dir (or the store file dir names) read-only.
// The baseline snapshot must have the plan's sha256.
func Open(dir string) (*Sweep, error) {
	storePath := dir
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		storePath = filepath.Join(dir, StoreFile)
	} else {
		dir = filepath.Dir(dir)
	}
	st, err := store.OpenExisting(storePath)
	if err != nil {
		return nil, err
	}
	sw := &Sweep{Dir: dir, Store: st}
	if err := sw.load(); err != nil {
		st.Close()
		return nil, err
	}
	return sw, nil
}

func (sw *Sweep) load() error {
	p, err := ParsePlan(sw.Store.PlanJSON())
	if err != nil {
		return fmt.Errorf("%s: %w", sw.Store.Path(), err)
	}
	sw.Plan = p
	snap := filepath.Join(sw.Dir, BaselineDir, filepath.Base(p.Kernel))
	src, err := inputfile.ReadFile(snap)
	if err != nil {
		return fmt.Errorf("baseline snapshot: %w", err)
	}
	if got := sha(src); got != p.Baseline {
		return fmt.Errorf("baseline snapshot %s has sha256 %s, the plan's baseline is %s: it was changed", snap, got[:12], p.Baseline[:12])
	}
	if sw.File, err = ParseKernel(p, src, inputfile.ReadFile); err != nil {
		return err
	}
	if sw.Space, err = NewSpace(sw.File, p); err != nil {
		return err
	}
	// Hand-written variants from the sweep's own snapshots of them.
	return sw.Space.LoadFiles(p, true, func(vf VariantFile) ([]byte, error) {
		return inputfile.ReadFile(filepath.Join(sw.Dir, VariantsDir, fileName(vf.Name())+filepath.Ext(p.Kernel)))
	})
}

// ParseKernel parses src as the plan's kernel, with its macros, as the
// sweep found its sites (includes are looked for beside p.Kernel and in
// the plan's include directories).
func ParseKernel(p *Plan, src []byte, readFile func(string) ([]byte, error)) (*msl.File, error) {
	defs := map[string]string{}
	for _, d := range p.Macros.Defines {
		name, val, ok := strings.Cut(d, "=")
		if !ok {
			val = "1"
		}
		defs[name] = val
	}
	return msl.ParseOptions(p.Kernel, src, msl.Options{Defines: defs, Undefs: p.Macros.Undefs, IncludeDirs: p.Macros.IncludeDirs, ReadFile: readFile})
}

// Close closes the store.
func (sw *Sweep) Close() error { return sw.Store.Close() }

// Rerender renders the report of the sweep in dir again from its store,
// and writes the patch of every retained variant that has none (verified
// against repo when given). It returns the report's input.
func Rerender(ctx context.Context, dir, repo string) (*report.Input, error) {
	sw, err := Open(dir)
	if err != nil {
		return nil, err
	}
	defer sw.Close()
	prov := report.Provenance{Store: StoreFile}
	if m, err := ReadManifest(sw.Dir); err == nil {
		prov = m.Provenance()
	} else if rows, err := sw.Store.Results(ctx, store.Query{Stage: store.StageCompile, Limit: 1}); err == nil && len(rows) > 0 {
		prov.Backend, prov.Device = rows[0].Backend, rows[0].Device
	}
	rows, err := sw.Store.Results(ctx, store.Query{Stage: store.StageDecision, Status: string(measure.Retain)})
	if err != nil {
		return nil, err
	}
	var perr []error
	for _, r := range rows {
		rel := filepath.Join(PatchesDir, fileName(r.Name)+".patch")
		if _, err := os.Stat(filepath.Join(sw.Dir, rel)); err == nil {
			continue
		}
		if _, pt, _ := splitPointRef(r.Refs); len(pt) > 0 {
			// A point's patch carries its #define edits and host-side
			// notes, which need the spec: only the sweep writes it.
			if len(readHostNotes(sw.Dir, r.Name)) == 0 {
				perr = append(perr, fmt.Errorf("patch of %s: a point's patch is written by the sweep (resume it to write it)", r.Name))
			}
			continue
		}
		v, err := RebuildVariant(sw.Space, r.Refs)
		if err == nil && v.Sha256 != r.Variant {
			err = fmt.Errorf("rebuilt with sha256 %s, recorded as %s", v.Sha256[:12], r.Variant[:12])
		}
		var header []string
		if err == nil {
			header, err = PatchHeader(ctx, sw.Store, sw.Plan, r.Variant)
		}
		if err == nil {
			_, _, err = WritePatch(ctx, sw.Dir, sw.Plan, sw.File, v, PatchOptions{Repo: repo, Header: header})
		}
		if err != nil && !(len(r.Refs) == 1 && IsFileRef(r.Refs[0]) && strings.Contains(err.Error(), "change outside")) {
			// A hand-written variant's change outside --fn is refused by
			// the plan's scope: the report says so, it is no error.
			perr = append(perr, fmt.Errorf("patch of %s: %w", r.Name, err))
		}
	}
	in, err := BuildInput(ctx, sw.Store, sw.Plan, sw.Space, prov, sw.Dir)
	if err != nil {
		return nil, err
	}
	if err := ensureReportDir(sw.Dir); err != nil && !errors.Is(err, report.ErrNotReportDir) {
		return nil, err
	}
	if err := report.Render(sw.Dir, in); err != nil {
		return nil, err
	}
	return in, errors.Join(perr...)
}

// MergeDirs merges the stores of the sweeps srcs (directories or store
// files: shards of one plan) into dst (a directory, or a store file
// ending in .db). Into a directory it also copies what a report needs
// that it lacks (the plan, the manifest, the baseline and variant
// snapshots, the logs), so that Rerender can render it. Mixed plans or
// baselines are refused and nothing is merged (store.Merge).
func MergeDirs(dst string, srcs []string) error {
	var stores, dirs []string
	for _, s := range srcs {
		if info, err := os.Stat(s); err == nil && info.IsDir() {
			stores = append(stores, filepath.Join(s, StoreFile))
			dirs = append(dirs, s)
		} else {
			stores = append(stores, s)
		}
	}
	if strings.HasSuffix(dst, ".db") {
		return store.Merge(dst, stores...)
	}
	// Mixed plans are refused before the directory is made.
	var plan, base string
	for _, p := range stores {
		st, err := store.OpenExisting(p)
		if err != nil {
			return fmt.Errorf("merge into %s: %w", dst, err)
		}
		h, b := st.PlanHash(), st.Baseline()
		st.Close()
		switch {
		case base == "":
			plan, base = h, b
		case b != base:
			return fmt.Errorf("merge into %s: %w", dst, &store.MismatchError{Path: p, Kind: store.ErrOtherBaseline, Have: b, Want: base})
		case h != plan:
			return fmt.Errorf("merge into %s: %w", dst, &store.MismatchError{Path: p, Kind: store.ErrOtherPlan, Have: h, Want: plan})
		}
	}
	if len(dirs) == 0 {
		return fmt.Errorf("merge into directory %s: give the shards' directories, not their store files (or merge into a .db file)", dst)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := ensureReportDir(dst); err != nil {
		return err
	}
	if err := store.Merge(filepath.Join(dst, StoreFile), stores...); err != nil {
		return err
	}
	for _, d := range dirs {
		for _, name := range []string{PlanFile, ManifestFile, BaselineDir, VariantsDir, LogsDir, PatchesDir} {
			if err := copyMissing(filepath.Join(d, name), filepath.Join(dst, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyMissing copies the file or directory tree src to dst, leaving files
// dst has alone.
func copyMissing(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == src {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if _, err := os.Lstat(to); err == nil {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return writeFile(to, b)
	})
}
