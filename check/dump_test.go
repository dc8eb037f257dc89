package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"metalab/internal/npy"
	"metalab/spec"
)

const dumpSpec = `source: k.metal
structs:
  P:
    - {name: n, type: uint, value: N}
    - {name: s, type: float, len: 2, value: [0.5, 2]}
buffers:
  - {name: q, index: 0, type: half, count: N * 2, shape: [N, 2], role: input, gen: {kind: uniform, min: -1, max: 1}}
  - {name: v3, index: 1, type: float3, count: N, role: inout, gen: {kind: iota}}
  - {name: bf, index: 2, type: bfloat, count: N, role: input, gen: {kind: constant, value: 1.5}}
  - {name: p, index: 3, type: P, role: input}
  - {name: out/../x, index: 4, type: int, count: N, role: output, slack: 6}
  - {name: scratch, index: 0, type: float, count: 8, role: threadgroup}
stages:
  - {entry: k, threadgroups: [1], threads: [N]}
sets:
  quick:
    cases: [{N: 4}, {name: "odd name/..", N: 2}]
`

func dumpInstances(t *testing.T) []*spec.Instance {
	t.Helper()
	s, err := spec.Parse("k.yaml", []byte(dumpSpec))
	if err != nil {
		t.Fatal(err)
	}
	var out []*spec.Instance
	for _, c := range mustCases(t, s) {
		in, err := s.Instantiate(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
	}
	return out
}

// after makes the bytes of a run: every device buffer as it was, with
// the output's first element and first slack byte written.
func after(in *spec.Instance) map[string][]byte {
	m := map[string][]byte{}
	for _, b := range in.Buffers {
		if b.Role != spec.Threadgroup {
			m[b.Name] = bytes.Clone(b.Data)
		}
	}
	o := m["out/../x"]
	copy(o, []byte{7, 0, 0, 0})
	o[len(o)-6] = 0x11
	return m
}

func readIndex(t *testing.T, dir string) DumpIndex {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ix DumpIndex
	if err := json.Unmarshal(data, &ix); err != nil {
		t.Fatal(err)
	}
	return ix
}

func readNpy(t *testing.T, path string) (npy.Header, []byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, data, err := npy.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return h, data
}

func TestDumper(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dump")
	ins := dumpInstances(t)
	d, err := NewDumper(dir, DumpIndex{Spec: "k.yaml", Source: "k.metal", Backend: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range ins {
		var runErr error
		runs := []DumpRun{{Label: "after", Bytes: after(in)}}
		if i == 1 {
			runErr, runs = fmt.Errorf("stage k: crash: boom"), nil
		}
		if err := d.Case(in, runs, runErr); err != nil {
			t.Fatal(err)
		}
		if ix := readIndex(t, dir); len(ix.Cases) != i+1 || ix.Complete {
			t.Fatalf("after case %d the index has %d cases, complete %v", i, len(ix.Cases), ix.Complete)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	ix := readIndex(t, dir)
	if ix.Format != DumpFormat || !ix.Complete || len(ix.Cases) != 2 {
		t.Fatalf("index = %+v", ix)
	}
	c := ix.Cases[0]
	if c.Case != "quick/N=4" || c.Vars["N"] != 4.0 || c.Dir != "cases/001-quick-N=4" || c.Error != "" {
		t.Errorf("case 0 = %+v", c)
	}
	if s := c.Stages[0]; s.Entry != "k" || s.Threads != [3]int{4, 1, 1} || strings.Join(s.Bindings, ",") != "buffer(0) q,buffer(1) v3,buffer(2) bf,buffer(3) p,buffer(4) out/../x,threadgroup(0) scratch" {
		t.Errorf("stage = %+v", s)
	}
	if c2 := ix.Cases[1]; c2.Dir != "cases/002-quick-odd_name_.." || c2.Error != "stage k: crash: boom" || c2.Buffers[0].Files["after"] != "" {
		t.Errorf("case 1 = %+v", c2)
	}
	want := map[string]struct {
		dtype, shape, note string
	}{
		"q":        {"<f2", "[4 2]", ""},
		"v3":       {"<f4", "[4 4]", "float3 is stored as 4 lanes; the last is padding"},
		"bf":       {"<u2", "[4]", "bfloat16 as its raw uint16 bits"},
		"p":        {"|u1", "[1 12]", "struct P as its 12 raw bytes per element"},
		"out/../x": {"<i4", "[4]", ""},
		"scratch":  {"", "[]", ""},
	}
	in := ins[0]
	for _, b := range c.Buffers {
		w := want[b.Name]
		if b.Dtype != w.dtype || fmt.Sprint(b.Shape) != w.shape || !strings.HasPrefix(b.Note, w.note) {
			t.Errorf("%s: dtype %s shape %v note %q; want %s %s %q", b.Name, b.Dtype, b.Shape, b.Note, w.dtype, w.shape, w.note)
		}
		sb := in.Buffer(b.Name)
		if b.Role == "threadgroup" {
			if b.Files != nil || b.Bytes != 32 {
				t.Errorf("threadgroup buffer dumped: %+v", b)
			}
			continue
		}
		for label, rel := range b.Files {
			if !filepath.IsLocal(rel) || !strings.HasPrefix(rel, c.Dir+"/") {
				t.Fatalf("%s: file %s outside the case directory", b.Name, rel)
			}
			h, data := readNpy(t, filepath.Join(dir, rel))
			if h.Descr != b.Dtype || fmt.Sprint(h.Shape) != fmt.Sprint(b.Shape) {
				t.Errorf("%s %s: header %+v", b.Name, label, h)
			}
			wantData := sb.Elems(sb.Data)
			if label == "after" {
				wantData = sb.Elems(after(in)[b.Name])
			}
			if !bytes.Equal(data, wantData) {
				t.Errorf("%s %s: data % x, want % x", b.Name, label, data, wantData)
			}
		}
		changed := strings.Join(b.Changed, ",")
		if (b.Name == "out/../x") != (changed == "after") {
			t.Errorf("%s: changed %q", b.Name, changed)
		}
	}
	if dt := fmt.Sprint(c.Buffers[3].NumpyDtype); dt != "map[formats:[<u4 (2,)<f4] itemsize:12 names:[n s] offsets:[0 4]]" {
		t.Errorf("struct numpy dtype %s", dt)
	}
	out := c.Buffers[4]
	if out.Files["before"] != "cases/001-quick-N=4/out_.._x.before.npy" || out.Slack != 6 {
		t.Errorf("out files %v slack %d", out.Files, out.Slack)
	}
	if h, data := readNpy(t, filepath.Join(dir, out.SlackFiles["after"])); h.Descr != "|u1" || !bytes.Equal(data, []byte{0x11, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5}) {
		t.Errorf("slack after: %+v % x", h, data)
	}

	// numpy reads the files as the index says.
	if py := numpyPython(); py != "" {
		script := `import sys, json, numpy
ix = json.load(open(sys.argv[1] + "/index.json"))
b = {b["name"]: b for b in ix["cases"][0]["buffers"]}
v = numpy.load(sys.argv[1] + "/" + b["v3"]["files"]["before"])
print(v.shape, v[:, :3].tolist())
o = numpy.load(sys.argv[1] + "/" + b["out/../x"]["files"]["after"])
print(o.dtype, o[0])
bf = numpy.load(sys.argv[1] + "/" + b["bf"]["files"]["before"])
print((bf.astype('<u4') << 16).view('<f4').tolist())
p = numpy.load(sys.argv[1] + "/" + b["p"]["files"]["before"]).view(numpy.dtype(b["p"]["numpy_dtype"]))
print(p.shape, p["n"].tolist(), p["s"].tolist())
`
		got, err := exec.Command(py, "-c", script, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("numpy: %v\n%s", err, got)
		}
		if want := "(4, 4) [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]\nint32 7\n[1.5, 1.5, 1.5, 1.5]\n(1, 1) [[4]] [[[0.5, 2.0]]]\n"; string(got) != want {
			t.Errorf("numpy read\n%s\nwant\n%s", got, want)
		}
	} else {
		t.Log("no python3 with numpy here; numpy's reading of the dump is not checked")
	}
}

// numpyPython returns a python3 that can import numpy, or "".
func numpyPython() string {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			return p
		}
	}
	return ""
}

func TestDumperDirectories(t *testing.T) {
	in := dumpInstances(t)[0]
	info := DumpIndex{Spec: "k.yaml"}

	t.Run("refuses a directory of other files", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		if _, err := NewDumper(dir, info); err == nil || !strings.Contains(err.Error(), "is not empty and holds no metalab dump") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("refuses another program's index.json", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"name": "site"}`), 0o644)
		if _, err := NewDumper(dir, info); err == nil || !strings.Contains(err.Error(), "is not a metalab dump index") {
			t.Errorf("error = %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "index.json")); string(b) != `{"name": "site"}` {
			t.Error("foreign index.json changed")
		}
	})
	t.Run("refuses a file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "f")
		os.WriteFile(p, nil, 0o644)
		if _, err := NewDumper(p, info); err == nil || !strings.Contains(err.Error(), "is not a directory") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("replaces a previous dump and keeps other files", func(t *testing.T) {
		dir := t.TempDir()
		if err := Dump(dir, info, in, []DumpRun{{Label: "after", Bytes: after(in)}}); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		os.WriteFile(filepath.Join(dir, "cases", "001-quick-N=4", "plot.png"), []byte("mine"), 0o644)
		if err := Dump(dir, info, in, nil); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"notes.txt", "cases/001-quick-N=4/plot.png"} {
			if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != "mine" {
				t.Errorf("%s: %q, %v", p, b, err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "cases", "001-quick-N=4", "q.after.npy")); err == nil {
			t.Error("a file of the previous dump survived")
		}
		if _, err := os.Stat(filepath.Join(dir, "cases", "001-quick-N=4", "q.before.npy")); err != nil {
			t.Error(err)
		}
	})
	t.Run("never overwrites a file it did not write", func(t *testing.T) {
		dir := t.TempDir()
		if err := Dump(dir, info, in, nil); err != nil {
			t.Fatal(err)
		}
		// A file the previous dump does not list sits where the next
		// dump writes.
		stray := filepath.Join(dir, "cases", "001-quick-N=4", "q.after.npy")
		os.WriteFile(stray, []byte("mine"), 0o644)
		err := Dump(dir, info, in, []DumpRun{{Label: "after", Bytes: after(in)}})
		if err == nil || !strings.Contains(err.Error(), "is not part of a previous dump; not overwriting it") {
			t.Errorf("error = %v", err)
		}
		if b, _ := os.ReadFile(stray); string(b) != "mine" {
			t.Error("stray file overwritten")
		}
	})
	t.Run("refuses an index that points outside", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"format": "`+DumpFormat+`", "cases": [{"buffers": [{"files": {"before": "../victim"}}]}]}`), 0o644)
		if _, err := NewDumper(dir, info); err == nil || !strings.Contains(err.Error(), "outside the dump") {
			t.Errorf("error = %v", err)
		}
	})
}
