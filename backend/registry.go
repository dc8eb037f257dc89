package backend

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Known lists the backends metalab knows of, in the order they are
// preferred and listed.
var Known = []string{"cpu", "cuda", "metal"}

var (
	regMu    sync.Mutex
	registry = map[string]func() Backend{}
)

// Register makes a backend constructor available under name. Backend
// packages call it from init, so linking a backend in is what enables it
// (the backend packages import this one, so it cannot import them).
// Registering a name twice replaces the earlier constructor.
func Register(name string, newBackend func() Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	registry[name] = newBackend
}

// All returns a fresh instance of every known backend, in Known order, then
// any other registered backend by name. A known backend that is not linked
// into this program is returned as a stand-in whose Available says so.
func All() []Backend {
	regMu.Lock()
	defer regMu.Unlock()
	var out []Backend
	known := map[string]bool{}
	for _, name := range Known {
		known[name] = true
		if newB, ok := registry[name]; ok {
			out = append(out, newB())
		} else {
			out = append(out, missing{name})
		}
	}
	var rest []string
	for name := range registry {
		if !known[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	for _, name := range rest {
		out = append(out, registry[name]())
	}
	return out
}

// Lookup returns a fresh instance of the backend called name, if it is
// registered.
func Lookup(name string) (Backend, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	newB, ok := registry[name]
	if !ok {
		return nil, false
	}
	return newB(), true
}

// missing stands in for a known backend that is not linked in.
type missing struct{ name string }

func (m missing) Name() string { return m.name }

func (m missing) Available(context.Context) (bool, string) {
	return false, "the " + m.name + " backend is not built into this metalab"
}

func (m missing) Info(context.Context) Info { return Info{Name: m.name, Device: "not built in"} }

func (m missing) Compile(context.Context, Source) (Program, error) {
	return nil, &Failure{Kind: Unavailable, Msg: "the " + m.name + " backend is not built into this metalab"}
}

// Preference is the order --backend auto tries backends in: the real
// thing first.
var Preference = []string{"metal", "cuda", "cpu"}

// Choose returns the backend called name, or for "auto" the first of
// Preference that is available here. An unknown name is an error naming the
// known ones; a known backend that cannot run here is returned as is (its
// Available says why).
func Choose(ctx context.Context, name string) (Backend, error) {
	if name == "auto" {
		var why []string
		for _, n := range Preference {
			b, ok := Lookup(n)
			if !ok {
				continue
			}
			ok, w := b.Available(ctx)
			if ok {
				return b, nil
			}
			why = append(why, n+": "+w)
		}
		return nil, fmt.Errorf("--backend auto: no backend can run here (%s)", strings.Join(why, "; "))
	}
	if b, ok := Lookup(name); ok {
		return b, nil
	}
	for _, n := range Known {
		if n == name {
			return missing{name}, nil
		}
	}
	return nil, &UnknownError{Name: name}
}

// An UnknownError is a backend name metalab does not know.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown backend %q (backends: %s, or auto)", e.Name, strings.Join(Known, ", "))
}
