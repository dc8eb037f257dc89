package search

import (
	"fmt"
	"slices"
	"strings"

	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/all"
	"metalab/spec"
	"metalab/variants"
)

// A Space is what a sweep searches: the sites the plan's operators find in
// the owned functions and the atoms made of them, each one choice of one
// site. A candidate variant is a set of atoms; two atoms of one site, or
// atoms whose edits overlap, cannot be combined (the candidate is
// infeasible, an answer rather than a failure).
type Space struct {
	File  *msl.File
	Sites []*mutate.FoundSite
	Atoms []Atom // in source order of the sites, then the site's order of choices
	// Files are the plan's hand-written variants (Settings.Files), in
	// order, once LoadFiles has read them.
	Files []HandWritten
	// Points are the points the parameter strategy tries
	// (Settings.Points), and Fixed the point the edits and hand-written
	// variants run at (Settings.Point; empty: the default).
	Points []spec.Point
	Fixed  spec.Point
	// pointOf is the point of each candidate at one, by its key.
	pointOf map[string]spec.Point
}

// An Atom is one choice of one site.
type Atom struct {
	Site   *mutate.FoundSite
	Choice string
	Ref    mutate.SiteRef
}

// String returns the atom's ref, "unroll/qsa_flash/2-3df3fa=by2".
func (a Atom) String() string { return a.Ref.String() }

// Label describes atom i in words: the operator, where, the choice's
// message and what the site is.
func (s *Space) Label(i int) string {
	a := s.Atoms[i]
	msg := a.Choice
	if c, err := a.Site.Choice(a.Choice); err == nil && c.Message != "" {
		msg = c.Message
	}
	p := s.File.Position(a.Site.Pos)
	return fmt.Sprintf("%s at %d:%d: %s (%s)", a.Site.Mutation.Name, p.Line, p.Column, msg, a.Site.Message)
}

// NewSpace finds the sites of the plan's operators in the plan's
// functions of f and lists the atoms: every choice of every site, or each
// site's first choice (Settings.Choices "first"); with Settings.Refs, those
// atoms only, in the order given.
func NewSpace(f *msl.File, p *Plan) (*Space, error) {
	var muts []*mutate.Mutation
	for _, name := range p.Search.Ops {
		m := lookupOp(name)
		if m == nil {
			var names []string
			for _, m := range all.Mutations {
				names = append(names, m.Name)
			}
			return nil, fmt.Errorf("unknown operator %q (operators: %s)", name, strings.Join(names, ", "))
		}
		muts = append(muts, m)
	}
	if p.Search.OnlyFiles() || p.Search.Strategy == "" {
		// Hand-written variants or parameters alone: no operator's
		// sites.
		sp := &Space{File: f}
		return sp, sp.parsePoints(p)
	}
	if len(muts) == 0 {
		muts = all.Mutations
	}
	sites, _, err := mutate.FindAllWith(f, muts, p.Functions, mutate.Options{Threads: p.Geometry})
	if err != nil {
		return nil, err
	}
	sp := &Space{File: f, Sites: sites}
	if err := sp.parsePoints(p); err != nil {
		return nil, err
	}
	for _, s := range sites {
		names := s.ChoiceNames()
		if p.Search.Choices == "first" {
			names = names[:1]
		}
		for _, c := range names {
			sp.Atoms = append(sp.Atoms, Atom{Site: s, Choice: c, Ref: siteRef(s, c)})
		}
	}
	if len(p.Search.Refs) > 0 {
		var atoms []Atom
		for _, text := range p.Search.Refs {
			ref, err := mutate.ParseSiteRef(text)
			if err != nil {
				return nil, err
			}
			site, c, err := mutate.Resolve(sites, ref)
			if err != nil {
				return nil, fmt.Errorf("--refs: %w", err)
			}
			a := Atom{Site: site, Choice: c.Name, Ref: siteRef(site, c.Name)}
			if slices.ContainsFunc(atoms, func(b Atom) bool { return b.Ref.String() == a.Ref.String() }) {
				return nil, fmt.Errorf("--refs: %s is given twice", a.Ref)
			}
			atoms = append(atoms, a)
		}
		sp.Atoms = atoms
	}
	return sp, nil
}

// siteRef names choice of site s, as its id says (the macro flags the
// site was found under included, where ids carry them).
func siteRef(s *mutate.FoundSite, choice string) mutate.SiteRef {
	r, err := mutate.ParseSiteRef(s.ID + "=" + choice)
	if err != nil {
		// Find made the id and the mutation named the choice: both parse.
		panic(fmt.Sprintf("site %s choice %s: %v", s.ID, choice, err))
	}
	return r
}

// Build builds the candidate made of atoms (indices into s.Atoms). An
// infeasible combination is a *variants.ConflictError.
func (s *Space) Build(atoms []int) (*variants.Variant, error) {
	refs := make([]mutate.SiteRef, len(atoms))
	for i, a := range atoms {
		refs[i] = s.Atoms[a].Ref
	}
	return variants.Build(s.File, s.Sites, refs)
}

// Infeasible reports whether err says a combination of atoms cannot be
// built (two choices of one site, overlapping edits): variants.Build's
// conflict, which names the two sites that conflict.
func Infeasible(err error) bool {
	return err != nil && strings.Contains(err.Error(), " conflict: ")
}

// sameSite reports whether atom a shares a site with any of set.
func (s *Space) sameSite(set []int, a int) bool {
	for _, b := range set {
		if s.Atoms[b].Site == s.Atoms[a].Site {
			return true
		}
	}
	return false
}

// index returns the atoms' indices of refs, -1 for a ref not an atom.
func (s *Space) index(ref string) int {
	for i, a := range s.Atoms {
		if a.Ref.String() == ref {
			return i
		}
	}
	return -1
}
