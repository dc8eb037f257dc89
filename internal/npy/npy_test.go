package npy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readStrict is the test's own reader: it checks every byte of the
// preamble and the header text against the format 1.0 layout numpy
// itself writes, independently of Read.
func readStrict(t *testing.T, b []byte) (descr, shape string, data []byte) {
	t.Helper()
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" || b[6] != 1 || b[7] != 0 {
		t.Fatalf("bad preamble % x", b[:min(10, len(b))])
	}
	n := int(b[8]) | int(b[9])<<8
	if (10+n)%64 != 0 {
		t.Errorf("data starts at %d, not 64-byte aligned", 10+n)
	}
	if len(b) < 10+n {
		t.Fatalf("header length %d past the end", n)
	}
	text := string(b[10 : 10+n])
	if !strings.HasSuffix(text, "\n") {
		t.Errorf("header %q does not end in a newline", text)
	}
	body := strings.TrimRight(text, " \n")
	var rest string
	if _, err := fmt.Sscanf(body, "{'descr': '%3s', 'fortran_order': False, 'shape': %s", &descr, &rest); err != nil {
		t.Fatalf("header %q: %v", body, err)
	}
	i := strings.Index(body, "'shape': ")
	shape = strings.TrimSuffix(body[i+len("'shape': "):], ", }")
	return descr, shape, b[10+n:]
}

func TestWrite(t *testing.T) {
	f32 := func(v ...float32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	tests := []struct {
		name      string
		h         Header
		data      []byte
		wantShape string
	}{
		{"vector", Header{"<f4", []int{3}}, f32(1, -2, 0.5), "(3,)"},
		{"matrix", Header{"<f4", []int{2, 2}}, f32(1, 2, 3, 4), "(2, 2)"},
		{"scalar", Header{"<u2", nil}, []byte{1, 2}, "()"},
		{"empty", Header{"|i1", []int{0, 5}}, nil, "(0, 5)"},
		{"bytes", Header{"|u1", []int{2, 3}}, []byte{1, 2, 3, 4, 5, 6}, "(2, 3)"},
		{"int64", Header{"<i8", []int{1}}, make([]byte, 8), "(1,)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tt.h, tt.data); err != nil {
				t.Fatal(err)
			}
			descr, shape, data := readStrict(t, buf.Bytes())
			if descr != tt.h.Descr || shape != tt.wantShape || !bytes.Equal(data, tt.data) {
				t.Errorf("read back %s %s % x; want %s %s % x", descr, shape, data, tt.h.Descr, tt.wantShape, tt.data)
			}
			h, data2, err := Read(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if h.Descr != tt.h.Descr || fmt.Sprint(h.Shape) != fmt.Sprint(append([]int{}, tt.h.Shape...)) || !bytes.Equal(data2, tt.data) {
				t.Errorf("Read = %+v % x", h, data2)
			}
		})
	}
}

// TestWriteBytes pins one file byte for byte: the header numpy writes for
// a float32 vector of two elements.
func TestWriteBytes(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, Header{"<f4", []int{2}}, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}); err != nil {
		t.Fatal(err)
	}
	hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
	want := "\x93NUMPY\x01\x00\x76\x00" + hdr + strings.Repeat(" ", 128-10-len(hdr)-1) + "\n" + "\x00\x00\x80\x3f\x00\x00\x00\x40"
	if buf.String() != want {
		t.Errorf("got  %q\nwant %q", buf.String(), want)
	}
}

func TestWriteErrors(t *testing.T) {
	for _, tt := range []struct {
		h    Header
		data []byte
		want string
	}{
		{Header{"<f3", []int{1}}, []byte{0, 0, 0}, `unsupported dtype "<f3"`},
		{Header{"<f4", []int{2}}, []byte{0, 0, 0, 0}, "4 bytes of data for shape [2] of <f4, want 8"},
		{Header{"<f4", []int{-1}}, nil, "negative dimension"},
	} {
		if err := Write(&bytes.Buffer{}, tt.h, tt.data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Write(%+v) = %v, want %q", tt.h, err, tt.want)
		}
	}
	for _, bad := range []string{"", "\x93NUMPX\x01\x00", "\x93NUMPY\x03\x00\x00\x00"} {
		if _, _, err := Read(strings.NewReader(bad)); err == nil {
			t.Errorf("Read(%q) succeeded", bad)
		}
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

// TestNumpyLoads has numpy load what Write writes and print it back.
func TestNumpyLoads(t *testing.T) {
	py := numpyPython()
	if py == "" {
		t.Skip("no python3 with numpy here (python3 -c 'import numpy' fails), so numpy cannot load the files")
	}
	dir := t.TempDir()
	write := func(name string, h Header, data []byte) string {
		var buf bytes.Buffer
		if err := Write(&buf, h, data); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	half := []byte{0x00, 0x3c, 0x00, 0xc0, 0x00, 0x80, 0x00, 0x7c, 0x00, 0x35, 0xff, 0x7b} // 1 -2 -0 inf 0.3125 65504
	files := []string{
		write("h.npy", Header{"<f2", []int{2, 3}}, half),
		write("i.npy", Header{"<i4", []int{2}}, []byte{0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0}),
		write("c.npy", Header{"|i1", []int{3}}, []byte{0x80, 0x7f, 1}),
		write("u.npy", Header{"<u8", []int{1}}, []byte{1, 0, 0, 0, 0, 0, 0, 0x80}),
		write("e.npy", Header{"<u2", []int{0}}, nil),
	}
	script := `import sys, numpy
for p in sys.argv[1:]:
    a = numpy.load(p)
    print(a.dtype.str, a.shape, a.flatten().tolist())
`
	out, err := exec.Command(py, append([]string{"-c", script}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	want := `<f2 (2, 3) [1.0, -2.0, -0.0, inf, 0.3125, 65504.0]
<i4 (2,) [-1, 7]
|i1 (3,) [-128, 127, 1]
<u8 (1,) [9223372036854775809]
<u2 (0,) []
`
	if string(out) != want {
		t.Errorf("numpy read\n%s\nwant\n%s", out, want)
	}
}
