package spec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"metalab/internal/f16"
)

// A TypeKind says what an element type is.
type TypeKind int

const (
	Scalar TypeKind = iota
	Vector
	Struct
)

// A Type is a buffer element type with its Metal size and alignment.
type Type struct {
	Name   string
	Kind   TypeKind
	Scalar string  // component scalar name for Scalar and Vector: "half", "int", ...
	Lanes  int     // 1 for scalars, 2..4 for vectors
	Size   int     // bytes, padding included
	Align  int     // bytes
	Fields []Field // Struct only
}

// A Field is one member of a struct type.
type Field struct {
	Name   string
	Type   *Type
	Len    int // array length; 0 for a plain member
	Offset int // bytes from the start of the struct
	value  *fieldValue
}

// scalarSizes maps Metal scalar names to their sizes in bytes.
var scalarSizes = map[string]int{
	"bool": 1, "char": 1, "uchar": 1, "short": 2, "ushort": 2,
	"int": 4, "uint": 4, "long": 8, "ulong": 8,
	"half": 2, "bfloat": 2, "float": 4,
}

// scalarAliases maps alternative spellings to Metal scalar names.
var scalarAliases = map[string]string{
	"int8": "char", "int8_t": "char", "uint8": "uchar", "uint8_t": "uchar",
	"int16": "short", "int16_t": "short", "uint16": "ushort", "uint16_t": "ushort",
	"int32": "int", "int32_t": "int", "uint32": "uint", "uint32_t": "uint",
	"int64": "long", "int64_t": "long", "uint64": "ulong", "uint64_t": "ulong",
	"float16": "half", "float32": "float", "bf16": "bfloat",
}

// LookupType returns the built-in scalar or vector type called name, or
// false. Vectors follow Metal: T3 has the size and alignment of T4;
// packed_Tn has size n*sizeof(T) and the alignment of T.
func LookupType(name string) (*Type, bool) {
	if s, ok := canonScalar(name); ok {
		n := scalarSizes[s]
		return &Type{Name: name, Kind: Scalar, Scalar: s, Lanes: 1, Size: n, Align: n}, true
	}
	base, packed := strings.CutPrefix(name, "packed_")
	if len(base) < 2 {
		return nil, false
	}
	lanes := int(base[len(base)-1] - '0')
	if lanes < 2 || lanes > 4 {
		return nil, false
	}
	s, ok := canonScalar(base[:len(base)-1])
	if !ok || s == "long" || s == "ulong" && packed {
		return nil, false
	}
	n := scalarSizes[s]
	t := &Type{Name: name, Kind: Vector, Scalar: s, Lanes: lanes}
	switch {
	case packed:
		t.Size, t.Align = lanes*n, n
	case lanes == 3:
		t.Size, t.Align = 4*n, 4*n
	default:
		t.Size, t.Align = lanes*n, lanes*n
	}
	return t, true
}

func canonScalar(name string) (string, bool) {
	if a, ok := scalarAliases[name]; ok {
		return a, true
	}
	_, ok := scalarSizes[name]
	return name, ok
}

// layoutStruct computes field offsets, size and alignment with C rules.
func layoutStruct(t *Type) {
	off, align := 0, 1
	for i := range t.Fields {
		f := &t.Fields[i]
		a := f.Type.Align
		off = alignUp(off, a)
		f.Offset = off
		n := max(f.Len, 1)
		off += n * f.Type.Size
		align = max(align, a)
	}
	t.Align = align
	t.Size = alignUp(off, align)
}

