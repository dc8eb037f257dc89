// Package mutate defines metalab's mutations: structured source transforms
// of one owned kernel function, shaped like go/analysis analyzers. A
// Mutation is a static description whose Run inspects one function through
// a Pass and reports Sites; each Site offers alternative Choices, each a set
// of byte edits, of which at most one is applied. Mutations compute edits
// and never write files; Find runs them, validates what they report and
// gives every site a stable id that later commands refer to.
package mutate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
)

// A Mutation describes one kind of source transform.
type Mutation struct {
	Name string            // kebab-case: lowercase letters, digits and '-', e.g. "unroll-pragma"
	Doc  string            // what it does and when it skips a place; first line is a summary
	Run  func(*Pass) error // reports the sites of Pass.Func; an error is a bug, not "no sites"
}

// A Pass is the interface between a Mutation and the driver for one
// function of one file.
type Pass struct {
	Mutation *Mutation
	File     *msl.File
	Func     *msl.Func  // the owned function being inspected; Body is non-nil
	Report   func(Site) // records a place the mutation applies
	Skip     func(Skip) // records a place looked at and skipped, for --why

	scopes     map[*msl.Func]*msl.Scope // shared by the passes of one Find
	geometries []msl.Dims               // Options.Threads
}

// Scope returns the variables and memoised facts of Func. Passes of one
// Find share it, so facts one mutation computed (thread footprints, say)
// serve the others.
func (p *Pass) Scope() *msl.Scope {
	if p.scopes == nil {
		p.scopes = map[*msl.Func]*msl.Scope{}
	}
	sc := p.scopes[p.Func]
	if sc == nil {
		sc = msl.ScopeOf(p.File, p.Func)
		sc.Geometries = p.geometries
		p.scopes[p.Func] = sc
	}
	return sc
}

// A Site is a place in the function where a mutation applies.
type Site struct {
	Pos, End int    // byte range the site is about (e.g. the loop); its text is hashed into the id
	Message  string // what the site is, e.g. "for loop with 8 iterations"
	Choices  []Choice
	// Binds are the template parameter values the site's proof rests on
	// ("N_READS=4", the value every instantiation gives), hashed into the
	// id with the text: a saved id is refused once the instantiations
	// give another value, though the loop's text is unchanged.
	Binds string
}

// A Choice is one way to mutate a Site; the Choices of a Site are
// alternatives and at most one is applied.
type Choice struct {
	Name    string // short name used in site refs: "full", "count4", "drop"
	Message string // verb phrase: "unroll by 4"
	Edits   []edit.Edit
}

// A Skip is a place a mutation looked at and deliberately left alone.
type Skip struct {
	Pos, End int
	Reason   string // e.g. "loop hidden behind macro FOR_UNROLL"
}

// Validate reports an error if any mutation has an invalid or duplicate
// name, an empty Doc or a nil Run.
func Validate(muts []*Mutation) error {
	seen := map[string]bool{}
	var errs []error
	for i, m := range muts {
		if m == nil {
			errs = append(errs, fmt.Errorf("mutation %d is nil", i))
			continue
		}
		if !validName(m.Name) {
			errs = append(errs, fmt.Errorf("mutation %q: name must be lowercase letters, digits and '-', starting with a letter", m.Name))
		}
		if seen[m.Name] {
			errs = append(errs, fmt.Errorf("mutation %q: duplicate name", m.Name))
		}
		seen[m.Name] = true
		if strings.TrimSpace(m.Doc) == "" {
			errs = append(errs, fmt.Errorf("mutation %q: empty Doc", m.Name))
		}
		if m.Run == nil {
			errs = append(errs, fmt.Errorf("mutation %q: nil Run", m.Name))
		}
	}
	return errors.Join(errs...)
}

// validName reports whether s is kebab-case: [a-z][a-z0-9-]*, not ending in '-'.
func validName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validChoiceName reports whether s is a usable choice name: [a-z0-9-]+.
func validChoiceName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// A FoundSite is a Site reported by a mutation, with its stable id.
type FoundSite struct {
	ID       string // "<mutation>/<function>/<ordinal>-<hash>[@<flags>]", e.g. "unroll-pragma/reduce/2-a1b2c3"
	Mutation *Mutation
	Func     *msl.Func
	Ordinal  int    // 0-based position among this mutation's sites in this function, in source order
	Hash     string // first 6 hex digits of the sha256 of the site's text and its occurrence among identical texts
	Flags    Flags  // the macro flags the source was parsed under
	Site
}

