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

func TestAll(t *testing.T) {
	Register("zz-test", func() Backend { return stub{"zz-test"} })
	Register("cuda", func() Backend { return stub{"cuda"} })
	defer func() {
		regMu.Lock()
		delete(registry, "zz-test")
		delete(registry, "cuda")
		regMu.Unlock()
	}()
	var names []string
	for _, b := range All() {
		names = append(names, b.Name())
	}
	if got := strings.Join(names, ","); got != "cpu,cuda,metal,zz-test" {
		t.Errorf("All() names = %s, want cpu,cuda,metal,zz-test", got)
	}
	for _, b := range All() {
		ok, why := b.Available(context.Background())
		_, registered := Lookup(b.Name())
		if ok != registered {
			t.Errorf("%s: Available = %v (%q), registered = %v", b.Name(), ok, why, registered)
		}
		if !registered && !strings.Contains(why, "not built into") {
			t.Errorf("%s: why = %q", b.Name(), why)
		}
	}
	if _, err := All()[2].Compile(context.Background(), Source{}); err == nil {
		t.Error("Compile on a missing backend succeeded")
	} else {
		var f *Failure
		if !errors.As(err, &f) || f.Kind != Unavailable {
			t.Errorf("Compile on a missing backend: %v, want an Unavailable failure", err)
		}
	}
}
