package backend

import "context"

// The package-level registry below is the one the backend packages still
// register themselves in from init, for the command-line packages that
// link them by blank imports. Package all (metalab/backend/all) is the one
// list of backends, with the same functions; once every caller uses it,
// this file and the backends' register.go files go.

// Known lists the backends metalab knows of, in the order they are
// preferred and listed.
//
// Deprecated: use all.Names (metalab/backend/all).
var Known = []string{"cpu", "cuda", "metal"}

// Preference is the order --backend auto tries backends in: the real
// thing first.
//
// Deprecated: package all's Choose has the same order.
var Preference = []string{"metal", "cuda", "cpu"}

var legacy = NewRegistry(Preference, Entry{Name: "cpu"}, Entry{Name: "cuda"}, Entry{Name: "metal"})

// Register makes a backend constructor available under name in the
// package-level registry. Registering a name twice replaces the earlier
// constructor.
//
// Deprecated: use all.Register (metalab/backend/all).
func Register(name string, newBackend func() Backend) { legacy.Register(name, newBackend) }

// All returns a fresh instance of every backend registered here, the
// known ones first (a stand-in for one not registered).
//
// Deprecated: use all.All (metalab/backend/all).
func All() []Backend { return legacy.All() }

// Lookup returns a fresh instance of the backend called name, if it is
// registered here.
//
// Deprecated: use all.Lookup (metalab/backend/all).
func Lookup(name string) (Backend, bool) { return legacy.Lookup(name) }

// Choose returns the backend called name from the package-level registry,
// or for "auto" the first of Preference available here.
//
// Deprecated: use all.Choose (metalab/backend/all).
func Choose(ctx context.Context, name string) (Backend, error) { return legacy.Choose(ctx, name) }
