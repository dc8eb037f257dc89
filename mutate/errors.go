package mutate

import (
	"fmt"
	"strings"
)

// A RefError is an error resolving a site ref: the ref does not name a
// site of the current source the way it was listed. Callers tell the
// cases apart with errors.As on the concrete types below; every one of
// them is a RefError.
type RefError interface {
	error
	refError()
}

// A StaleError reports a ref whose site text changed since it was listed:
// the site at its ordinal now hashes to Now.
type StaleError struct {
	Ref SiteRef
	Now string
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("stale site %s: the text of %s site %d in %s now hashes to %s; list sites again", e.Ref.ID(), e.Ref.Mutation, e.Ref.Ordinal, e.Ref.Func, e.Now)
}

// An UnknownSiteError reports a ref to an ordinal the function does not
// have; Count is how many sites of the ref's mutation it has.
type UnknownSiteError struct {
	Ref   SiteRef
	Count int
}

func (e *UnknownSiteError) Error() string {
	return fmt.Sprintf("no site %s: %s has %d %s site(s)", e.Ref.ID(), e.Ref.Func, e.Count, e.Ref.Mutation)
}

// An UnknownChoiceError reports a choice the site does not offer.
type UnknownChoiceError struct {
	ID      string
	Choice  string
	Choices []string
}

func (e *UnknownChoiceError) Error() string {
	return fmt.Sprintf("site %s has no choice %q (choices: %s)", e.ID, e.Choice, strings.Join(e.Choices, ", "))
}

// A FlagsError reports a ref listed under other macro flags (-D, -U) than
// the source is now parsed with: the flags decide #if branches, trip counts
// and so which site an ordinal names.
type FlagsError struct {
	Ref    SiteRef
	Listed Flags
	Now    Flags
}

func (e *FlagsError) Error() string {
	return fmt.Sprintf("site %s was listed with %s but is resolved with %s (%s): give the same -D/-U as the listing, or list the sites again",
		e.Ref.ID(), e.Listed, e.Now, strings.Join(e.Listed.Diff(e.Now), "; "))
}

func (*StaleError) refError()         {}
func (*UnknownSiteError) refError()   {}
func (*UnknownChoiceError) refError() {}
func (*FlagsError) refError()         {}
