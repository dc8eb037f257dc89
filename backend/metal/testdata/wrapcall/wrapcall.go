//go:build darwin && cgo

// Package wrapcall type-checks but calls a darwinkit method that panics: it
// proves the protocol-wrap check finds such calls.
package wrapcall

import "github.com/progrium/darwinkit/macos/metal"

// Bind calls SetComputePipelineState, whose body wraps pso with
// objc.WrapAsProtocol.
func Bind(enc metal.ComputeCommandEncoderObject, pso metal.ComputePipelineStateObject) {
	enc.SetComputePipelineState(pso)
}
