package check

import (
	"fmt"
	"sort"
	"strings"

	"metalab/backend"
	"metalab/spec"
)

// A Finding is what the checking mode saw a stage of a case do, described
// with the spec's names: buffers by name with element coordinates,
// threadgroup arrays by declaration, both threads and both source lines.
type Finding struct {
	Kind    backend.FindingKind `json:"kind"`
	Warning bool                `json:"warning,omitempty"` // does not fail the check (without --strict)
	Case    string              `json:"case"`
	Entry   string              `json:"entry"`
	Msg     string              `json:"msg"`
	Detail  backend.Finding     `json:"detail"`
	// Baseline: the baseline has this finding at the same source site
	// (the lines mapped through the variant's edits); it does not fail.
	Baseline bool `json:"baseline,omitempty"`
	// Changed: an access of the finding is on a line the variant changed,
	// so it fails whatever the baseline has.
	Changed bool `json:"changed,omitempty"`
	// Site is the finding's source site as matched with the baseline's:
	// kind, entry, memory and the baseline lines of both accesses.
	Site string `json:"site,omitempty"`
}

// findingStatus is the status a finding of kind k gives; "" for a warning.
func findingStatus(k backend.FindingKind, strict bool) Status {
	switch k {
	case backend.FindRace, backend.FindMemNone, backend.FindSameValue:
		return FailRace
	case backend.FindUninit, backend.FindUnwrittenUnused:
		return FailUninit
	case backend.FindBounds:
		return BadAccess
	case backend.FindLockstep:
		if strict {
			return FailLockstep
		}
	}
	return ""
}

// describeFindings turns the stage findings of one run of case in into
// Findings, failures first.
func describeFindings(in *spec.Instance, caseName string, fs []StageFinding, strict bool) []Finding {
	var out []Finding
	for _, sf := range fs {
		st := in.Stages[sf.Stage]
		out = append(out, Finding{
			Kind: sf.Kind, Warning: findingStatus(sf.Kind, strict) == "", Case: caseName, Entry: sf.Entry,
			Msg: describe(in, st, sf.Finding), Detail: sf.Finding,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return !out[i].Warning && out[j].Warning })
	return out
}

// describe formats f, seen in stage st of in, as one line.
func describe(in *spec.Instance, st *spec.Stage, f backend.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel %s: ", st.Entry)
	what := place(in, st, f)
	a := f.Access
	switch f.Kind {
	case backend.FindRace, backend.FindLockstep, backend.FindMemNone, backend.FindSameValue:
		label := "race"
		switch f.Kind {
		case backend.FindLockstep:
			label = "relies on SIMD lockstep"
		case backend.FindMemNone:
			label = "race ordered only by an execution barrier (mem-none-order)"
		case backend.FindSameValue:
			label = "writes of the same bytes (same-value-write)"
		}
		fmt.Fprintf(&b, "%s on %s: %s by %s at %s", label, what, verb(a), a.Where(), a.Pos())
		if o := f.Other; o != nil {
			fmt.Fprintf(&b, " and %s by %s at %s", verb(*o), o.Where(), o.Pos())
			switch {
			case o.Group != a.Group:
				b.WriteString(", different threadgroups in one dispatch")
			case f.Kind == backend.FindLockstep:
				b.WriteString(", one simd group with no simdgroup_barrier or collective between")
			default:
				b.WriteString(", in one barrier interval")
			}
		}
	case backend.FindUninit:
		fmt.Fprintf(&b, "uninitialised read of %s: no thread of the threadgroup wrote it; read by %s at %s", what, a.Where(), a.Pos())
	case backend.FindUnwrittenUnused:
		fmt.Fprintf(&b, "unwritten read of %s that reaches no output (unwritten-unused): no thread of the threadgroup wrote it; read by %s at %s "+
			"(the outputs are the same with threadgroup memory poisoned 0xff and 0x5a)", what, a.Where(), a.Pos())
	case backend.FindBounds:
		fmt.Fprintf(&b, "out-of-bounds %s of %s by %s at %s", verb(a), what, a.Where(), a.Pos())
	case backend.FindDivergent:
		fmt.Fprintf(&b, "%s at %s in threadgroup (%d,%d,%d)", f.Note, a.Pos(), a.Group[0], a.Group[1], a.Group[2])
	default:
		fmt.Fprintf(&b, "%s on %s by %s at %s", f.Kind, what, a.Where(), a.Pos())
	}
	if f.Note != "" && f.Kind != backend.FindDivergent && !strings.HasPrefix(f.Note, "index ") {
		fmt.Fprintf(&b, " (%s)", f.Note)
	}
	if f.Count > 1 {
		fmt.Fprintf(&b, "; seen %d times", f.Count)
	}
	return b.String()
}

func verb(a backend.Access) string {
	v := "read"
	switch {
	case a.Either:
		v = "access"
	case a.Write:
		v = "write"
	}
	if a.Atomic {
		v = "atomic " + v
	}
	return v
}

// place names the memory a finding is about: a spec buffer with element
// coordinates, a threadgroup array with its coordinates, or an array
// indexed out of bounds.
func place(in *spec.Instance, st *spec.Stage, f backend.Finding) string {
	switch f.Space {
	case "device":
		var buf *spec.Buffer
		for _, bind := range st.Bindings {
			if !bind.Threadgroup && bind.Index == f.Buffer {
				buf = in.Buffer(bind.Buffer)
			}
		}
		if buf == nil || buf.Type == nil || buf.Type.Size <= 0 {
			return fmt.Sprintf("buffer %d byte %+d", f.Buffer, f.Offset)
		}
		size := int64(buf.Type.Size)
		total := int64(len(buf.Data))
		switch {
		case f.Offset < 0:
			return fmt.Sprintf("buffer %s (index %d), %d bytes before its start", buf.Name, f.Buffer, -f.Offset)
		case f.Offset >= total:
			return fmt.Sprintf("buffer %s (index %d), byte %d, %d bytes past its end (%d bytes)", buf.Name, f.Buffer, f.Offset, f.Offset-total, total)
		}
		e := int(f.Offset / size)
		if e >= buf.Count {
			return fmt.Sprintf("buffer %s slack byte %d", buf.Name, f.Offset-int64(buf.Count)*size)
		}
		return fmt.Sprintf("buffer %s%v (element %d, %s)", buf.Name, buf.Coords(e), e, buf.Type.Name)
	case "threadgroup", "thread":
		if f.Kind == backend.FindBounds && strings.HasPrefix(f.Note, "index ") {
			return fmt.Sprintf("%s array %s: %s", f.Space, f.Array, f.Note)
		}
		name := f.Array
		if name == "" {
			name = fmt.Sprintf("#%d", f.Buffer)
		}
		if len(f.Coords) > 0 {
			return fmt.Sprintf("threadgroup array %s%s (byte %d)", name, coordsText(f.Coords), f.Offset)
		}
		return fmt.Sprintf("threadgroup array %s byte %d", name, f.Offset)
	case "threadgroup-host":
		return fmt.Sprintf("[[threadgroup(%d)]] memory byte %d", f.Buffer, f.Offset)
	case "outside":
		return fmt.Sprintf("address %#x (%s)", uint64(f.Offset), f.Note)
	}
	if f.Array != "" {
		return fmt.Sprintf("array %s: %s", f.Array, f.Note)
	}
	return fmt.Sprintf("memory (%s)", f.Note)
}

func coordsText(c []int) string {
	var b strings.Builder
	for _, x := range c {
		fmt.Fprintf(&b, "[%d]", x)
	}
	return b.String()
}
