package conformance

import (
	"fmt"

	"metalab/backend"
	"metalab/msl"
)

// sourceEstimate is msl's static threadgroup memory estimate for src.Entry.
func sourceEstimate(src backend.Source) (int, error) {
	f, err := msl.Parse(src.Name, src.Text)
	if err != nil {
		return 0, err
	}
	m, err := msl.ThreadgroupMemory(f, src.Entry, msl.Env{File: f, Defines: src.Defines})
	if err != nil {
		return 0, err
	}
	if !m.Known {
		for _, d := range m.Decls {
			if !d.Known {
				return 0, fmt.Errorf("size of %s in %s unknown: %s", d.Name, d.Func, d.Why)
			}
		}
		return 0, fmt.Errorf("size unknown")
	}
	return int(m.Total), nil
}
