package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"metalab/internal/npy"
	"metalab/spec"
)

// DumpFormat is the format key of the index.json a Dumper writes; a
// directory whose index.json carries it holds a dump that a later dump may
// replace.
const DumpFormat = "metalab-dump/1"

// A DumpIndex is the index.json of a dump directory: what ran, and for
// every case its variables, stages and buffers with their files.
type DumpIndex struct {
	Format  string `json:"format"`
	Spec    string `json:"spec"`
	Source  string `json:"source"`            // the spec's main source
	Variant string `json:"variant,omitempty"` // the file that replaced Source, if any
	Backend string `json:"backend"`
	// Complete is false while cases are still being written, and stays
	// false in a dump that was interrupted.
	Complete bool       `json:"complete"`
	Cases    []DumpCase `json:"cases"`
}

// A DumpCase is one case of a dump.
type DumpCase struct {
	Case    string         `json:"case"` // set/name
	Set     string         `json:"set"`
	Name    string         `json:"name"`
	Dir     string         `json:"dir"`  // the case's files, relative to the dump directory
	Vars    map[string]any `json:"vars"` // every variable of the case, derived ones included
	Stages  []DumpStage    `json:"stages"`
	Buffers []DumpBuffer   `json:"buffers"`
	Error   string         `json:"error,omitempty"` // the run failed; only the inputs ("before") are dumped
}

// A DumpStage is one stage of a dumped case.
type DumpStage struct {
	Entry        string   `json:"entry"`
	Threadgroups [3]int   `json:"threadgroups"`
	Threads      [3]int   `json:"threads"`
	Bindings     []string `json:"bindings"` // "buffer(0) q", "threadgroup(0) scratch"
}

// A DumpBuffer is one buffer of a dumped case. Its data are in .npy files
// of Dtype and Shape, one per label: "before" (the bytes the case starts
// with) and one per run (e.g. "after"). Slack bytes, if any, are in
// separate |u1 files.
type DumpBuffer struct {
	Name  string `json:"name"`
	Role  string `json:"role"` // input, output, inout or threadgroup
	Type  string `json:"type"` // the spec's element type
	Dtype string `json:"dtype,omitempty"`
	// Shape is the spec's shape (or [count]) with, for a vector, the
	// lanes in memory as the last dimension and, for a struct, its bytes.
	Shape []int  `json:"shape,omitempty"`
	Count int    `json:"count"` // elements
	Bytes int    `json:"bytes"` // allocated, slack included
	Slack int    `json:"slack,omitempty"`
	Note  string `json:"note,omitempty"` // how to read Dtype when it is not the element type itself
	// Layout describes a struct's fields.
	Layout []DumpField `json:"layout,omitempty"`
	// NumpyDtype is a struct's layout as numpy.dtype takes it (names,
	// formats, offsets, itemsize), so that
	// numpy.load(f).view(numpy.dtype(b["numpy_dtype"])) reads the fields.
	NumpyDtype map[string]any    `json:"numpy_dtype,omitempty"`
	Files      map[string]string `json:"files,omitempty"`       // label → .npy file, relative to the dump directory
	SlackFiles map[string]string `json:"slack_files,omitempty"` // label → .npy file of the slack bytes
	// Changed lists the labels whose bytes differ from "before".
	Changed []string `json:"changed,omitempty"`
}

// A DumpField is one field of a struct buffer's layout.
type DumpField struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Offset int    `json:"offset"` // bytes from the start of the element
	Size   int    `json:"size"`   // bytes of one field element
	Len    int    `json:"len,omitempty"`
}

// A DumpRun is the final bytes of one run of a case, by buffer name, under
// a label that names its files: "after" for a plain run, or "baseline" and
// "variant" for the two sides of a comparison.
type DumpRun struct {
	Label string
	Bytes map[string][]byte
}

