package check_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"metalab/backend"
	"metalab/check"
	textedit "metalab/internal/edit"
	"metalab/msl"
	"metalab/mutate"
	"metalab/mutate/dropbarrier"
	"metalab/spec"
	"metalab/variants"
)

// The tests in this file hold the checking mode to verdicts a kernel
// engineer can work out by hand, on small kernels written in the styles
// of public ML libraries (kernels/examples/trust): ggml's simd-group
// reductions, the classic tree reduction, a zero-then-accumulate
// histogram, a two-pass layer norm, an online softmax, and simd groups
// that keep to themselves. Every barrier of every kernel is dropped in
// turn and must give what the `// drop:` comment on its line says; faults
// planted beyond barriers must be caught and named, and are run once more
// with the byte comparison alone to show what the detector adds.

// trustKernels are the example kernels, by base name: <name>.metal and
// its spec <name>.yaml under kernels/examples/trust.
var trustKernels = []string{"ggml_norm", "tree", "histogram", "layer_norm", "softmax", "simd_slices"}

// A trustKernel is one example kernel, loaded.
type trustKernel struct {
	name string
	spec *spec.Spec
	src  []byte
	file *msl.File
}

func loadTrust(t *testing.T, name string) *trustKernel {
	t.Helper()
	s, err := spec.Load(filepath.Join("..", "kernels", "examples", "trust", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(s.Source)
	if err != nil {
		t.Fatal(err)
	}
	f, err := msl.Parse(s.Source, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range f.Warnings {
		t.Errorf("%s: warning: %v", name, w) // a warning can hide a barrier
	}
	return &trustKernel{name: name, spec: s, src: src, file: f}
}

// run checks vs against k's baseline on its quick cases.
func (k *trustKernel) run(t *testing.T, b backend.Backend, vs []check.Variant, mod func(*check.Options)) *check.Report {
	t.Helper()
	opts := check.Options{Spec: k.spec, Backend: b, Sets: []string{"quick"}, Variants: vs, Timeout: 2 * time.Minute}
	if mod != nil {
		mod(&opts)
	}
	rep, err := check.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("%s: %v", k.name, err)
	}
	return rep
}

// cleanControl fails t unless the control passed every case with no
// finding at all, warnings included.
func cleanControl(t *testing.T, k *trustKernel, rep *check.Report) {
	t.Helper()
	c := rep.Control
	if c.Status != check.Pass {
		t.Fatalf("%s: control %s: %s", k.name, c.Status, c.Msg)
	}
	if len(c.Warnings) > 0 {
		t.Errorf("%s: control warnings: %q", k.name, c.Warnings)
	}
	if len(c.Cases) != rep.Cases || rep.Cases < 2 {
		t.Errorf("%s: control ran %d of %d cases; want every case of a quick set of several", k.name, len(c.Cases), rep.Cases)
	}
	for _, cr := range c.Cases {
		for _, f := range cr.Findings {
			t.Errorf("%s: control case %s: finding %s", k.name, cr.Case, f.Msg)
		}
	}
}

// Drop annotations: what removing one barrier must give.
const (
	dropRace     = "race"        // fail-race
	dropUninit   = "uninit"      // fail-uninit
	dropEither   = "race|uninit" // either: which access comes first is the schedule's choice
	dropLockstep = "lockstep"    // passes, with a "relies on SIMD lockstep" warning (fail-lockstep with Strict)
	dropPass     = "pass"        // passes with no finding at all: the barrier is not needed
)

var dropRe = regexp.MustCompile(`//\s*drop:\s*(race\|uninit|race|uninit|lockstep|pass)\b`)

// annotation returns the drop annotation of the source line holding off,
// or "".
func annotation(src []byte, off int) string {
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	end := bytes.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src) - off
	}
	m := dropRe.FindSubmatch(src[start : off+end])
	if m == nil {
		return ""
	}
	return string(m[1])
}

// lineOf returns the 1-based line of byte offset off in src.
func lineOf(src []byte, off int) int { return bytes.Count(src[:off], []byte("\n")) + 1 }

// posRe matches the source position of an access in a finding's message:
// " at file:line" or " at file:line:col".
var posRe = regexp.MustCompile(` at (\S+?):(\d+)(?::\d+)?(?:[,;)]|$| )`)

// A pos is one source position named by a finding.
type pos struct {
	file string
	line int
}

// positions returns the access positions msg names.
func positions(msg string) []pos {
	var ps []pos
	for _, m := range posRe.FindAllStringSubmatch(msg, -1) {
		n, _ := strconv.Atoi(m[2])
		ps = append(ps, pos{m[1], n})
	}
	return ps
}