// Ref returns the ref naming the site's choice (its first when "").
func (s *FoundSite) Ref(choice string) SiteRef {
	return SiteRef{Mutation: s.Mutation.Name, Func: s.Func.Name, Ordinal: s.Ordinal, Hash: s.Hash, Flags: s.Flags, Choice: choice}
}

// Choice returns the site's choice named name; "" means the first choice.
func (s *FoundSite) Choice(name string) (*Choice, error) {
	if name == "" {
		return &s.Choices[0], nil
	}
	for i := range s.Choices {
		if s.Choices[i].Name == name {
			return &s.Choices[i], nil
		}
	}
	return nil, &UnknownChoiceError{ID: s.ID, Choice: name, Choices: s.ChoiceNames()}
}

// ChoiceNames returns the names of the site's choices, in order.
func (s *FoundSite) ChoiceNames() []string {
	var names []string
	for _, c := range s.Choices {
		names = append(names, c.Name)
	}
	return names
}

// A FoundSkip is a Skip reported by a mutation in a function.
type FoundSkip struct {
	Mutation *Mutation
	Func     *msl.Func
	Skip
}

// Find runs each mutation over each function of f named in fns (every
// function with a body if fns is empty) and returns the sites in order of
// function, mutation and position.
func Find(f *msl.File, muts []*Mutation, fns []string) ([]*FoundSite, error) {
	sites, _, err := FindAll(f, muts, fns)
	return sites, err
}

// FindAll is like Find but also returns the places the mutations looked at
// and skipped, with their reasons.
func FindAll(f *msl.File, muts []*Mutation, fns []string) ([]*FoundSite, []*FoundSkip, error) {
	return FindAllWith(f, muts, fns, Options{})
}

// Options are what FindAllWith knows of how the kernels run.
type Options struct {
	// Threads are the threads per threadgroup each kernel is dispatched
	// with, by entry name (a name or a host_name; a spec's stages, every
	// case). Barrier proofs in a kernel, or in a helper every kernel
	// reaching it has geometries for, then hold for those geometries only
	// and follow thread positions in two and three dimensions; elsewhere
	// they assume one-dimensional threadgroups of up to 1024 threads and
	// refuse kernels that read a position's y or z.
	Threads map[string][]msl.Dims
}

