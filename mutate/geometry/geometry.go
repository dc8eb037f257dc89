// Package geometry gives the barrier proofs the threads per threadgroup a
// spec dispatches its kernels with (mutate.Options.Threads), so that sites
// listed under a spec hold for those geometries, two- and
// three-dimensional ones included.
package geometry

import (
	"fmt"
	"slices"

	"metalab/msl"
	"metalab/spec"
)

// Of returns the threads per threadgroup of every stage of every case of
// the spec's sets (every set when none is named), by entry.
func Of(s *spec.Spec, sets ...string) (map[string][]msl.Dims, error) {
	if len(sets) == 0 {
		for _, set := range s.Sets {
			sets = append(sets, set.Name)
		}
	}
	cases, err := s.Cases(sets...)
	if err != nil {
		return nil, err
	}
	out := map[string][]msl.Dims{}
	for _, c := range cases {
		in, err := s.Instantiate(c)
		if err != nil {
			return nil, err
		}
		for _, st := range in.Stages {
			d := msl.Dims{st.Threads.X, st.Threads.Y, st.Threads.Z}
			if d.Count() <= 0 || d.Count() > msl.MaxThreads {
				return nil, fmt.Errorf("%s: stage %s has %s threads per threadgroup", s.Source, st.Entry, d)
			}
			if !slices.Contains(out[st.Entry], d) {
				out[st.Entry] = append(out[st.Entry], d)
			}
		}
	}
	return out, nil
}
