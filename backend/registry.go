package backend

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// An Entry is one backend a Registry knows: its name and its constructor.
// A nil New stands for a backend that is not built into this program:
// its stand-in's Available says so.
type Entry struct {
	Name string
	New  func() Backend
}

// A Registry is a list of backends: the known ones in the order they are
// listed, then any registered later (a test's fake backend) by name. The
// list of metalab's backends is package all's (metalab/backend/all),
// which imports every backend package: this package, which they import,
// names none of them.
type Registry struct {
	mu         sync.Mutex
	known      []Entry
	extra      map[string]func() Backend
	preference []string
}

// NewRegistry returns a registry of known, in listing order, whose Choose
// tries preference in order for "auto".
func NewRegistry(preference []string, known ...Entry) *Registry {
	return &Registry{known: append([]Entry(nil), known...), preference: append([]string(nil), preference...)}
}

// Names lists the known backends' names, in listing order.
func (r *Registry) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for _, e := range r.known {
		names = append(names, e.Name)
	}
	return names
}

// Register makes newBackend available under name: it replaces a known
// backend's constructor, or adds a backend listed after the known ones.
func (r *Registry) Register(name string, newBackend func() Backend) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, e := range r.known {
		if e.Name == name {
			r.known[i].New = newBackend
			return
		}
	}
	if r.extra == nil {
		r.extra = map[string]func() Backend{}
	}
	r.extra[name] = newBackend
}

// unregister removes an added backend and the constructor of a known one
// (tests).
func (r *Registry) unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.extra, name)
	for i, e := range r.known {
		if e.Name == name {
			r.known[i].New = nil
		}
	}
}

// All returns a fresh instance of every known backend, in listing order,
// then of every added one by name. A known backend that is not built in
// is a stand-in whose Available says so.
func (r *Registry) All() []Backend {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Backend
	for _, e := range r.known {
		if e.New != nil {
			out = append(out, e.New())
		} else {
			out = append(out, missing{e.Name})
		}
	}
	var rest []string
	for name := range r.extra {
		rest = append(rest, name)
	}
	sort.Strings(rest)
	for _, name := range rest {
		out = append(out, r.extra[name]())
	}
	return out
}

// Lookup returns a fresh instance of the backend called name, if one is
// built in or added.
func (r *Registry) Lookup(name string) (Backend, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.known {
		if e.Name == name && e.New != nil {
			return e.New(), true
		}
	}
	if newB, ok := r.extra[name]; ok {
		return newB(), true
	}
	return nil, false
}

// Choose returns the backend called name, or for "auto" the first of the
// preference order that is available here. An unknown name is an
// *UnknownError naming the known ones; a known backend that cannot run
// here is returned as is (its Available says why).
func (r *Registry) Choose(ctx context.Context, name string) (Backend, error) {
	if name == "auto" {
		var why []string
		for _, n := range r.preference {
			b, ok := r.Lookup(n)
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
	if b, ok := r.Lookup(name); ok {
		return b, nil
	}
	names := r.Names()
	for _, n := range names {
		if n == name {
			return missing{name}, nil
		}
	}
	return nil, &UnknownError{Name: name, Known: names}
}

// missing stands in for a known backend that is not built in.
type missing struct{ name string }

func (m missing) Name() string { return m.name }

func (m missing) Available(context.Context) (bool, string) {
	return false, "the " + m.name + " backend is not built into this metalab"
}

func (m missing) Info(context.Context) Info { return Info{Name: m.name, Device: "not built in"} }

func (m missing) Compile(context.Context, Source) (Program, error) {
	return nil, &Failure{Kind: Unavailable, Msg: "the " + m.name + " backend is not built into this metalab"}
}

// An UnknownError is a backend name metalab does not know.
type UnknownError struct {
	Name  string
	Known []string // the known backends' names
}

func (e *UnknownError) Error() string {
	known := e.Known
	if known == nil {
		known = Known
	}
	return fmt.Sprintf("unknown backend %q (backends: %s, or auto)", e.Name, strings.Join(known, ", "))
}
