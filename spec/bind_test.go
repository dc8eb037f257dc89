package spec

import "testing"

// TestBindReplacesIndex pins what spec/doc.go says of bind: a stage's
// bind: puts a buffer at the indices it gives in place of the buffer's
// own index; a list keeps both.
func TestBindReplacesIndex(t *testing.T) {
	const text = `source: k.metal
buffers:
  - {name: x, index: 0, type: float, count: 4, role: input, gen: {kind: iota}}
  - {name: y, index: 1, type: float, count: 4, role: output}
stages:
  - {entry: a, threadgroups: [1], threads: [4], bind: {x: 2}}
  - {entry: b, threadgroups: [1], threads: [4], bind: {x: [0, 2]}}
  - {entry: c, threadgroups: [1], threads: [4], bind: {y: 0, x: 1}}
sets:
  s: {cases: [{}]}
`
	s, err := Parse("k.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string][]int{
		{"x": {2}, "y": {1}},
		{"x": {0, 2}, "y": {1}},
		{"x": {1}, "y": {0}},
	}
	for i, st := range s.Stages {
		got := map[string][]int{}
		for _, b := range st.Bindings {
			got[b.Buffer] = append(got[b.Buffer], b.Index)
		}
		for name, idx := range want[i] {
			if len(got[name]) != len(idx) {
				t.Errorf("stage %s: %s bound at %v, want %v", st.Entry, name, got[name], idx)
				continue
			}
			for k := range idx {
				if got[name][k] != idx[k] {
					t.Errorf("stage %s: %s bound at %v, want %v", st.Entry, name, got[name], idx)
				}
			}
		}
	}
}
