package all

import (
	"context"
	"errors"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu"
	"metalab/backend/cuda"
	"metalab/backend/metal"
)

// TestAll: every backend is listed, in order, as its own package's type,
// each a fresh instance; Register adds a backend after them.
func TestAll(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "cpu,cuda,metal" {
		t.Fatalf("Names() = %s, want cpu,cuda,metal", got)
	}
	bs := All()
	if len(bs) < 3 {
		t.Fatalf("All() = %d backends", len(bs))
	}
	if _, ok := bs[0].(*cpu.Backend); !ok {
		t.Errorf("All()[0] = %T, want *cpu.Backend", bs[0])
	}
	if _, ok := bs[1].(*cuda.Backend); !ok {
		t.Errorf("All()[1] = %T, want *cuda.Backend", bs[1])
	}
	if _, ok := bs[2].(*metal.Backend); !ok {
		t.Errorf("All()[2] = %T, want *metal.Backend", bs[2])
	}
	for i, b := range bs[:3] {
		if b.Name() != Names()[i] {
			t.Errorf("All()[%d].Name() = %q, want %q", i, b.Name(), Names()[i])
		}
	}
	if a, b := All()[0], All()[0]; a == b {
		t.Error("All() returned one instance twice")
	}
	for _, n := range Names() {
		b, ok := Lookup(n)
		if !ok || b.Name() != n {
			t.Errorf("Lookup(%s) = %v, %v", n, b, ok)
		}
	}
	_, err := Choose(context.Background(), "vulkan")
	var u *backend.UnknownError
	if !errors.As(err, &u) {
		t.Fatalf("Choose(vulkan) = %v, want an UnknownError", err)
	}
	if want := `unknown backend "vulkan" (backends: cpu, cuda, metal, or auto)`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	Register("zz-fake", func() backend.Backend { return cpu.New(cpu.Options{}) })
	if n := len(All()); n != 4 {
		t.Errorf("after Register, All() = %d backends, want 4", n)
	}
	if _, ok := Lookup("zz-fake"); !ok {
		t.Error("Lookup(zz-fake) after Register failed")
	}
}

// TestSameAsLegacy: package all lists what package backend's package-level
// registry lists (the backends' own registration), in the same order: the
// command line's `metalab backends` is the same through either.
func TestSameAsLegacy(t *testing.T) {
	var a, l []string
	for _, b := range All()[:3] {
		a = append(a, b.Name())
	}
	for _, b := range backend.All()[:3] {
		l = append(l, b.Name())
	}
	if strings.Join(a, ",") != strings.Join(l, ",") || strings.Join(Names(), ",") != strings.Join(backend.Known, ",") {
		t.Errorf("all: %v (%v); backend: %v (%v)", a, Names(), l, backend.Known)
	}
	if strings.Join(Preference, ",") != strings.Join(backend.Preference, ",") {
		t.Errorf("Preference %v, backend.Preference %v", Preference, backend.Preference)
	}
}