// A Dumper writes the buffers of cases as .npy files under a directory,
// with an index.json that is rewritten after every case, so that an
// interrupted dump still describes the cases it finished. It never
// overwrites a file it did not write.
type Dumper struct {
	dir   string
	index DumpIndex
	used  map[string]bool // case directories
}

// NewDumper prepares dir for a dump described by index (its Cases are
// ignored): it creates dir, or takes an empty directory, or one holding a
// previous dump (an index.json of DumpFormat), whose listed files it
// removes first. Any other non-empty directory is refused, so that no
// unrelated file is overwritten or mixed in.
func NewDumper(dir string, index DumpIndex) (*Dumper, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("dump: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("dump: %w", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("dump: %s is not a directory", dir)
	default:
		if err := clearDump(dir); err != nil {
			return nil, err
		}
	}
	index.Format = DumpFormat
	index.Complete = false
	index.Cases = []DumpCase{}
	d := &Dumper{dir: dir, index: index, used: map[string]bool{}}
	if err := d.writeIndex(); err != nil {
		return nil, err
	}
	return d, nil
}

// clearDump accepts an empty directory, or removes the files of the dump
// in dir; it refuses anything else.
func clearDump(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("dump: %s is not empty and holds no metalab dump (index.json); give a new or empty directory", dir)
	}
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	var old DumpIndex
	if err := json.Unmarshal(data, &old); err != nil || old.Format != DumpFormat {
		return fmt.Errorf("dump: %s/index.json is not a metalab dump index; give a new or empty directory", dir)
	}
	var dirs []string
	for _, c := range old.Cases {
		for _, b := range c.Buffers {
			for _, files := range []map[string]string{b.Files, b.SlackFiles} {
				for _, f := range files {
					if !filepath.IsLocal(f) {
						return fmt.Errorf("dump: %s/index.json lists %q, outside the dump; remove the directory by hand", dir, f)
					}
					if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return fmt.Errorf("dump: remove the previous dump: %w", err)
					}
				}
			}
		}
		if filepath.IsLocal(c.Dir) {
			dirs = append(dirs, c.Dir)
		}
	}
	for _, d := range dirs {
		// Only empty directories go: anything else in them stays.
		for p := d; p != "." && p != ""; p = filepath.Dir(p) {
			if os.Remove(filepath.Join(dir, p)) != nil {
				break
			}
		}
	}
	return nil
}