func alignUp(n, a int) int {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// isFloat reports whether the scalar s is a floating-point type.
func isFloat(s string) bool { return s == "half" || s == "bfloat" || s == "float" }

// isSigned reports whether the integer scalar s is signed.
func isSigned(s string) bool { return s == "char" || s == "short" || s == "int" || s == "long" }

// putScalar writes v as scalar s at b, rounding to nearest even for
// floats and wrapping for integers.
func putScalar(b []byte, s string, v float64) {
	switch s {
	case "half":
		binary.LittleEndian.PutUint16(b, f16.FromFloat64(v))
	case "bfloat":
		binary.LittleEndian.PutUint16(b, f16.BFloatFromFloat64(v))
	case "float":
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
	case "bool":
		if v != 0 {
			b[0] = 1
		} else {
			b[0] = 0
		}
	default:
		putInt(b, s, int64(v))
	}
}

func putInt(b []byte, s string, v int64) {
	switch scalarSizes[s] {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(b, uint64(v))
	}
}

// getScalar reads scalar s at b as a float64.
func getScalar(b []byte, s string) float64 {
	switch s {
	case "half":
		return f16.ToFloat64(binary.LittleEndian.Uint16(b))
	case "bfloat":
		return f16.BFloatToFloat64(binary.LittleEndian.Uint16(b))
	case "float":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case "bool", "uchar":
		return float64(b[0])
	case "char":
		return float64(int8(b[0]))
	case "short":
		return float64(int16(binary.LittleEndian.Uint16(b)))
	case "ushort":
		return float64(binary.LittleEndian.Uint16(b))
	case "int":
		return float64(int32(binary.LittleEndian.Uint32(b)))
	case "uint":
		return float64(binary.LittleEndian.Uint32(b))
	case "long":
		return float64(int64(binary.LittleEndian.Uint64(b)))
	case "ulong":
		return float64(binary.LittleEndian.Uint64(b))
	}
	return math.NaN()
}

// Decode decodes elements of type t from b into their scalar components,
// in memory order, padding skipped. A trailing partial element is ignored.
func Decode(t *Type, b []byte) []float64 {
	var out []float64
	for len(b) >= t.Size && t.Size > 0 {
		out = appendComponents(out, t, b[:t.Size])
		b = b[t.Size:]
	}
	return out
}

func appendComponents(out []float64, t *Type, b []byte) []float64 {
	switch t.Kind {
	case Struct:
		for _, f := range t.Fields {
			for j := range max(f.Len, 1) {
				o := f.Offset + j*f.Type.Size
				out = appendComponents(out, f.Type, b[o:o+f.Type.Size])
			}
		}
	default:
		n := scalarSizes[t.Scalar]
		for l := range t.Lanes {
			out = append(out, getScalar(b[l*n:], t.Scalar))
		}
	}
	return out
}

// FormatElement formats one element of type t for reports: its decoded
// value and its bytes, e.g. "1.5 (0x3e00)" or "(1, 2) (0x3c00 0x4000)".
func FormatElement(t *Type, b []byte) string {
	if len(b) < t.Size {
		return fmt.Sprintf("<short element: % x>", b)
	}
	var vals, bits []string
	formatInto(t, b[:t.Size], &vals, &bits)
	v := strings.Join(vals, ", ")
	if len(vals) > 1 {
		v = "(" + v + ")"
	}
	return v + " (" + strings.Join(bits, " ") + ")"
}

func formatInto(t *Type, b []byte, vals, bits *[]string) {
	if t.Kind == Struct {
		for _, f := range t.Fields {
			for j := range max(f.Len, 1) {
				o := f.Offset + j*f.Type.Size
				formatInto(f.Type, b[o:o+f.Type.Size], vals, bits)
			}
		}
		return
	}
	n := scalarSizes[t.Scalar]
	for l := range t.Lanes {
		c := b[l*n : (l+1)*n]
		*vals = append(*vals, formatScalar(t.Scalar, c))
		var u uint64
		for i := n - 1; i >= 0; i-- {
			u = u<<8 | uint64(c[i])
		}
		*bits = append(*bits, fmt.Sprintf("0x%0*x", 2*n, u))
	}
}

func formatScalar(s string, b []byte) string {
	v := getScalar(b, s)
	if isFloat(s) {
		if v == 0 && math.Signbit(v) {
			return "-0"
		}
		return strconv.FormatFloat(v, 'g', -1, 32)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
