package check

import (
	"path/filepath"

	"metalab/backend"
	"metalab/spec"
)

type backendProgram = backend.Program

func sourceOf(st *spec.Stage, text string) backend.Source {
	return backend.Source{Name: st.Source, Text: []byte(text), Dir: filepath.Dir(st.Source), Entry: st.Entry,
		Defines: st.Defines, Constants: st.Constants}
}