// baseLine maps line n of a variant, built from base by edits (sorted,
// against base), to the line of base it came from.
func baseLine(base, variant []byte, edits []textedit.Edit, n int) int {
	off := 0
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(variant[off:], '\n')
		if j < 0 {
			return -1
		}
		off += j + 1
	}
	// Walk the edits in order: an offset past an edit moves by the
	// difference of its lengths; one inside its new text is its start.
	delta := 0
	for _, e := range edits {
		switch {
		case off < e.Start+delta:
			return lineOf(base, off-delta)
		case off < e.Start+delta+len(e.New):
			return lineOf(base, e.Start)
		}
		delta += len(e.New) - (e.End - e.Start)
	}
	return lineOf(base, off-delta)
}

// textEdits returns the edit that turns base into variant: one
// replacement of the differing middle.
func textEdits(base, variant []byte) []textedit.Edit {
	p := 0
	for p < len(base) && p < len(variant) && base[p] == variant[p] {
		p++
	}
	q := 0
	for q < len(base)-p && q < len(variant)-p && base[len(base)-1-q] == variant[len(variant)-1-q] {
		q++
	}
	return []textedit.Edit{{Start: p, End: len(base) - q, New: string(variant[p : len(variant)-q])}}
}

func sourceLine(src []byte, n int) string {
	lines := strings.Split(string(src), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}

// A problem is one way a result falls short of what a test wants; known
// names the known checker bug it is an instance of, if any.
type problem struct {
	text  string
	known string
}

// Known checker bugs: none at present. A result that falls short only by
// instances of a known bug is skipped with the bug's description, not
// failed; a result that no longer shows its listed bug fails, so a list
// stays true.

// arrayRe finds the threadgroup array a finding is about.
var arrayRe = regexp.MustCompile(`(?:race on|relies on SIMD lockstep on|uninitialised read of) threadgroup array (\w+)\[`)

// findingLines checks that msg, a finding about variant text (base with
// edits, at path vpath), names a threadgroup array the kernel declares
// and want source positions, each a line of vpath that touches that
// array.
func findingLines(base, variant []byte, edits []textedit.Edit, vpath, msg string, want int) []problem {
	m := arrayRe.FindStringSubmatch(msg)
	if m == nil {
		return []problem{{text: "names no threadgroup array"}}
	}
	name := m[1]
	if !regexp.MustCompile(`threadgroup\s+[\w:]+\s+` + name + `\[`).Match(base) {
		return []problem{{text: fmt.Sprintf("names %s, which the kernel does not declare in threadgroup memory", name)}}
	}
	var ps []problem
	got := positions(msg)
	if len(got) != want {
		ps = append(ps, problem{text: fmt.Sprintf("names %d source positions, want %d", len(got), want)})
	}
	use := regexp.MustCompile(`\b` + name + `\s*\[`)
	for _, p := range got {
		switch {
		case p.file == vpath:
			bl := baseLine(base, variant, edits, p.line)
			if text := sourceLine(base, bl); !use.MatchString(text) {
				ps = append(ps, problem{text: fmt.Sprintf("line %d (baseline line %d, %q) does not touch %s", p.line, bl, strings.TrimSpace(text), name)})
			}
		case strings.Contains(p.file, "/prelude/"):
			ps = append(ps, problem{text: fmt.Sprintf("position %s:%d is in the prelude, not in %s", filepath.Base(p.file), p.line, vpath)})
		default:
			ps = append(ps, problem{text: fmt.Sprintf("position %s:%d is not in %s", p.file, p.line, vpath)})
		}
	}
	return ps
}

// settle reports ps on t: unknown problems fail it. It returns "yes"
// when there are none, "NO" when some are unknown, else "known bug" and
// the known bugs shown. listed is the known bug the caller expects, if
// any: one that does not show fails t, so the list stays true.
func settle(t *testing.T, ps []problem, listed string) (string, []string) {
	t.Helper()
	var bugs []string
	failed := false
	for _, p := range ps {
		if p.known == "" {
			t.Error(p.text)
			failed = true
			continue
		}
		t.Logf("%s (known bug)", p.text)
		if !slices.Contains(bugs, p.known) {
			bugs = append(bugs, p.known)
		}
	}
	if listed != "" && !slices.Contains(bugs, listed) && !failed {
		t.Errorf("listed as a known bug that does not show any more: remove it from the list (%s)", listed)
		return "NO", nil
	}
	switch {
	case failed:
		return "NO", nil
	case len(bugs) > 0:
		return "known bug", bugs
	}
	return "yes", nil
}

// A dropVerdict is one row of the barrier table.
type dropVerdict struct {
	kernel, fn string
	line       int
	want       string
	got        check.Status
	ok         string
}

// TestTrustBarriers drops every barrier of every example kernel, one per
// variant, and holds each variant to the annotation on its barrier's line.
func TestTrustBarriers(t *testing.T) {
	b := cpuBackend(t)
	var rows []dropVerdict
	for _, name := range trustKernels {
		t.Run(name, func(t *testing.T) {
			k := loadTrust(t, name)
			found, err := mutate.Find(k.file, []*mutate.Mutation{dropbarrier.Mutation}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(found) == 0 {
				t.Fatal("no barrier sites")
			}
			type dropped struct {
				site *mutate.FoundSite
				v    *variants.Variant
				path string
				want string
				line int
			}
			var ds []dropped
			var vs []check.Variant
			for _, s := range found {
				line := lineOf(k.src, s.Pos)
				want := annotation(k.src, s.Pos)
				if want == "" {
					t.Errorf("%s:%d: barrier without a `// drop:` annotation", k.spec.Source, line)
					continue
				}
				v, err := variants.Build(k.file, found, []mutate.SiteRef{{Mutation: s.Mutation.Name, Func: s.Func.Name, Ordinal: s.Ordinal, Hash: s.Hash}})
				if err != nil {
					t.Fatal(err)
				}
				path := fmt.Sprintf("%s-drop-L%d.metal", name, line)
				ds = append(ds, dropped{site: s, v: v, path: path, want: want, line: line})
				vs = append(vs, check.Variant{Name: path, Path: path, Text: v.Source})
			}
			rep := k.run(t, b, vs, nil)
			cleanControl(t, k, rep)
			if len(rep.Variants) != len(ds) {
				t.Fatalf("%d results for %d variants", len(rep.Variants), len(ds))
			}
			var lockstep []check.Variant
			for i, d := range ds {
				r := rep.Variants[i]
				row := dropVerdict{kernel: name, fn: d.site.Func.Name, line: d.line, want: d.want, got: r.Status}
				t.Run(fmt.Sprintf("L%d", d.line), func(t *testing.T) {
					listed := ""
					ps := judgeDrop(k, d.v, d.path, d.site.Func.Name, d.want, rep.Cases, r)
					if len(ps) > 0 {
						t.Logf("msg: %s", r.Msg)
					}
					var bugs []string
					row.ok, bugs = settle(t, ps, listed)
					if bugs != nil {
						t.Skip(strings.Join(bugs, "; "))
					}
				})
				rows = append(rows, row)
				if d.want == dropLockstep && r.Status == check.Pass {
					lockstep = append(lockstep, vs[i])
				}
			}
			// With Strict, reliance on lockstep is a failure.
			if len(lockstep) > 0 {
				rep := k.run(t, b, lockstep, func(o *check.Options) { o.Strict = true })
				for _, r := range rep.Variants {
					if r.Status != check.FailLockstep {
						t.Errorf("%s with Strict: %s, want %s", r.Name, r.Status, check.FailLockstep)
					}
				}
			}
		})
	}
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KERNEL\tFUNCTION\tBARRIER LINE\tANNOTATION\tSTATUS\tOK")
	type tally struct{ n, yes, known int }
	counts := map[string]*tally{}
	for _, r := range rows {
		fmt.Fprintf(w, "%s.metal\t%s\t%d\t%s\t%s\t%s\n", r.kernel, r.fn, r.line, r.want, r.got, r.ok)
		c := counts[r.want]
		if c == nil {
			c = &tally{}
			counts[r.want] = c
		}
		c.n++
		switch r.ok {
		case "yes":
			c.yes++
		case "known bug":
			c.known++
		}
	}
	w.Flush()
	var sum []string
	for _, a := range []string{dropRace, dropUninit, dropEither, dropLockstep, dropPass} {
		if c := counts[a]; c != nil {
			sum = append(sum, fmt.Sprintf("%s: %d of %d as annotated (%d more up to a known bug)", a, c.yes, c.n, c.known))
		}
	}
	t.Logf("dropped barriers:\n%s%s", &buf, strings.Join(sum, "\n"))
}

// judgeDrop holds r, the result of variant v (k with one barrier of
// function fn dropped) on cases cases, to the annotation want.
func judgeDrop(k *trustKernel, v *variants.Variant, vpath, fn, want string, cases int, r *check.Result) []problem {
	var ps []problem
	bad := func(format string, args ...any) { ps = append(ps, problem{text: fmt.Sprintf(format, args...)}) }
	var allowed []check.Status
	switch want {
	case dropRace:
		allowed = []check.Status{check.FailRace}
	case dropUninit:
		allowed = []check.Status{check.FailUninit}
	case dropEither:
		allowed = []check.Status{check.FailRace, check.FailUninit}
	case dropLockstep:
		// Relying on lockstep is a warning while the bytes match; where
		// they differ the emulator, which runs lanes one after another,
		// cannot vouch for them, and says so.
		allowed = []check.Status{check.Pass, check.FailLockstep}
	case dropPass:
		allowed = []check.Status{check.Pass}
	}
	if !slices.Contains(allowed, r.Status) {
		ps = append(ps, problem{text: fmt.Sprintf("status %s, want %v", r.Status, allowed)})
	}
	if len(r.Cases) != cases {
		bad("%d cases judged, want %d", len(r.Cases), cases)
	}
	// Every case, not only the first: a verdict must not hang on a size.
	for _, cr := range r.Cases {
		if !slices.Contains(allowed, cr.Status) {
			ps = append(ps, problem{text: fmt.Sprintf("case %s: status %s, want %v", cr.Case, cr.Status, allowed)})
		}
	}
	switch want {
	case dropRace, dropUninit, dropEither:
		if !strings.HasPrefix(r.Msg, "kernel "+fn+": ") {
			bad("message does not start with the kernel %s", fn)
		}
		switch r.Status {
		case check.FailRace:
			ps = append(ps, findingLines(k.src, v.Source, v.Edits, vpath, r.Msg, 2)...)
		case check.FailUninit:
			ps = append(ps, findingLines(k.src, v.Source, v.Edits, vpath, r.Msg, 1)...)
		}
	case dropLockstep:
		n := 0
		for _, cr := range r.Cases {
			for _, f := range cr.Findings {
				if f.Kind != backend.FindLockstep {
					if cr.Status != check.Pass {
						continue // the status is the problem, reported above
					}
					bad("case %s: unexpected finding %s", cr.Case, f.Msg)
					continue
				}
				n++
				ps = append(ps, findingLines(k.src, v.Source, v.Edits, vpath, f.Msg, 2)...)
			}
		}
		if r.Status == check.Pass && (n == 0 || len(r.Warnings) == 0) {
			bad("no lockstep warning")
		}
	case dropPass:
		for _, cr := range r.Cases {
			for _, f := range cr.Findings {
				bad("case %s: finding %s", cr.Case, f.Msg)
			}
		}
	}
	return ps
}

// dropLine returns src without the one line that contains marker; it
// fails t unless exactly one line does.
func dropLine(t *testing.T, src []byte, marker string) []byte {
	t.Helper()
	if n := bytes.Count(src, []byte(marker)); n != 1 {
		t.Fatalf("planted edit: %q occurs %d times, want once", marker, n)
	}
	i := bytes.Index(src, []byte(marker))
	start := bytes.LastIndexByte(src[:i], '\n') + 1
	end := i + bytes.IndexByte(src[i:], '\n') + 1
	return append(append([]byte{}, src[:start]...), src[end:]...)
}

// lineAfter returns the line of the first text after anchor in src.
func lineAfter(t *testing.T, src []byte, anchor, text string) int {
	t.Helper()
	a := bytes.Index(src, []byte(anchor))
	if a < 0 {
		t.Fatalf("%q not found", anchor)
	}
	i := bytes.Index(src[a:], []byte(text))
	if i < 0 {
		t.Fatalf("%q not found after %q", text, anchor)
	}
	return lineOf(src, a+i)
}

// A judge collects the problems of one result.
type judge struct {
	t  *testing.T
	ps []problem
}

// errorf records a problem.
func (j *judge) errorf(format string, args ...any) {
	j.ps = append(j.ps, problem{text: fmt.Sprintf(format, args...)})
}

// bugf records a problem that is an instance of the known bug known.
func (j *judge) bugf(known, format string, args ...any) {
	j.ps = append(j.ps, problem{text: fmt.Sprintf(format, args...), known: known})
}

// A plantedBug is a fault planted in an example kernel by a source edit.
type plantedBug struct {
	name   string
	kernel string
	plant  func(t *testing.T, src []byte) []byte
	want   []check.Status // any of these
	// every: each case of the quick set must fail with one of want, not
	// only the first.
	every bool
	// verify holds the result to more than its status: what the report
	// must name. base and text are the kernel and the variant, vpath the
	// variant's name in positions.
	verify func(j *judge, base, text []byte, vpath string, r *check.Result)
	// known is the known bug this fault shows, if any.
	known string
	// always: the fault must give the same verdict, verified alike, on
	// further runs, and bad-access without the checking mode too.
	always bool
}

// fatalFinding returns the finding that stopped r's last case, or fails t.
func fatalFinding(t *testing.T, r *check.Result) check.Finding {
	t.Helper()
	if len(r.Cases) == 0 {
		t.Fatalf("no case judged")
	}
	cr := r.Cases[len(r.Cases)-1]
	for _, f := range cr.Findings {
		if f.Detail.Fatal {
			return f
		}
	}
	t.Fatalf("case %s: no fatal finding in %d findings", cr.Case, len(cr.Findings))
	return check.Finding{}
}

// at checks that msg names line want of the baseline (through the
// variant's edit) as an access position in vpath.
func at(j *judge, base, text []byte, vpath, msg string, want ...int) {
	var got []int
	for _, p := range positions(msg) {
		if p.file != vpath {
			j.errorf("position %s:%d is not in %s: %s", p.file, p.line, vpath, msg)
			continue
		}
		got = append(got, baseLine(base, text, textEdits(base, text), p.line))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		j.errorf("message names baseline lines %v, want %v: %s", got, want, msg)
	}
}

// deviceOOB returns a plantedBug verify for a write to out (index 1 of
// tree.yaml, 3 floats in the first case) at element gid + delta.
func deviceOOB(delta int64) func(j *judge, base, text []byte, vpath string, r *check.Result) {
	return func(j *judge, base, text []byte, vpath string, r *check.Result) {
		f := fatalFinding(j.t, r)
		d := f.Detail
		off := 4 * (int64(d.Access.Group[0]) + delta)
		if d.Kind != backend.FindBounds || d.Space != "device" || d.Buffer != 1 || d.Offset != off || !d.Access.Write {
			j.errorf("finding %+v, want a write to buffer 1 at byte %d (threadgroup %d)", d, off, d.Access.Group[0])
		}
		var where string
		if off < 0 {
			where = fmt.Sprintf("out-of-bounds write of buffer out (index 1), %d bytes before its start", -off)
		} else {
			where = fmt.Sprintf("out-of-bounds write of buffer out (index 1), byte %d, %d bytes past its end (12 bytes)", off, off-12)
		}
		if !strings.Contains(r.Msg, where) || !strings.HasPrefix(r.Msg, "kernel tree_sum: ") {
			j.errorf("msg %q does not say %q", r.Msg, where)
		}
		at(j, base, text, vpath, r.Msg, lineAfter(j.t, base, "tree_sum", "out[gid] = partial[0];"))
		if len(r.Cases) != 1 {
			j.errorf("%d cases run, want the first only: a bad access stops the variant", len(r.Cases))
		}
	}
}

// tgOOB verifies a bad write to the threadgroup array partial at the line
// of tree.metal holding line.
func tgOOB(line string) func(j *judge, base, text []byte, vpath string, r *check.Result) {
	return func(j *judge, base, text []byte, vpath string, r *check.Result) {
		f := fatalFinding(j.t, r)
		if !regexp.MustCompile(`out-of-bounds \w+ of threadgroup array partial\b`).MatchString(r.Msg) {
			j.errorf("msg %q does not name the threadgroup array partial", r.Msg)
		}
		if f.Detail.Space != "threadgroup" || f.Detail.Array != "partial" || f.Detail.Kind != backend.FindBounds {
			j.errorf("finding %+v, want a bounds finding in threadgroup array partial", f.Detail)
		}
		// The array-bounds check runs before the access and cannot tell a
		// load from a store: it says "access", never a wrong "read".
		if !(f.Detail.Access.Write || f.Detail.Access.Either) || strings.Contains(r.Msg, "out-of-bounds read") {
			j.errorf("the store is reported as a read: %s", r.Msg)
		}
		at(j, base, text, vpath, r.Msg, lineAfter(j.t, base, "tree_sum", line))
	}
}

// plantedBugs are the faults beyond barriers, on the example kernels.
var plantedBugs = []plantedBug{
	{
		name: "device write 8 KiB past the end", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "out[gid] = partial[0];", "out[gid + 3 + 2048] = partial[0];")
		},
		want: []check.Status{check.BadAccess}, verify: deviceOOB(3 + 2048), always: true,
	},
	{
		name: "device write 256 KiB past the end", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "out[gid] = partial[0];", "out[gid + 3 + 65536] = partial[0];")
		},
		want: []check.Status{check.BadAccess}, verify: deviceOOB(3 + 65536), always: true,
	},
	{
		name: "device write 64 KiB before the start", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "out[gid] = partial[0];", "out[int(gid) - 16384] = partial[0];")
		},
		want: []check.Status{check.BadAccess}, verify: deviceOOB(-16384), always: true,
	},
	{
		name: "threadgroup partial[tid + 64]", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "partial[tid] = acc;", "partial[tid + 64] = acc;")
		},
		want: []check.Status{check.BadAccess}, verify: tgOOB("partial[tid] = acc;"),
	},
	{
		name: "threadgroup partial[tid - 64]", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "partial[tid] = acc;", "partial[tid - 64] = acc;")
		},
		want: []check.Status{check.BadAccess}, verify: tgOOB("partial[tid] = acc;"),
	},
	{
		name: "one element's write skipped", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "    partial[tid] = acc;\n", "    if (tid != 77) {\n        partial[tid] = acc;\n    }\n")
		},
		want: []check.Status{check.FailUninit}, every: true,
		verify: func(j *judge, base, text []byte, vpath string, r *check.Result) {
			if !strings.Contains(r.Msg, "uninitialised read of threadgroup array partial[77] (byte 308)") {
				j.errorf("msg %q does not name partial[77]", r.Msg)
			}
			at(j, base, text, vpath, r.Msg, lineAfter(j.t, base, "tree_sum", "partial[tid] += partial[tid + s];"))
		},
	},
	{
		name: "thread-private array past its end", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "acc4[k % 4] += row[i];", "acc4[k] += row[i];")
		},
		want: []check.Status{check.BadAccess},
		verify: func(j *judge, base, text []byte, vpath string, r *check.Result) {
			f := fatalFinding(j.t, r)
			if f.Detail.Kind != backend.FindBounds || f.Detail.Space != "thread" && f.Detail.Space != "" || f.Detail.Offset != 4 {
				j.errorf("finding %+v, want index 4 of a thread array", f.Detail)
			}
			if !strings.Contains(r.Msg, "acc4") || !strings.Contains(r.Msg, "index 4") {
				j.errorf("msg %q does not name acc4 and index 4", r.Msg)
			}
			at(j, base, text, vpath, r.Msg, lineAfter(j.t, base, "tree_sum", "acc4[k % 4] += row[i];"))
			// The first case has at most 3 elements a thread: it passes;
			// the second stops the variant.
			if len(r.Cases) != 2 || r.Cases[0].Status != check.Pass {
				j.errorf("cases %+v, want the first to pass and the second to stop", r.Cases)
			}
		},
	},
	{
		name: "barrier inside if (tid == 0), the others returned", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "    if (tid == 0) {\n        out[gid] = partial[0];", "    if (tid == 0) {\n        threadgroup_barrier(mem_flags::mem_threadgroup);\n        out[gid] = partial[0];")
		},
		want: []check.Status{check.Pass},
		verify: func(j *judge, base, text []byte, vpath string, r *check.Result) {
			line := lineAfter(j.t, base, "tree_sum", "if (tid == 0) {") + 1
			want := fmt.Sprintf("divergent barrier: 255 of 256 threads had returned at %s:%d in threadgroup (", vpath, line)
			if len(r.Warnings) == 0 {
				j.errorf("no warning, want one saying %q", want)
			}
			for _, w := range r.Warnings {
				if !strings.Contains(w, want) {
					j.errorf("warning %q, want one saying %q", w, want)
				}
			}
			for _, cr := range r.Cases {
				for _, f := range cr.Findings {
					if f.Kind != backend.FindDivergent || !f.Warning {
						j.errorf("case %s: finding %s, want divergent-barrier warnings only", cr.Case, f.Msg)
					}
				}
			}
		},
	},
	{
		name: "threads wait at different barriers", kernel: "layer_norm",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "        red[sgitg] = s;\n", "        red[sgitg] = s;\n        threadgroup_barrier(mem_flags::mem_threadgroup);\n")
		},
		want: []check.Status{check.Deadlock},
		verify: func(j *judge, base, text []byte, vpath string, r *check.Result) {
			inner := lineAfter(j.t, base, "layer_norm", "red[sgitg] = s;") + 1
			outer := inner + 2
			for _, l := range []int{inner, outer} {
				if !strings.Contains(r.Msg, fmt.Sprintf("%s:%d", vpath, l)) {
					j.errorf("msg %q does not name the barrier at %s:%d", r.Msg, vpath, l)
				}
			}
			if !strings.Contains(r.Msg, "threads wait at different barriers") {
				j.errorf("msg %q does not say the threads wait at different barriers", r.Msg)
			}
		},
	},
	{
		name: "tree's first barrier dropped, N = 600 to 4099", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return dropLine(t, src, "// drop: race|uninit (at s = 128")
		},
		want: []check.Status{check.FailRace, check.FailUninit}, every: true,
		verify: func(j *judge, base, text []byte, vpath string, r *check.Result) {
			if !strings.Contains(r.Msg, "threadgroup array partial[") {
				j.errorf("msg %q does not name partial", r.Msg)
			}
		},
	},
	{
		// A size-specialised "optimisation": the first barrier only for
		// long rows. Only the short row of the quick set can show it.
		name: "tree's first barrier skipped for n < 1024", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "    threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race|uninit (at s = 128", "    if (p.n >= 1024) threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race|uninit (at s = 128")
		},
		want: []check.Status{check.FailRace, check.FailUninit},
		verify: func(j *judge, base, text []byte, vpath string, r *check.Result) {
			for _, cr := range r.Cases {
				long := !strings.HasSuffix(cr.Case, "/N=600")
				if long != (cr.Status == check.Pass) {
					j.errorf("case %s: %s, want a failure at N=600 only", cr.Case, cr.Status)
				}
			}
			if len(r.Cases) != 3 {
				j.errorf("%d cases judged, want 3", len(r.Cases))
			}
		},
	},
	{
		name: "ggml rms_norm: barrier dropped across a simd_sum", kernel: "ggml_norm",
		plant: func(t *testing.T, src []byte) []byte {
			return dropLine(t, src, "// drop: race (the zeroing above and lane 0's write below")
		},
		want: []check.Status{check.FailRace}, every: true,
		verify: func(j *judge, base, text []byte, vpath string, r *check.Result) {
			if !strings.HasPrefix(r.Msg, "kernel kernel_rms_norm_f32: race on threadgroup array shmem_f32[") {
				j.errorf("msg %q does not name the kernel and shmem_f32", r.Msg)
			}
			at(j, base, text, vpath, r.Msg,
				lineAfter(j.t, base, "kernel_rms_norm_f32(", "shmem_f32[tiisg] = 0.0f;"),
				lineAfter(j.t, base, "kernel_rms_norm_f32(", "shmem_f32[sgitg] = sumf;"))
		},
	},
	{
		name: "barrier without mem_threadgroup", kernel: "layer_norm",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "threadgroup_barrier(mem_flags::mem_threadgroup); // drop: race (pass 2", "threadgroup_barrier(mem_flags::mem_device); // drop: race (pass 2")
		},
		want: []check.Status{check.FailRace}, every: true,
		verify: func(j *judge, base, text []byte, vpath string, r *check.Result) {
			line := lineAfter(j.t, base, "layer_norm", "// drop: race (pass 2")
			if !strings.Contains(r.Msg, fmt.Sprintf("a threadgroup_barrier at line %d does not order threadgroup memory", line)) {
				j.errorf("msg %q does not point at the barrier at line %d that orders no threadgroup memory", r.Msg, line)
			}
			at(j, base, text, vpath, r.Msg, lineAfter(j.t, base, "layer_norm", "total += red[k];"), lineAfter(j.t, base, "// Pass 2", "red[sgitg] = v;"))
		},
	},
	{
		name: "read-modify-write of a neighbour threadgroup's output", kernel: "tree",
		plant: func(t *testing.T, src []byte) []byte {
			return edit(t, src, "out[gid] = partial[0];", "out[gid] = partial[0];\n        out[(gid + 1) % 2] += 0.0f;")
		},
		want: []check.Status{check.FailRace}, every: true,
		verify: func(j *judge, base, text []byte, vpath string, r *check.Result) {
			if !strings.Contains(r.Msg, "race on buffer out[") || !strings.Contains(r.Msg, "different threadgroups in one dispatch") {
				j.errorf("msg %q does not name buffer out and two threadgroups", r.Msg)
			}
			ps := positions(r.Msg)
			if len(ps) != 2 || ps[0].file != vpath || ps[1].file != vpath {
				j.errorf("msg %q does not name two lines of %s", r.Msg, vpath)
			}
		},
	},
}

