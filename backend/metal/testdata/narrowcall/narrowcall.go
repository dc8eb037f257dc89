//go:build darwin && cgo

// Package narrowcall type-checks but calls darwinkit getters whose BOOL
// return libffi writes past: it proves the narrow-return check finds such
// calls, generated (HasUnifiedMemory) or direct (objc.Call[bool]).
package narrowcall

import (
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// Unified calls HasUnifiedMemory, whose body is objc.Call[bool].
func Unified(dev metal.DeviceObject) bool {
	return dev.HasUnifiedMemory()
}

// LowPower sends isLowPower with a one-byte return slot.
func LowPower(dev metal.DeviceObject) bool {
	return objc.Call[bool](dev, objc.Sel("isLowPower"))
}

// Width reads a 64-bit getter: fine.
func Width(pso metal.ComputePipelineStateObject) uint {
	return pso.ThreadExecutionWidth()
}
