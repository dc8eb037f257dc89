// Package darwincheck type-checks Go packages as they build for another
// platform — darwin/arm64 with cgo, by default — on any host, without a C
// compiler or an SDK, and lists the calls they make into darwinkit.
//
// It is how code that only builds on a Mac (backend/metal) is checked on
// Linux. `go list -deps` run with the target's GOOS, GOARCH and
// CGO_ENABLED=1 selects each package's files and orders packages
// dependencies first; it does not run cgo. Each package is then parsed and
// checked with go/types, FakeImportC accepting every C.name. Dependencies
// outside the standard library (darwinkit) are checked with their function
// bodies; the standard library by its declarations only.
//
// What this cannot see: anything written C.name (the Objective-C preamble is
// never compiled), vet's analyses, and what happens at run time.
package darwincheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// A Config says where and for what platform to check.
type Config struct {
	Dir    string // directory go list runs in: inside the module; "" means the current one
	GOOS   string // default "darwin"
	GOARCH string // default "arm64"
	Tags   []string
	// Tests also checks each named package's _test.go files, in-package
	// and external, as they build for the target.
	Tests bool
}

// A Package is one checked package.
type Package struct {
	ImportPath string
	Dir        string
	Standard   bool
	Target     bool     // named by the patterns, not only a dependency
	GoFiles    []string // file names as go list selected them, cgo files included
	TestFiles  []string // with Config.Tests: the _test.go files checked (in-package and external)
	Files      []*ast.File
	Types      *types.Package
	Info       *types.Info // Uses, Defs and Selections; nil for the standard library
	Errors     []error     // go list, parse and type errors, in order
}

// A Result is the outcome of Check.
type Result struct {
	GOOS, GOARCH string
	Fset         *token.FileSet
	Packages     []*Package // dependencies first
}

// Errors returns every error of every package.
func (r *Result) Errors() []error {
	var out []error
	for _, p := range r.Packages {
		out = append(out, p.Errors...)
	}
	return out
}

// Package returns the checked package with the import path, or nil.
func (r *Result) Package(path string) *Package {
	for _, p := range r.Packages {
		if p.ImportPath == path {
			return p
		}
	}
	return nil
}

// Targets returns the packages the patterns named.
func (r *Result) Targets() []*Package {
	var out []*Package
	for _, p := range r.Packages {
		if p.Target {
			out = append(out, p)
		}
	}
	return out
}

// Files returns how many files were checked in all, and how many of them
// belong to the named packages (their test files included).
func (r *Result) Files() (total, targets int) {
	for _, p := range r.Packages {
		n := len(p.GoFiles) + len(p.TestFiles)
		total += n
		if p.Target {
			targets += n
		}
	}
	return total, targets
}

// listPkg is what go list -json says about a package.
type listPkg struct {
	ImportPath   string
	Dir          string
	Standard     bool
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	TestImports  []string
	XTestImports []string
	ImportMap    map[string]string
	Module       *struct{ GoVersion string }
	Error        *struct{ Err string }
	DepsErrors   []*struct{ Err string }
}

