//go:build !darwin || !cgo

package metal

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"metalab/backend"
)

func TestStub(t *testing.T) {
	b := New()
	want := "metal backend: macOS only"
	if runtime.GOOS == "darwin" {
		want = "built without cgo"
	}
	ok, why := b.Available(context.Background())
	if ok || !strings.Contains(why, want) {
		t.Errorf("Available = %v, %q; want false, %q", ok, why, want)
	}
	p, err := b.Compile(context.Background(), backend.Source{Name: "k.metal", Text: []byte("kernel void k() {}"), Entry: "k"})
	var f *backend.Failure
	if p != nil || !errors.As(err, &f) || f.Kind != backend.Unavailable || !strings.Contains(f.Msg, want) {
		t.Errorf("Compile = %v, %v; want an Unavailable failure saying %q", p, err, want)
	}
}
