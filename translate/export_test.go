package translate

import "bytes"

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
