package translate

import (
	"bytes"
	"flag"
)

// PreprocessedAsIs takes text as already preprocessed, each line its own,
// for tests of the translation alone.
func PreprocessedAsIs(name string, text []byte) *Preprocessed {
	p := &Preprocessed{Text: text, files: []string{name}}
	n := bytes.Count(text, []byte("\n")) + 1
	for i := 0; i < n; i++ {
		p.lines = append(p.lines, origin{0, int32(i + 1)})
	}
	return p
}

// update is accepted, and unused, so that `go test ./translate/... -update`
// (which rewrites the goldens of the targets' packages) runs this
// package's tests too instead of failing on an unknown flag.
var _ = flag.Bool("update", false, "accepted for go test ./translate/... -update; this package has no goldens to rewrite")