// TestTrustPlanted plants faults beyond barriers in the example kernels:
// each must get its verdict, with a report that names what and where.
// Each is run again with the byte comparison alone (NoDetect), and the
// table logged says which faults the bytes would have let through.
func TestTrustPlanted(t *testing.T) {
	b := cpuBackend(t)
	type row struct {
		bug           *plantedBug
		got, noDetect check.Status
		ok            string
	}
	var rows []*row
	byKernel := map[string][]*plantedBug{}
	var order []string
	for i := range plantedBugs {
		pb := &plantedBugs[i]
		if byKernel[pb.kernel] == nil {
			order = append(order, pb.kernel)
		}
		byKernel[pb.kernel] = append(byKernel[pb.kernel], pb)
	}
	for _, name := range order {
		t.Run(name, func(t *testing.T) {
			k := loadTrust(t, name)
			var vs []check.Variant
			var texts [][]byte
			for i, pb := range byKernel[name] {
				text := pb.plant(t, k.src)
				path := fmt.Sprintf("%s-planted-%d.metal", name, i)
				vs = append(vs, check.Variant{Name: path, Path: path, Text: text})
				texts = append(texts, text)
			}
			rep := k.run(t, b, vs, nil)
			cleanControl(t, k, rep)
			plain := k.run(t, b, vs, func(o *check.Options) { o.NoDetect = true })
			if plain.Control.Status != check.Pass {
				t.Fatalf("control without the checking mode: %s %s", plain.Control.Status, plain.Control.Msg)
			}
			for i, pb := range byKernel[name] {
				r, pr := rep.Variants[i], plain.Variants[i]
				rw := &row{bug: pb, got: r.Status, noDetect: pr.Status}
				rows = append(rows, rw)
				t.Run(pb.name, func(t *testing.T) {
					t.Logf("checking mode: %s: %s", r.Status, r.Msg)
					t.Logf("bytes only: %s: %s", pr.Status, pr.Msg)
					j := &judge{t: t}
					if !slices.Contains(pb.want, r.Status) {
						j.errorf("status %s, want %v: %s", r.Status, pb.want, r.Msg)
					}
					if pb.every {
						if len(r.Cases) != rep.Cases {
							j.errorf("%d of %d cases judged", len(r.Cases), rep.Cases)
						}
						for _, cr := range r.Cases {
							if !slices.Contains(pb.want, cr.Status) {
								j.errorf("case %s: %s, want %v", cr.Case, cr.Status, pb.want)
							}
						}
					}
					if pb.verify != nil {
						pb.verify(j, k.src, texts[i], vs[i].Path, r)
					}
					if pb.always {
						if pr.Status != check.BadAccess {
							j.errorf("without the checking mode: %s, want %s", pr.Status, check.BadAccess)
						}
						// Which threadgroup faults first is up to the
						// workers; the verdict and what it names are not.
						for n := 0; n < 2; n++ {
							again := k.run(t, b, vs[i:i+1], nil).Variants[0]
							if again.Status != r.Status {
								j.errorf("run %d: %s %q, want %s", n+2, again.Status, again.Msg, r.Status)
							}
							pb.verify(j, k.src, texts[i], vs[i].Path, again)
						}
					}
					var bugs []string
					rw.ok, bugs = settle(t, j.ps, pb.known)
					if bugs != nil {
						t.Skip(strings.Join(bugs, "; "))
					}
				})
			}
		})
	}
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PLANTED BUG\tKERNEL\tCHECKING MODE\tOK\tBYTES ONLY (NoDetect)\tBYTES ALONE")
	missed, failing, warned := 0, 0, 0
	for _, r := range rows {
		verdict := "catch it"
		switch {
		case r.got == check.Pass && r.noDetect == check.Pass:
			verdict = "pass it too (the checking mode warns)"
			warned++
		case r.noDetect == check.Pass:
			verdict = "MISS it"
			missed++
		}
		if r.got != check.Pass {
			failing++
		}
		fmt.Fprintf(w, "%s\t%s.metal\t%s\t%s\t%s\t%s\n", r.bug.name, r.bug.kernel, r.got, r.ok, r.noDetect, verdict)
	}
	w.Flush()
	t.Logf("planted bugs:\n%sthe checking mode fails %d of %d planted bugs and warns of %d; the byte comparison alone misses %d of those %d", &buf, failing, len(rows), warned, missed, failing)
}
