package backend

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type stub struct{ name string }

func (s stub) Name() string                                     { return s.name }
func (s stub) Available(context.Context) (bool, string)         { return true, "" }
func (s stub) Compile(context.Context, Source) (Program, error) { return nil, errors.New("stub") }
func (s stub) Info(context.Context) Info                        { return Info{Name: s.name} }

func names(bs []Backend) string {
	var n []string
	for _, b := range bs {
		n = append(n, b.Name())
	}
	return strings.Join(n, ",")
}

func TestRegistry(t *testing.T) {
	r := NewRegistry([]string{"metal", "cuda", "cpu"}, Entry{Name: "cpu"}, Entry{Name: "cuda"}, Entry{Name: "metal"})
	r.Register("zz-test", func() Backend { return stub{"zz-test"} })
	r.Register("cuda", func() Backend { return stub{"cuda"} })
	if got := names(r.All()); got != "cpu,cuda,metal,zz-test" {
		t.Errorf("All() names = %s, want cpu,cuda,metal,zz-test", got)
	}
	if got := strings.Join(r.Names(), ","); got != "cpu,cuda,metal" {
		t.Errorf("Names() = %s", got)
	}
	for _, b := range r.All() {
		ok, why := b.Available(context.Background())
		_, registered := r.Lookup(b.Name())
		if ok != registered {
			t.Errorf("%s: Available = %v (%q), registered = %v", b.Name(), ok, why, registered)
		}
		if !registered && !strings.Contains(why, "not built into") {
			t.Errorf("%s: why = %q", b.Name(), why)
		}
	}
	if _, err := r.All()[2].Compile(context.Background(), Source{}); err == nil {
		t.Error("Compile on a missing backend succeeded")
	} else {
		var f *Failure
		if !errors.As(err, &f) || f.Kind != Unavailable {
			t.Errorf("Compile on a missing backend: %v, want an Unavailable failure", err)
		}
	}
	// auto: metal is not built in, cuda (the stub) is available.
	b, err := r.Choose(context.Background(), "auto")
	if err != nil || b.Name() != "cuda" {
		t.Errorf("Choose(auto) = %v, %v; want cuda", b, err)
	}
	if b, err := r.Choose(context.Background(), "metal"); err != nil || b.Name() != "metal" {
		t.Errorf("Choose(metal) = %v, %v; want the stand-in", b, err)
	}
	_, err = r.Choose(context.Background(), "vulkan")
	var u *UnknownError
	if !errors.As(err, &u) || u.Name != "vulkan" {
		t.Fatalf("Choose(vulkan) = %v, want an UnknownError", err)
	}
	if want := `unknown backend "vulkan" (backends: cpu, cuda, metal, or auto)`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	r.unregister("cuda")
	r.unregister("zz-test")
	if _, err := r.Choose(context.Background(), "auto"); err == nil || !strings.Contains(err.Error(), "no backend can run here") {
		t.Errorf("Choose(auto) with nothing built in = %v", err)
	}
}

// TestLegacyRegistry: the package-level functions keep their behaviour.
func TestLegacyRegistry(t *testing.T) {
	Register("zz-test", func() Backend { return stub{"zz-test"} })
	Register("cuda", func() Backend { return stub{"cuda"} })
	defer func() {
		legacy.unregister("zz-test")
		legacy.unregister("cuda")
	}()
	if got := names(All()); got != "cpu,cuda,metal,zz-test" {
		t.Errorf("All() names = %s, want cpu,cuda,metal,zz-test", got)
	}
	if b, ok := Lookup("cuda"); !ok || b.Name() != "cuda" {
		t.Errorf("Lookup(cuda) = %v, %v", b, ok)
	}
	if b, err := Choose(context.Background(), "auto"); err != nil || b.Name() != "cuda" {
		t.Errorf("Choose(auto) = %v, %v", b, err)
	}
}