// Check type-checks the packages matching patterns, and everything they
// import, as they build for cfg's platform with cgo on. It returns an
// error when go list fails or the patterns select no Go file; type errors
// are in the Result.
func Check(ctx context.Context, cfg Config, patterns ...string) (*Result, error) {
	if cfg.GOOS == "" {
		cfg.GOOS = "darwin"
	}
	if cfg.GOARCH == "" {
		cfg.GOARCH = "arm64"
	}
	if len(patterns) == 0 {
		return nil, errors.New("darwincheck: no packages named")
	}
	named, err := goList(ctx, cfg, false, patterns)
	if err != nil {
		return nil, err
	}
	targets := map[string]*listPkg{}
	var extra []string
	for _, p := range named {
		targets[p.ImportPath] = p
		if cfg.Tests {
			extra = append(append(extra, p.TestImports...), p.XTestImports...)
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("darwincheck: %s matched no packages", strings.Join(patterns, " "))
	}
	all := append(append([]string{}, patterns...), uniq(extra, "C")...)
	pkgs, err := goList(ctx, cfg, true, all)
	if err != nil {
		return nil, err
	}
	c := &checker{res: &Result{GOOS: cfg.GOOS, GOARCH: cfg.GOARCH, Fset: token.NewFileSet()},
		done: map[string]*types.Package{"unsafe": types.Unsafe}, sizes: types.SizesFor("gc", cfg.GOARCH)}
	if c.sizes == nil {
		return nil, fmt.Errorf("darwincheck: unknown GOARCH %q", cfg.GOARCH)
	}
	for _, lp := range pkgs {
		if lp.ImportPath == "unsafe" {
			continue
		}
		_, isTarget := targets[lp.ImportPath]
		c.check(lp, isTarget)
	}
	if cfg.Tests {
		for _, lp := range pkgs {
			if _, ok := targets[lp.ImportPath]; ok {
				c.checkTests(lp)
			}
		}
	}
	files := 0
	for _, p := range c.res.Targets() {
		files += len(p.GoFiles)
	}
	if files == 0 {
		var why []string
		for _, p := range c.res.Targets() {
			for _, e := range p.Errors {
				why = append(why, "\n\t"+e.Error())
			}
		}
		return nil, fmt.Errorf("darwincheck: %s has no Go files for %s/%s%s", strings.Join(patterns, " "), cfg.GOOS, cfg.GOARCH, strings.Join(why, ""))
	}
	return c.res, nil
}

// goList runs go list -e -json for the target platform.
func goList(ctx context.Context, cfg Config, deps bool, patterns []string) ([]*listPkg, error) {
	args := []string{"list", "-e", "-json"}
	if deps {
		args = append(args, "-deps")
	}
	if len(cfg.Tags) > 0 {
		args = append(args, "-tags", strings.Join(cfg.Tags, ","))
	}
	args = append(append(args, "--"), patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = cfg.Dir
	cmd.Env = append(os.Environ(), "GOOS="+cfg.GOOS, "GOARCH="+cfg.GOARCH, "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("darwincheck: go %s (GOOS=%s GOARCH=%s CGO_ENABLED=1): %w\n%s", strings.Join(args, " "), cfg.GOOS, cfg.GOARCH, err, stderr.String())
	}
	var pkgs []*listPkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listPkg)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("darwincheck: decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// A checker checks packages in dependency order.
type checker struct {
	res   *Result
	done  map[string]*types.Package
	sizes types.Sizes
}

func (c *checker) config(lp *listPkg, bodies bool, errs *[]error) *types.Config {
	goVersion := ""
	if lp.Module != nil && lp.Module.GoVersion != "" {
		goVersion = "go" + lp.Module.GoVersion
	}
	return &types.Config{
		GoVersion:        goVersion,
		FakeImportC:      true,
		IgnoreFuncBodies: !bodies,
		Sizes:            c.sizes,
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if m, ok := lp.ImportMap[path]; ok {
				path = m
			}
			if tp := c.done[path]; tp != nil {
				return tp, nil
			}
			return nil, fmt.Errorf("package %q was not loaded before %s", path, lp.ImportPath)
		}),
		Error: func(err error) { *errs = append(*errs, err) },
	}
}

func newInfo() *types.Info {
	return &types.Info{
		Uses:       map[*ast.Ident]types.Object{},
		Defs:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Instances:  map[*ast.Ident]types.Instance{},
	}
}

// check parses and checks one package.
func (c *checker) check(lp *listPkg, target bool) {
	p := &Package{ImportPath: lp.ImportPath, Dir: lp.Dir, Standard: lp.Standard, Target: target,
		GoFiles: append(append([]string{}, lp.GoFiles...), lp.CgoFiles...)}
	c.res.Packages = append(c.res.Packages, p)
	if lp.Error != nil {
		p.Errors = append(p.Errors, fmt.Errorf("%s: %s", lp.ImportPath, lp.Error.Err))
	}
	for _, e := range lp.DepsErrors {
		p.Errors = append(p.Errors, fmt.Errorf("%s: dependency: %s", lp.ImportPath, e.Err))
	}
	p.Files = c.parse(p, lp.Dir, p.GoFiles)
	if !lp.Standard {
		p.Info = newInfo()
	}
	tp, _ := c.config(lp, !lp.Standard, &p.Errors).Check(lp.ImportPath, c.res.Fset, p.Files, p.Info)
	p.Types = tp
	c.done[lp.ImportPath] = tp
}

// checkTests checks a target's in-package test files with the package, and
// its external test package, keeping only errors in the test files (the
// package's own were reported by check).
func (c *checker) checkTests(lp *listPkg) {
	p := c.res.Package(lp.ImportPath)
	if p == nil || len(lp.TestGoFiles)+len(lp.XTestGoFiles) == 0 {
		return
	}
	inTest := func(err error) bool {
		var te types.Error
		if errors.As(err, &te) {
			name := filepath.Base(te.Fset.Position(te.Pos).Filename)
			return strings.HasSuffix(name, "_test.go")
		}
		return true
	}
	keep := func(errs []error) {
		for _, e := range errs {
			if inTest(e) {
				p.Errors = append(p.Errors, e)
			}
		}
	}
	if len(lp.TestGoFiles) > 0 {
		tests := c.parse(p, lp.Dir, lp.TestGoFiles)
		files := append(slices.Clone(p.Files), tests...)
		var errs []error
		info := newInfo()
		_, _ = c.config(lp, true, &errs).Check(lp.ImportPath, c.res.Fset, files, info)
		keep(errs)
		p.TestFiles = append(p.TestFiles, lp.TestGoFiles...)
	}
	if len(lp.XTestGoFiles) > 0 {
		xtests := c.parse(p, lp.Dir, lp.XTestGoFiles)
		var errs []error
		_, _ = c.config(lp, true, &errs).Check(lp.ImportPath+"_test", c.res.Fset, xtests, newInfo())
		keep(errs)
		p.TestFiles = append(p.TestFiles, lp.XTestGoFiles...)
	}
}

func (c *checker) parse(p *Package, dir string, names []string) []*ast.File {
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(c.res.Fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			p.Errors = append(p.Errors, err)
		}
		if f != nil {
			files = append(files, f)
		}
	}
	return files
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// uniq returns xs without duplicates and without drop, in first-seen order.
func uniq(xs []string, drop string) []string {
	seen := map[string]bool{drop: true}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
