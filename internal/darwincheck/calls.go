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

// objcCall is darwinkit's generic message send, objc.Call[T]. It hands
// libffi a return slot the size of T (objc/call.go: retPtr =
// unsafe.Pointer(&ret)), while libffi writes a whole ffi_arg (8 bytes on
// arm64) for every integral return narrower than that (ffi_call(3):
// "rvalue must point to storage that is sizeof(ffi_arg) or larger for
// non-floating point types"). For T = bool, int8..int32 or uint8..uint32
// the call writes past its variable, into whatever the Go allocator put
// next to it.
const objcCall = Darwinkit + "/objc.Call"

// A Call is a reference from a checked package to a darwinkit function or
// method: a call, or a method value.
type Call struct {
	Pos   token.Position // the referring identifier
	Func  *types.Func    // the darwinkit function or method
	Decl  token.Position // where darwinkit declares it
	Wraps bool           // it is objc.WrapAsProtocol, or its body calls it
	// Narrow is the return type, narrower than libffi's 8-byte return
	// slot, of an objc.Call this reference makes (objc.Call[bool] itself)
	// or its callee's body makes (a generated getter returning bool or
	// uint32): "" when none.
	Narrow string
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
	narrow := map[*types.Func]string{}
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
		nw := ""
		if funcName(fn) == objcCall {
			nw = narrowArg(p.Info.Instances[id])
		} else if n, seen := narrow[fn]; seen {
			nw = n
		} else {
			nw = r.narrowBody(fn, decls)
			narrow[fn] = nw
		}
		calls = append(calls, Call{Pos: r.Fset.Position(id.Pos()), Func: fn, Decl: r.Fset.Position(fn.Pos()), Wraps: w, Narrow: nw})
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

// narrowArg returns the type argument of an objc.Call instance when its
// return is an integer or bool narrower than 8 bytes, else "".
func narrowArg(inst types.Instance) string {
	if inst.TypeArgs == nil || inst.TypeArgs.Len() != 1 {
		return ""
	}
	t := inst.TypeArgs.At(0)
	b, ok := t.Underlying().(*types.Basic)
	if !ok {
		return ""
	}
	switch b.Kind() {
	case types.Bool, types.Int8, types.Int16, types.Int32, types.Uint8, types.Uint16, types.Uint32:
		return t.String()
	}
	return ""
}

// narrowBody returns the narrow return type of an objc.Call that fn's body
// makes, or "". decls must already hold fn's declaration (wraps found it).
func (r *Result) narrowBody(fn *types.Func, decls map[*types.Func]*ast.FuncDecl) string {
	decl := decls[fn]
	dp := r.Package(fn.Pkg().Path())
	if decl == nil || decl.Body == nil || dp == nil || dp.Info == nil {
		return ""
	}
	found := ""
	ast.Inspect(decl.Body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if g, ok := dp.Info.Uses[id].(*types.Func); ok && g.Pkg() != nil && funcName(g.Origin()) == objcCall {
				found = narrowArg(dp.Info.Instances[id])
			}
		}
		return found == ""
	})
	return found
}
