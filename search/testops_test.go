package search

import (
	"strings"
	"testing"

	"metalab/internal/edit"
	"metalab/mutate"
)

// Operators for the sweep's tests only: useTestOps adds them to the
// operators a plan may name (testOps). None ships, and none is listed in
// mutate/all. Each finds the fixture kernel's copy marker and plants a
// fake-backend marker next to it.
var (
	// breakProven claims a proof, as every operator but drop-barrier
	// does, and breaks the outputs anyway: it sets out[5] to 0x7f after
	// the copy. The sweep must count its variant as a proof violated.
	breakProven = markerOp("test-break-proven", "    // fake: poke 1 5 0x7f\n", false)
	// onceOnly writes the correct bytes only on the first dispatch of a
	// run: before the copy it adds out to in, so with out starting zero
	// (a zero sentinel) one dispatch leaves in alone and copies it; a
	// second doubles both. The checks run one dispatch; timed samples of
	// two dispatches differ.
	onceOnly = markerOp("test-once-only", "    // fake: add 1 0\n", true)
)

// useTestOps makes the test operators available to plans until the test
// ends.
func useTestOps(t *testing.T) {
	t.Helper()
	saved := testOps
	testOps = []*mutate.Mutation{breakProven, onceOnly, gpuDiffers, firstDispatchOnly}
	t.Cleanup(func() { testOps = saved })
}

// markerOp is an operator with one site, the line of the fixture's copy
// marker, and one choice, "plant", that inserts line before it or after
// it.
func markerOp(name, line string, before bool) *mutate.Mutation {
	const marker = "    // fake: copy 0 1\n"
	return &mutate.Mutation{
		Name: name,
		Doc:  name + ": a test operator that plants a fake-backend marker beside the copy marker",
		Run: func(p *mutate.Pass) error {
			body := p.File.Src[p.Func.Pos:p.Func.End]
			i := strings.Index(string(body), marker)
			if i < 0 {
				return nil
			}
			pos := p.Func.Pos + i
			at := pos + len(marker)
			if before {
				at = pos
			}
			p.Report(mutate.Site{Pos: pos, End: pos + len(marker), Message: "the copy marker", Choices: []mutate.Choice{
				{Name: "plant", Message: "plant " + strings.TrimSpace(line), Edits: []edit.Edit{{Start: at, End: at, New: line}}},
			}})
			return nil
		},
	}
}

// gpuDiffers marks the variant's source for the corrupting backend, whose
// programs of marked sources give other bytes than the verification
// backend's: a variant that passes its verification and fails its
// confirmation. It claims a proof, so its failure is a proof violated.
var gpuDiffers = markerOp("test-gpu-differs", "    // test: the timing backend's bytes differ\n", false)

// firstDispatchOnly rewrites the counted kernel's copy to give the input
// only while runs[tid] is zero: correct on the first dispatch of a run,
// the input with its low bit flipped on every later one. It claims a
// proof; the check after timing, not a proof, is what must catch it.
var firstDispatchOnly = &mutate.Mutation{
	Name: "test-first-dispatch-only",
	Doc:  "test-first-dispatch-only: a test operator that makes the counted kernel correct on a run's first dispatch only",
	Run: func(p *mutate.Pass) error {
		const stmt = "out[tid] = in[tid];"
		i := strings.Index(string(p.File.Src[p.Func.Pos:p.Func.End]), stmt)
		if i < 0 {
			return nil
		}
		pos := p.Func.Pos + i
		p.Report(mutate.Site{Pos: pos, End: pos + len(stmt), Message: "the copy", Choices: []mutate.Choice{{
			Name: "plant", Message: "copy on the first dispatch only",
			Edits: []edit.Edit{{Start: pos, End: pos + len(stmt), New: "out[tid] = runs[tid] == 0u ? in[tid] : uchar(in[tid] ^ 1u);"}},
		}}})
		return nil
	},
}
