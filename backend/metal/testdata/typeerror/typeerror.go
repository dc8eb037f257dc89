//go:build darwin && cgo

// Package typeerror does not type-check for darwin: it proves the darwin
// type check catches a mistake only a Mac build would otherwise find.
package typeerror

import "github.com/progrium/darwinkit/macos/metal"

// End calls EndEncoding on the compute encoder type, which does not have
// it (darwinkit does not flatten protocol inheritance).
func End(enc metal.ComputeCommandEncoderObject) {
	enc.EndEncoding()
}
