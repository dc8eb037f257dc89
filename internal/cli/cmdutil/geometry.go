package cmdutil

import (
	"metalab/msl"
	"metalab/mutate/geometry"
	"metalab/spec"
)

// SpecGeometry returns the threads per threadgroup of the stages and cases
// of the spec at path, by entry, for mutate.Options.Threads; nil for "".
func SpecGeometry(path string) (map[string][]msl.Dims, error) {
	if path == "" {
		return nil, nil
	}
	s, err := spec.Load(path)
	if err != nil {
		return nil, err
	}
	return geometry.Of(s)
}
