package measure

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/perf/benchfmt"
)

// WriteBenchfmt writes the pair samples of r's reported attempt in the Go
// benchmark format, one line per sample, so that benchstat can compare
// the sides or two runs:
//
//	label: cpu emulator time: exercises the loop, not a GPU claim
//	clock: gpu
//	dispatches: 3
//	baseline: base
//	variant: unroll-pragma.qsa_flash.3=full-1a2b3c4d
//	control:
//	contaminated: false
//
//	BenchmarkQsaFlash/pos0=8192/side=baseline 1 6.619e+07 ns/op
//	BenchmarkQsaFlash/pos0=8192/side=variant 1 6.3779e+07 ns/op
//	...
//
// An op is one sample (all its dispatches), in nanoseconds. The side key
// is the side's role — baseline, variant, or control for the second side
// of a Control — and the sides' names are configuration lines (variant
// names can end in digits after a dash, which the format reads as
// GOMAXPROCS). Every key is written, empty when it does not apply, so
// several results can be written to one stream. Compare the sides with `benchstat -col /side FILE`. name
// is the benchmark name without spaces, with or without its "Benchmark"
// prefix, e.g. "QsaFlash/pos0=8192". Config lines (label, names) have
// line breaks replaced by spaces. Lines are written in pair order, A's
// sample first in each pair.
func WriteBenchfmt(w io.Writer, name string, r *Result) error {
	name = strings.TrimPrefix(name, "Benchmark")
	if name == "" || strings.IndexFunc(name, unicode.IsSpace) >= 0 {
		return fmt.Errorf("benchfmt: benchmark name %q is empty or has spaces", name)
	}
	if r == nil {
		return fmt.Errorf("benchfmt: %s: no result", name)
	}
	oneLine := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")
	cfg := []benchfmt.Config{}
	// Every key is written every time, empty when it does not apply
	// (which a reader takes as deleting it), so that results written one
	// after another to one stream do not inherit each other's keys.
	set := func(k, v string) {
		cfg = append(cfg, benchfmt.Config{Key: k, Value: []byte(oneLine.Replace(v)), File: true})
	}
	set("label", r.Label)
	set("clock", r.Clock)
	dispatches := ""
	if r.Dispatches > 0 {
		dispatches = strconv.Itoa(r.Dispatches)
	}
	set("dispatches", dispatches)
	roleB, variant, control := "variant", r.B, ""
	if r.Control {
		roleB, variant, control = "control", "", r.B
	}
	set("baseline", r.A)
	set("variant", variant)
	set("control", control)
	set("contaminated", strconv.FormatBool(r.Contaminated))
	bw := benchfmt.NewWriter(w)
	write := func(role string, ns float64) error {
		return bw.Write(&benchfmt.Result{
			Config: cfg,
			Name:   benchfmt.Name(name + "/side=" + role),
			Iters:  1,
			Values: []benchfmt.Value{{Value: ns, Unit: "ns/op"}},
		})
	}
	for _, p := range r.Pairs() {
		if err := write("baseline", float64(p.A)); err != nil {
			return fmt.Errorf("benchfmt: %w", err)
		}
		if err := write(roleB, float64(p.B)); err != nil {
			return fmt.Errorf("benchfmt: %w", err)
		}
	}
	return nil
}

// WriteText writes r for people: the sides and medians, the ratio with
// its interval, the change, the wins, what the timing is (the label), and
// every flag and note.
func (r *Result) WriteText(w io.Writer) error {
	s := r.Stats
	kind := "paired"
	if r.Control {
		kind = "control"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s vs %s: %s → %s, ratio %.4f [%.4f, %.4f] (%s), change %+.2f%%, %d/%d pairs faster\n",
		kind, r.A, r.B, ms(float64(s.MedianA)), ms(float64(s.MedianB)), s.Ratio, s.Lo, s.Hi, pct(s.Confidence), s.Change, s.Wins, s.N)
	per := ""
	if r.Dispatches > 0 {
		per = fmt.Sprintf(" of %d dispatches", r.Dispatches)
	}
	fmt.Fprintf(&b, "  %d pairs%s, %s clock, attempt %d", s.N, per, r.Clock, len(r.Attempts))
	if !r.Complete {
		b.WriteString(", cut short")
	}
	b.WriteString("\n")
	if r.Label != "" {
		fmt.Fprintf(&b, "  timing: %s\n", r.Label)
	}
	if r.Contaminated {
		b.WriteString("  CONTAMINATED: must not decide anything\n")
	}
	for _, f := range r.Flags {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