// geometries returns the threads per threadgroup fn runs with under
// opts, or nil when not every kernel reaching it has them.
func (opts Options) geometries(f *msl.File, fn *msl.Func) []msl.Dims {
	if len(opts.Threads) == 0 {
		return nil
	}
	of := func(k *msl.Func) []msl.Dims {
		for entry, ds := range opts.Threads {
			for _, g := range f.FuncsNamed(entry) {
				if g == k {
					return ds
				}
			}
		}
		return nil
	}
	kernels := []*msl.Func{fn}
	if fn.Kind != msl.Kernel {
		// Every kernel that may run the helper (through calls on objects
		// and calls whose callee cannot be told too): a proof made for
		// one kernel's geometry runs in all of them.
		kernels, _ = f.KernelsMayReach(fn)
	}
	var out []msl.Dims
	for _, k := range kernels {
		ds := of(k)
		if len(ds) == 0 {
			return nil
		}
		for _, d := range ds {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// FindAllWith is FindAll under opts.
func FindAllWith(f *msl.File, muts []*Mutation, fns []string, opts Options) ([]*FoundSite, []*FoundSkip, error) {
	funcs, err := Funcs(f, fns)
	if err != nil {
		return nil, nil, err
	}
	var sites []*FoundSite
	var skips []*FoundSkip
	flags := FlagsOf(f)
	// Ordinals count per (mutation, function name), so overloads of one
	// name share a sequence, in source order.
	next := map[[2]string]int{}
	scopes := map[*msl.Func]*msl.Scope{}
	for _, fn := range funcs {
		// A function a macro writes has its offsets in the expansion's
		// file; skips there are reported at the #define's text.
		ff := f.FileOf(fn)
		if rb := fn.Body.Rbrace; rb < 0 || rb >= len(ff.Src) || ff.Src[rb] != '}' || ff.Src[fn.Body.Lbrace] != '{' {
			// A body the parser had to close itself (malformed input): its
			// extent is a guess, and edits near its end could leave it.
			for _, m := range muts {
				skips = append(skips, &FoundSkip{Mutation: m, Func: fn, Skip: Skip{Pos: ff.OriginPos(fn.Pos), End: ff.OriginPos(fn.End), Reason: "the function's body is not closed; it is not mutated"}})
			}
			continue
		}
		geo := opts.geometries(f, fn)
		for _, m := range muts {
			var got []Site
			pass := &Pass{
				Mutation: m,
				File:     ff,
				Func:     fn,
				Report:   func(s Site) { got = append(got, s) },
				Skip: func(s Skip) {
					s.Pos, s.End = ff.OriginPos(s.Pos), ff.OriginPos(s.End)
					skips = append(skips, &FoundSkip{Mutation: m, Func: fn, Skip: s})
				},
				scopes:     scopes,
				geometries: geo,
			}
			if err := m.Run(pass); err != nil {
				return nil, nil, fmt.Errorf("mutation %s on %s: %w", m.Name, fn.Name, err)
			}
			slices.SortStableFunc(got, func(a, b Site) int { return a.Pos - b.Pos })
			// Identical site texts are told apart by their occurrence, k
			// of n, so that a shifted ordinal is noticed.
			count := map[string]int{}
			for _, s := range got {
				if s.Pos >= 0 && s.End <= len(ff.Src) && s.Pos <= s.End {
					count[hashedText(ff.Src[s.Pos:s.End], s.Binds)]++
				}
			}
			seen := map[string]int{}
			for _, s := range got {
				// Inside a macro body, or after a macro the front end
				// cannot see: a skip for every mutation alike.
				if why, ok := ff.MacroCaveat(s.Pos); ok {
					pos := ff.OriginPos(s.Pos)
					skips = append(skips, &FoundSkip{Mutation: m, Func: fn, Skip: Skip{Pos: pos, End: pos, Reason: s.Message + ": " + why}})
					continue
				}
				if err := validateSite(f, fn, s); err != nil {
					pos := f.Position(min(max(s.Pos, 0), len(f.Src)))
					return nil, nil, fmt.Errorf("mutation %s reported an invalid site at %s (a bug in the mutation): %w", m.Name, pos, err)
				}
				key := [2]string{m.Name, fn.Name}
				ord := next[key]
				next[key]++
				text := hashedText(f.Src[s.Pos:s.End], s.Binds)
				h := hashSite(text, seen[text], count[text])
				seen[text]++
				sites = append(sites, &FoundSite{
					ID:       SiteRef{Mutation: m.Name, Func: fn.Name, Ordinal: ord, Hash: h, Flags: flags}.ID(),
					Mutation: m,
					Func:     fn,
					Ordinal:  ord,
					Hash:     h,
					Flags:    flags,
					Site:     s,
				})
			}
		}
	}
	skips = append(skips, headerSkips(f, muts, fns)...)
	return sites, skips, nil
}

// headerKernels returns the entry points of f whose kernel is defined in a
// header f includes (MLX's softmax.h, instantiated from softmax.metal by
// instantiate_kernel), grouped by kernel function in order of their first
// entry point, restricted to names (entry names or function names) when
// names is not empty.
func headerKernels(f *msl.File, names []string) (order []*msl.Func, eps map[*msl.Func][]msl.EntryPoint) {
	eps = map[*msl.Func][]msl.EntryPoint{}
	for _, ep := range f.EntryPoints() {
		ff := f.FileOf(ep.Func)
		if ff == nil || ff == f || ff.Root() == f {
			continue // the file's own, or written by a macro used in it
		}
		if len(names) > 0 && !slices.Contains(names, ep.Name) && !slices.Contains(names, ep.Func.Name) {
			continue
		}
		if eps[ep.Func] == nil {
			order = append(order, ep.Func)
		}
		eps[ep.Func] = append(eps[ep.Func], ep)
	}
	return order, eps
}

// headerReason says why a kernel defined in a header is not analysed.
func headerReason(f *msl.File, fn *msl.Func, eps []msl.EntryPoint) string {
	which := eps[0].Name
	if len(eps) > 1 {
		which = fmt.Sprintf("%s and %d more", which, len(eps)-1)
	}
	return fmt.Sprintf("kernel %s (%s) is defined in header %s: sites and edits stay in the kernel file, and a variant cannot change a header; not analysed", fn.Name, which, filepath.Base(f.FileOf(fn).Name))
}

// headerSkips reports, for every mutation, each kernel of f defined in a
// header, at its first entry point (the instantiation in f).
func headerSkips(f *msl.File, muts []*Mutation, names []string) []*FoundSkip {
	order, eps := headerKernels(f, names)
	var out []*FoundSkip
	for _, fn := range order {
		why := headerReason(f, fn, eps[fn])
		pos := eps[fn][0].Pos
		for _, m := range muts {
			out = append(out, &FoundSkip{Mutation: m, Func: fn, Skip: Skip{Pos: pos, End: pos, Reason: why}})
		}
	}
	return out
}

// Funcs returns the functions of f named in names, in source order (every
// function with a body if names is empty), or an error naming an unknown
// name and listing the valid ones.
func Funcs(f *msl.File, names []string) ([]*msl.Func, error) {
	all := f.Functions()
	if len(names) == 0 {
		return all, nil
	}
	want := map[*msl.Func]bool{}
	for _, n := range names {
		fns := f.FuncsNamed(n)
		if len(fns) == 0 {
			if order, eps := headerKernels(f, []string{n}); len(order) > 0 {
				return nil, fmt.Errorf("%s in %s: %s", n, f.Name, headerReason(f, order[0], eps[order[0]]))
			}
			return nil, fmt.Errorf("no function %q with a body in %s (functions: %s)", n, f.Name, strings.Join(FuncNames(f), ", "))
		}
		for _, fn := range fns {
			want[fn] = true
		}
	}
	var out []*msl.Func
	for _, fn := range all {
		if want[fn] {
			out = append(out, fn)
		}
	}
	return out, nil
}

// FuncNames returns the distinct names of the functions of f that have a
// body, in source order, members qualified by their struct.
func FuncNames(f *msl.File) []string {
	var names []string
	for _, fn := range f.Functions() {
		if n := msl.QualifiedName(fn); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// validateSite checks a reported site: its range and every choice's edits
// lie inside the function, choices are named uniquely and their edits do
// not overlap.
func validateSite(f *msl.File, fn *msl.Func, s Site) error {
	scope := []edit.Span{{Start: fn.Pos, End: fn.End}}
	if s.Pos < fn.Pos || s.End > fn.End || s.Pos > s.End {
		return fmt.Errorf("site range [%d,%d) outside function %s [%d,%d)", s.Pos, s.End, fn.Name, fn.Pos, fn.End)
	}
	if len(s.Choices) == 0 {
		return errors.New("site has no choices")
	}
	seen := map[string]bool{}
	for _, c := range s.Choices {
		if !validChoiceName(c.Name) {
			return fmt.Errorf("choice name %q must be lowercase letters, digits and '-'", c.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("duplicate choice %q", c.Name)
		}
		seen[c.Name] = true
		if len(c.Edits) == 0 {
			return fmt.Errorf("choice %q has no edits", c.Name)
		}
		if err := edit.Validate(len(f.Src), c.Edits); err != nil {
			return fmt.Errorf("choice %q: %w", c.Name, err)
		}
		if err := edit.CheckScope(c.Edits, scope); err != nil {
			return fmt.Errorf("choice %q: %w", c.Name, err)
		}
	}
	return nil
}

// hashSite returns the first 6 hex digits of the sha256 of a site's text
// and its occurrence k of n among the sites of its mutation in its
// function with that very text.
// hashedText is what a site's hash covers: its text, and the template
// parameter values its proof rests on, when there are any.
func hashedText(text []byte, binds string) string {
	if binds == "" {
		return string(text)
	}
	return string(text) + "\x00" + binds
}

func hashSite(text string, k, n int) string {
	s := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d/%d", text, k, n)))
	return hex.EncodeToString(s[:3])
}

// A SiteRef names a site, and optionally one of its choices, as written on
// the command line: "unroll-pragma/reduce/2-a1b2c3=full", or with the
// macro flags the sites were listed under,
// "unroll-pragma/reduce/2-a1b2c3@BLOCK:64,-DEBUG=full".
type SiteRef struct {
	Mutation string
	Func     string
	Ordinal  int
	Hash     string // "" names the site by ordinal alone
	Flags    Flags  // the macro flags the site was listed under
	Choice   string // "" means the site's first choice
}

// ID returns the site id part of r, without the choice.
func (r SiteRef) ID() string {
	id := fmt.Sprintf("%s/%s/%d", r.Mutation, r.Func, r.Ordinal)
	if r.Hash != "" {
		id += "-" + r.Hash
	}
	if tag := r.Flags.Tag(); tag != "" {
		id += "@" + tag
	}
	return id
}

// String returns r in the form ParseSiteRef accepts.
func (r SiteRef) String() string {
	if r.Choice == "" {
		return r.ID()
	}
	return r.ID() + "=" + r.Choice
}

// ParseSiteRef parses "<mutation>/<function>/<ordinal>[-<hash>][@<flags>][=<choice>]".
// The hash guards a saved id against a source that changed since the sites
// were listed; a ref without it names the site by ordinal alone. The flags
// are those the sites were listed under (see Flags.Tag); a ref without them
// was listed under none.
func ParseSiteRef(s string) (SiteRef, error) {
	bad := func(why string) (SiteRef, error) {
		return SiteRef{}, fmt.Errorf("bad site %q: %s (want <mutation>/<function>/<n>[-<hash>][@<flags>][=<choice>])", s, why)
	}
	id, choice, hasChoice := strings.Cut(s, "=")
	if hasChoice && !validChoiceName(choice) {
		return bad("bad choice name")
	}
	id, tag, hasTag := strings.Cut(id, "@")
	var flags Flags
	if hasTag {
		fl, err := ParseFlagsTag(tag)
		if err != nil || tag == "" {
			if err == nil {
				err = errors.New("empty macro flags after '@'")
			}
			return bad(err.Error())
		}
		flags = fl
	}
	parts := strings.Split(id, "/")
	if len(parts) != 3 {
		return bad("want three '/'-separated parts")
	}
	if !validName(parts[0]) {
		return bad("bad mutation name")
	}
	if parts[1] == "" {
		return bad("empty function name")
	}
	ordS, hash, hasHash := strings.Cut(parts[2], "-")
	ord, err := strconv.Atoi(ordS)
	if err != nil || ord < 0 || strconv.Itoa(ord) != ordS {
		return bad("bad ordinal")
	}
	if hasHash && (len(hash) != 6 || strings.Trim(hash, "0123456789abcdef") != "") {
		return bad("hash must be 6 lowercase hex digits")
	}
	return SiteRef{Mutation: parts[0], Func: parts[1], Ordinal: ord, Hash: hash, Flags: flags, Choice: choice}, nil
}

// Resolve finds the site ref names among found (sites of the current
// source) and the chosen choice. It refuses, with a typed error, a ref
// listed under other macro flags than found was (*FlagsError), a stale ref
// whose site text no longer hashes to the ref's hash (*StaleError), a ref
// to no site (*UnknownSiteError) and an unknown choice
// (*UnknownChoiceError).
func Resolve(found []*FoundSite, ref SiteRef) (*FoundSite, *Choice, error) {
	n := 0
	for _, s := range found {
		if s.Mutation.Name != ref.Mutation || s.Func.Name != ref.Func {
			continue
		}
		if !s.Flags.Equal(ref.Flags) {
			return nil, nil, &FlagsError{Ref: ref, Listed: ref.Flags, Now: s.Flags}
		}
		n++
		if s.Ordinal != ref.Ordinal {
			continue
		}
		if ref.Hash != "" && s.Hash != ref.Hash {
			return nil, nil, &StaleError{Ref: ref, Now: s.Hash}
		}
		c, err := s.Choice(ref.Choice)
		if err != nil {
			return nil, nil, err
		}
		return s, c, nil
	}
	return nil, nil, &UnknownSiteError{Ref: ref, Count: n}
}

// Inspect calls visit for each statement of fn's body in depth-first
// order, descending into a statement's children while visit returns true.
func Inspect(fn *msl.Func, visit func(msl.Stmt) bool) {
	if fn.Body != nil {
		msl.Walk(fn.Body, visit)
	}
}
