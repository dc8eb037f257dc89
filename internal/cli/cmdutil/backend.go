package cmdutil

import (
	"context"
	"errors"

	"metalab/backend"
	// The backends built into metalab register themselves.
	_ "metalab/backend/cpu"
	_ "metalab/backend/cuda"
	_ "metalab/backend/metal"
)

// ChooseBackend returns the backend a --backend flag names ("auto" picks
// the first of metal, cuda and cpu that runs here). An unknown name is a
// usage error.
func ChooseBackend(ctx context.Context, name string) (backend.Backend, error) {
	b, err := backend.Choose(ctx, name)
	var unknown *backend.UnknownError
	if errors.As(err, &unknown) {
		return nil, &FlagError{Err: err}
	}
	return b, err
}
