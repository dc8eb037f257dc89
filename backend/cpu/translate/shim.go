package translate

import (
	"metalab/backend"
	"metalab/translate"
)

// IncludedFile and Refusal are the vetting pass's, now in package
// metalab/translate.
type (
	IncludedFile = translate.IncludedFile
	Refusal      = translate.Refusal
)

// vet vets src and returns its include closure.
func vet(src backend.Source, dirs []string) ([]IncludedFile, error) {
	if err := translate.Vet(src, dirs); err != nil {
		return nil, err
	}
	return translate.IncludeClosure(src, dirs)
}
