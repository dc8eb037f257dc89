// Package variants builds named kernel variants: a base source plus an
// ordered set of chosen mutation sites, merged into one edit set, scoped to
// the owned functions and applied. A variant's name is derived from its
// choices and content, so the same choices always give the same name.
package variants

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
)

// A Variant is a base source with chosen site choices applied.
type Variant struct {
	Name       string           // deterministic: sorted choices joined with '+', then '-' and a content hash
	Source     []byte           // the variant's text
	Sha256     string           // hex sha256 of Source
	BasePath   string           // the base file's name as parsed
	BaseSha256 string           // hex sha256 of the base source
	Flags      mutate.Flags     // the macro flags (-D, -U) the base was parsed and the refs resolved under
	Refs       []mutate.SiteRef // applied refs, sorted by id, choices filled in
	Edits      []edit.Edit      // the merged edits, against the base, sorted
}

// A ConflictError reports two refs that cannot be applied together: two
// choices of one site, or choices whose edits overlap. The combination is
// infeasible; that is an answer about the combination, not a failure.
type ConflictError struct {
	A, B mutate.SiteRef
	Why  string // "a site takes at most one choice", "their edits overlap (...)"
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("sites %s and %s conflict: %s", e.A, e.B, e.Why)
}

// Build resolves refs against the sites found in f (the base), merges the
// chosen choices' edits, checks that they stay inside the functions the
// sites belong to and applies them. A ref to a stale or unknown site, or
// one listed under other macro flags, is a mutate.RefError; two refs to one
// site, and combinations whose edits overlap, are a *ConflictError naming
// both. With no refs, the variant is the base itself.
func Build(f *msl.File, found []*mutate.FoundSite, refs []mutate.SiteRef) (*Variant, error) {
	type chosen struct {
		site *mutate.FoundSite
		ref  mutate.SiteRef
		c    *mutate.Choice
	}
	var picks []chosen
	flags := mutate.FlagsOf(f)
	for _, r := range refs {
		// Checked first: under other flags the site may not exist at all.
		if !r.Flags.Equal(flags) {
			return nil, &mutate.FlagsError{Ref: r, Listed: r.Flags, Now: flags}
		}
		s, c, err := mutate.Resolve(found, r)
		if err != nil {
			return nil, err
		}
		r.Choice = c.Name
		for _, p := range picks {
			if p.site == s {
				return nil, &ConflictError{A: p.ref, B: r, Why: "a site takes at most one choice"}
			}
		}
		picks = append(picks, chosen{s, r, c})
	}
	slices.SortFunc(picks, func(a, b chosen) int { return strings.Compare(a.ref.String(), b.ref.String()) })

	var merged []edit.Edit
	var owners []mutate.SiteRef // owners[i] is the ref whose edits merged[i] came from
	var scopes []edit.Span
	for _, p := range picks {
		m, err := edit.Merge(merged, p.c.Edits)
		if err != nil {
			var ce *edit.ConflictError
			if errors.As(err, &ce) {
				other := owners[slices.Index(merged, ce.X)]
				return nil, &ConflictError{A: other, B: p.ref, Why: fmt.Sprintf("their edits overlap (%v, %v)", ce.X, ce.Y)}
			}
			return nil, fmt.Errorf("merge %s: %w", p.ref, err)
		}
		// Recompute owners for the merged order.
		next := make([]mutate.SiteRef, len(m))
		for i, e := range m {
			if j := slices.Index(merged, e); j >= 0 {
				next[i] = owners[j]
			} else {
				next[i] = p.ref
			}
		}
		merged, owners = m, next
		sp := edit.Span{Start: p.site.Func.Pos, End: p.site.Func.End}
		if !slices.Contains(scopes, sp) {
			scopes = append(scopes, sp)
		}
	}
	if err := edit.CheckScope(merged, scopes); err != nil {
		return nil, fmt.Errorf("build variant: %w", err)
	}
	out, err := edit.Apply(f.Src, merged)
	if err != nil {
		return nil, fmt.Errorf("build variant: %w", err)
	}
	v := &Variant{
		Source:     out,
		Sha256:     sum(out),
		BasePath:   f.Name,
		BaseSha256: sum(f.Src),
		Flags:      mutate.FlagsOf(f),
		Edits:      merged,
	}
	var names []string
	for _, p := range picks {
		v.Refs = append(v.Refs, p.ref)
		names = append(names, refName(p.ref))
	}
	if len(names) == 0 {
		names = []string{"base"}
	}
	v.Name = strings.Join(names, "+") + "-" + v.Sha256[:8]
	return v, nil
}

// refName is the filesystem-safe form of a ref used in variant names:
// "unroll-pragma.reduce.0=full".
func refName(r mutate.SiteRef) string {
	return fmt.Sprintf("%s.%s.%d=%s", r.Mutation, safe(r.Func), r.Ordinal, r.Choice)
}

// safe replaces characters that are awkward in file names.
func safe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
