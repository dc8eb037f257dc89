package cuda

import (
	"context"
	"errors"
	"testing"

	"metalab/backend"
)

func TestCompileBundled(t *testing.T) {
	b := toolBackend(t, Options{})
	for _, k := range bundledKernels(t, true) {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			cu, err := b.translate(context.Background(), k.src)
			if err != nil {
				t.Fatalf("translate: %v", err)
			}
			if _, err := b.compileObject(context.Background(), cu, testArch(), false); err != nil {
				var f *backend.Failure
				if errors.As(err, &f) {
					t.Fatalf("%s\n%s", f.Msg, f.Log)
				}
				t.Fatal(err)
			}
		})
	}
}
