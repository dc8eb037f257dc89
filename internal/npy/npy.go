// Package npy writes and reads NumPy .npy files (format version 1.0), the
// form metalab dumps buffers in so that a kernel engineer can load them
// with numpy.load.
//
// Only what metalab needs is supported: little-endian or byte-sized
// dtypes in C order, with the array's bytes given as they are in memory.
package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// magic starts every .npy file.
const magic = "\x93NUMPY"

// Dtypes are the dtype descriptors Write accepts, with their item sizes.
var Dtypes = map[string]int{
	"<f2": 2, "<f4": 4, "<f8": 8,
	"|i1": 1, "|u1": 1, "|b1": 1,
	"<i2": 2, "<u2": 2, "<i4": 4, "<u4": 4, "<i8": 8, "<u8": 8,
}

// A Header describes an array: its dtype descriptor (a key of Dtypes) and
// its shape, C order.
type Header struct {
	Descr string
	Shape []int
}

// Len returns the number of elements of h's shape.
func (h Header) Len() int {
	n := 1
	for _, d := range h.Shape {
		n *= d
	}
	return n
}

// header returns h's dictionary text, padded with spaces and a newline so
// that magic, version, length and text together are a multiple of 64
// bytes, as format version 1.0 asks.
func (h Header) header() []byte {
	dims := make([]string, len(h.Shape))
	for i, d := range h.Shape {
		dims[i] = strconv.Itoa(d)
	}
	shape := "(" + strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	shape += ")"
	s := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", h.Descr, shape)
	total := len(magic) + 2 + 2 + len(s) + 1
	pad := (64 - total%64) % 64
	return []byte(s + strings.Repeat(" ", pad) + "\n")
}

// Write writes data, the array's bytes in C order, as an .npy file of
// format version 1.0. The data's length must be the shape's element count
// times the dtype's item size.
func Write(w io.Writer, h Header, data []byte) error {
	size, ok := Dtypes[h.Descr]
	if !ok {
		return fmt.Errorf("npy: unsupported dtype %q", h.Descr)
	}
	for _, d := range h.Shape {
		if d < 0 {
			return fmt.Errorf("npy: negative dimension in shape %v", h.Shape)
		}
	}
	if want := h.Len() * size; len(data) != want {
		return fmt.Errorf("npy: %d bytes of data for shape %v of %s, want %d", len(data), h.Shape, h.Descr, want)
	}
	hdr := h.header()
	if len(hdr) > 0xffff {
		return fmt.Errorf("npy: header of %d bytes is too long for format 1.0", len(hdr))
	}
	var pre [10]byte
	copy(pre[:], magic)
	pre[6], pre[7] = 1, 0
	binary.LittleEndian.PutUint16(pre[8:], uint16(len(hdr)))
	bw := bufio.NewWriter(w)
	bw.Write(pre[:])
	bw.Write(hdr)
	bw.Write(data)
	return bw.Flush()
}

var (
	descrRE = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	orderRE = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	shapeRE = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// Read reads an .npy file that Write could have written (format version
// 1.0 or 2.0, C order, a dtype of Dtypes) and returns its header and data.
func Read(r io.Reader) (Header, []byte, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return Header{}, nil, fmt.Errorf("npy: %w", err)
	}
	if string(pre[:6]) != magic {
		return Header{}, nil, errors.New("npy: not an .npy file")
	}
	var n int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return Header{}, nil, fmt.Errorf("npy: %w", err)
		}
		n = int(binary.LittleEndian.Uint16(b[:]))
	case 2:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return Header{}, nil, fmt.Errorf("npy: %w", err)
		}
		n = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return Header{}, nil, fmt.Errorf("npy: unsupported format version %d.%d", pre[6], pre[7])
	}
	text := make([]byte, n)
	if _, err := io.ReadFull(r, text); err != nil {
		return Header{}, nil, fmt.Errorf("npy: header: %w", err)
	}
	var h Header
	m := descrRE.FindSubmatch(text)
	if m == nil {
		return Header{}, nil, errors.New("npy: header has no descr")
	}
	h.Descr = string(m[1])
	size, ok := Dtypes[h.Descr]
	if !ok {
		return Header{}, nil, fmt.Errorf("npy: unsupported dtype %q", h.Descr)
	}
	if m := orderRE.FindSubmatch(text); m == nil || string(m[1]) != "False" {
		return Header{}, nil, errors.New("npy: not C order")
	}
	m = shapeRE.FindSubmatch(text)
	if m == nil {
		return Header{}, nil, errors.New("npy: header has no shape")
	}
	h.Shape = []int{}
	for _, f := range strings.Split(string(m[1]), ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 {
			return Header{}, nil, fmt.Errorf("npy: bad shape (%s)", m[1])
		}
		h.Shape = append(h.Shape, d)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return Header{}, nil, fmt.Errorf("npy: %w", err)
	}
	if want := h.Len() * size; len(data) != want {
		return Header{}, nil, fmt.Errorf("npy: %d bytes of data, shape %v of %s wants %d", len(data), h.Shape, h.Descr, want)
	}
	if !bytes.HasSuffix(text, []byte("\n")) {
		return Header{}, nil, errors.New("npy: header does not end in a newline")
	}
	return h, data, nil
}
