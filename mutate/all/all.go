// Package all lists every mutation metalab ships, in the order commands
// show them. Adding a mutation means adding it here.
package all

import (
	"metalab/mutate"
	"metalab/mutate/crossbarrier"
	"metalab/mutate/dropbarrier"
	"metalab/mutate/elidebarrier"
	"metalab/mutate/hoist"
	"metalab/mutate/mergebarriers"
	"metalab/mutate/preadd"
	"metalab/mutate/splitpartials"
	"metalab/mutate/unroll"
	"metalab/mutate/unrollpragma"
)

// Mutations is the registry of mutations, an explicit list.
var Mutations = []*mutate.Mutation{
	unrollpragma.Mutation,
	unroll.Mutation,
	hoist.Mutation,
	preadd.Mutation,
	splitpartials.Mutation,
	crossbarrier.Mutation,
	mergebarriers.Mutation,
	elidebarrier.Mutation,
	dropbarrier.Mutation,
}

// Lookup returns the mutation named name, or nil.
func Lookup(name string) *mutate.Mutation {
	for _, m := range Mutations {
		if m.Name == name {
			return m
		}
	}
	return nil
}