// unsafeChars are what a file name made from a case or buffer name may
// not contain.
var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._=+-]+`)

// fileName makes s safe as one path element.
func fileName(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	s = strings.TrimLeft(s, ".")
	if s == "" {
		s = "_"
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

var labelRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Case writes the buffers of instance in: their bytes before the run
// (label "before") and after each of runs. A failed run is given as
// runErr, with the runs that did complete, if any.
func (d *Dumper) Case(in *spec.Instance, runs []DumpRun, runErr error) error {
	for _, r := range runs {
		if !labelRE.MatchString(r.Label) || r.Label == "before" {
			return fmt.Errorf("dump: bad run label %q", r.Label)
		}
	}
	name := in.Case.Set + "/" + in.Case.Name
	base := fmt.Sprintf("%03d-%s-%s", len(d.index.Cases)+1, fileName(in.Case.Set), fileName(in.Case.Name))
	caseDir := filepath.Join("cases", base)
	if err := os.MkdirAll(filepath.Join(d.dir, caseDir), 0o755); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	dc := DumpCase{Case: name, Set: in.Case.Set, Name: in.Case.Name, Dir: filepath.ToSlash(caseDir), Vars: jsonVars(in.Vars)}
	if runErr != nil {
		dc.Error = runErr.Error()
	}
	for _, st := range in.Stages {
		ds := DumpStage{
			Entry:        st.Entry,
			Threadgroups: [3]int{st.Threadgroups.X, st.Threadgroups.Y, st.Threadgroups.Z},
			Threads:      [3]int{st.Threads.X, st.Threads.Y, st.Threads.Z},
		}
		for _, b := range st.Bindings {
			space := "buffer"
			if b.Threadgroup {
				space = "threadgroup"
			}
			ds.Bindings = append(ds.Bindings, fmt.Sprintf("%s(%d) %s", space, b.Index, b.Buffer))
		}
		dc.Stages = append(dc.Stages, ds)
	}
	files := map[string]bool{}
	for _, b := range in.Buffers {
		db := DumpBuffer{Name: b.Name, Role: string(b.Role), Type: b.Type.Name, Count: b.Count, Bytes: b.Size, Slack: b.Slack}
		if b.Type.Kind == spec.Struct {
			for _, f := range b.Type.Fields {
				db.Layout = append(db.Layout, DumpField{Name: f.Name, Type: f.Type.Name, Offset: f.Offset, Size: f.Type.Size, Len: f.Len})
			}
			db.NumpyDtype = structDtype(b.Type)
		}
		if b.Role == spec.Threadgroup {
			dc.Buffers = append(dc.Buffers, db) // memory, no data
			continue
		}
		db.Dtype, db.Shape, db.Note = npyLayout(b)
		stem := fileName(b.Name)
		for i := 2; files[stem]; i++ {
			stem = fmt.Sprintf("%s-%d", fileName(b.Name), i)
		}
		files[stem] = true
		labels := []DumpRun{{Label: "before", Bytes: map[string][]byte{b.Name: b.Data}}}
		for _, r := range append(labels, runs...) {
			data, ok := r.Bytes[b.Name]
			if !ok {
				continue
			}
			if r.Label != "before" && !bytes.Equal(data, b.Data) {
				db.Changed = append(db.Changed, r.Label)
			}
			rel := filepath.Join(caseDir, stem+"."+r.Label+".npy")
			if err := d.writeArray(rel, b, db, data); err != nil {
				return err
			}
			if db.Files == nil {
				db.Files = map[string]string{}
			}
			db.Files[r.Label] = filepath.ToSlash(rel)
			if b.Slack > 0 && len(data) == b.Size {
				rel := filepath.Join(caseDir, stem+"."+r.Label+".slack.npy")
				if err := d.writeFile(rel, npy.Header{Descr: "|u1", Shape: []int{b.Slack}}, b.SlackBytes(data)); err != nil {
					return err
				}
				if db.SlackFiles == nil {
					db.SlackFiles = map[string]string{}
				}
				db.SlackFiles[r.Label] = filepath.ToSlash(rel)
			}
		}
		dc.Buffers = append(dc.Buffers, db)
	}
	d.index.Cases = append(d.index.Cases, dc)
	return d.writeIndex()
}

// writeArray writes the elements of data (b's bytes) as db describes
// them; bytes of an unexpected length are written raw.
func (d *Dumper) writeArray(rel string, b *spec.Buffer, db DumpBuffer, data []byte) error {
	if len(data) != b.Size {
		return d.writeFile(rel, npy.Header{Descr: "|u1", Shape: []int{len(data)}}, data)
	}
	return d.writeFile(rel, npy.Header{Descr: db.Dtype, Shape: db.Shape}, b.Elems(data))
}

// writeFile creates the .npy file rel, which must not exist.
func (d *Dumper) writeFile(rel string, h npy.Header, data []byte) error {
	path := filepath.Join(d.dir, rel)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("dump: %s exists and is not part of a previous dump; not overwriting it", path)
	}
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	werr := npy.Write(f, h, data)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("dump: %s: %w", path, err)
	}
	return nil
}

// Close marks the dump complete.
func (d *Dumper) Close() error {
	d.index.Complete = true
	return d.writeIndex()
}

// Index returns the index as written so far.
func (d *Dumper) Index() *DumpIndex { return &d.index }

// writeIndex replaces index.json through a temporary file and a rename.
func (d *Dumper) writeIndex() error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // dtypes read "<f4", not "\u003cf4"
	if err := enc.Encode(&d.index); err != nil {
		return fmt.Errorf("dump: index: %w", err)
	}
	tmp, err := os.CreateTemp(d.dir, ".index.json.tmp-*")
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	_, werr := tmp.Write(buf.Bytes())
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("dump: index: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("dump: index: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(d.dir, "index.json")); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("dump: index: %w", err)
	}
	return nil
}

// Dump writes one case as a dump of its own in dir: its inputs and the
// bytes of each run. It is what check --dump writes for the first
// differing case (runs "baseline" and "variant").
func Dump(dir string, index DumpIndex, in *spec.Instance, runs []DumpRun) error {
	d, err := NewDumper(dir, index)
	if err != nil {
		return err
	}
	if err := d.Case(in, runs, nil); err != nil {
		return err
	}
	return d.Close()
}

// npyDtypes are the .npy dtypes of the spec's scalars.
var npyDtypes = map[string]string{
	"half": "<f2", "float": "<f4", "bfloat": "<u2", "bool": "|u1",
	"char": "|i1", "uchar": "|u1", "short": "<i2", "ushort": "<u2",
	"int": "<i4", "uint": "<u4", "long": "<i8", "ulong": "<u8",
}

// npyLayout returns the dtype, shape and a reading note for buffer b: the
// spec's shape (or [count]), then the lanes of a vector as they are in
// memory, or a struct's bytes.
func npyLayout(b *spec.Buffer) (descr string, shape []int, note string) {
	shape = append([]int(nil), b.Shape...)
	if len(shape) == 0 {
		shape = []int{b.Count}
	}
	t := b.Type
	if t.Kind == spec.Struct {
		return "|u1", append(shape, t.Size), fmt.Sprintf("struct %s as its %d raw bytes per element; see layout, or view as numpy_dtype", t.Name, t.Size)
	}
	descr = npyDtypes[t.Scalar]
	var notes []string
	switch t.Scalar {
	case "bfloat":
		notes = append(notes, "bfloat16 as its raw uint16 bits (numpy has no bfloat16): as float32, (a.astype('<u4') << 16).view('<f4')")
	case "bool":
		notes = append(notes, "bool as its raw bytes")
	}
	if t.Kind == spec.Vector {
		stored := t.Size / (npy.Dtypes[descr])
		shape = append(shape, stored)
		if stored != t.Lanes {
			notes = append(notes, fmt.Sprintf("%s is stored as %d lanes; the last is padding", t.Name, stored))
		}
	}
	return descr, shape, strings.Join(notes, "; ")
}

// structDtype returns struct t as a numpy.dtype dictionary: each field's
// format is its scalar's dtype with the field's array and lane
// dimensions ("(3,4)<f4"); a nested struct is raw bytes ("|V16").
func structDtype(t *spec.Type) map[string]any {
	var names, formats []string
	var offsets []int
	for _, f := range t.Fields {
		var dims []string
		if f.Len > 0 {
			dims = append(dims, fmt.Sprint(f.Len))
		}
		format := fmt.Sprintf("|V%d", f.Type.Size)
		if f.Type.Kind != spec.Struct {
			format = npyDtypes[f.Type.Scalar]
			if f.Type.Kind == spec.Vector {
				dims = append(dims, fmt.Sprint(f.Type.Size/npy.Dtypes[format]))
			}
		}
		if len(dims) > 0 {
			sep := ","
			if len(dims) > 1 {
				sep = ""
			}
			format = "(" + strings.Join(dims, ",") + sep + ")" + format
		}
		names = append(names, f.Name)
		formats = append(formats, format)
		offsets = append(offsets, f.Offset)
	}
	return map[string]any{"names": names, "formats": formats, "offsets": offsets, "itemsize": t.Size}
}

// jsonVars returns vars with non-finite numbers as strings, which JSON
// cannot hold.
func jsonVars(vars map[string]any) map[string]any {
	out := make(map[string]any, len(vars))
	for k, v := range vars {
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = fmt.Sprint(f)
		}
		out[k] = v
	}
	return out
}
