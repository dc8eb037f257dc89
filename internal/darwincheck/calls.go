package darwincheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// Darwinkit is the module path of github.com/progrium/darwinkit.
const Darwinkit = "github.com/progrium/darwinkit"

// wrapAsProtocol is the darwinkit function that generated methods use for
// arguments of protocol type. It panics unless its type parameter is an
// interface, and the generated code instantiates it with a struct
// (metal.FunctionObject, metal.BufferObject, ...): every generated method
// whose body calls it panics before sending any message.
const wrapAsProtocol = Darwinkit + "/objc.WrapAsProtocol"

// A Call is a reference from a checked package to a darwinkit function or
// method: a call, or a method value.
type Call struct {
	Pos   token.Position // the referring identifier
	Func  *types.Func    // the darwinkit function or method
	Decl  token.Position // where darwinkit declares it
	Wraps bool           // it is objc.WrapAsProtocol, or its body calls it
}

// String describes c as "file:line:col: (T).M".
func (c Call) String() string {
	return fmt.Sprintf("%s: %s", c.Pos, c.Func.FullName())
}

// DarwinkitCalls returns every reference that the package at path (checked
// by Check, not only as a dependency) makes to a darwinkit function or
// method, in source order, with whether the callee wraps an argument with
// objc.WrapAsProtocol. It resolves references with the type checker, so a
// method promoted through an embedded field or reached through a
// variable's type counts too, and reads the callee's body from the
// darwinkit source Check parsed (the module cache).
func DarwinkitCalls(r *Result, path string) ([]Call, error) {
	p := r.Package(path)
	if p == nil || p.Info == nil {
		return nil, fmt.Errorf("darwincheck: %s was not checked with type information", path)
	}
	decls := map[*types.Func]*ast.FuncDecl{}
	wraps := map[*types.Func]bool{}
	var calls []Call
	for id, obj := range p.Info.Uses {
		fn, ok := obj.(*types.Func)
		if !ok || fn.Pkg() == nil || !inDarwinkit(fn.Pkg().Path()) {
			continue
		}
		fn = fn.Origin()
		w, seen := wraps[fn]
		if !seen {
			var err error
			w, err = r.wraps(fn, decls)
			if err != nil {
				return nil, err
			}
			wraps[fn] = w
		}
		calls = append(calls, Call{Pos: r.Fset.Position(id.Pos()), Func: fn, Decl: r.Fset.Position(fn.Pos()), Wraps: w})
	}
	sort.Slice(calls, func(i, j int) bool {
		a, b := calls[i].Pos, calls[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	return calls, nil
}

func inDarwinkit(path string) bool {
	return path == Darwinkit || strings.HasPrefix(path, Darwinkit+"/")
}

func funcName(fn *types.Func) string {
	if fn.Pkg() == nil {
		return fn.Name()
	}
	return fn.Pkg().Path() + "." + fn.Name()
}

// wraps reports whether fn is objc.WrapAsProtocol or its body refers to it.
func (r *Result) wraps(fn *types.Func, decls map[*types.Func]*ast.FuncDecl) (bool, error) {
	if funcName(fn) == wrapAsProtocol {
		return true, nil
	}
	dp := r.Package(fn.Pkg().Path())
	if dp == nil || dp.Info == nil {
		return false, fmt.Errorf("darwincheck: %s was not checked with its bodies; cannot read %s", fn.Pkg().Path(), fn.FullName())
	}
	decl := decls[fn]
	if decl == nil {
		for _, f := range dp.Files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Pos() == fn.Pos() {
					decl = fd
				}
			}
		}
		if decl == nil {
			return false, fmt.Errorf("darwincheck: cannot find the declaration of %s (%s)", fn.FullName(), r.Fset.Position(fn.Pos()))
		}
		decls[fn] = decl
	}
	if decl.Body == nil {
		return false, nil // implemented outside Go
	}
	found := false
	ast.Inspect(decl.Body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if g, ok := dp.Info.Uses[id].(*types.Func); ok && g.Pkg() != nil && funcName(g.Origin()) == wrapAsProtocol {
				found = true
			}
		}
		return !found
	})
	return found, nil
}
