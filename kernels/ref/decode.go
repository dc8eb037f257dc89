package ref

import (
	"encoding/binary"
	"math"

	"metalab/internal/f16"
)

// Halves decodes little-endian fp16 values.
func Halves(b []byte) []float64 {
	out := make([]float64, len(b)/2)
	for i := range out {
		out[i] = f16.ToFloat64(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return out
}

// Floats decodes little-endian fp32 values.
func Floats(b []byte) []float64 {
	out := make([]float64, len(b)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return out
}

// Int8s decodes signed bytes.
func Int8s(b []byte) []float64 {
	out := make([]float64, len(b))
	for i, v := range b {
		out[i] = float64(int8(v))
	}
	return out
}

// Int32s decodes little-endian int32 values.
func Int32s(b []byte) []int {
	out := make([]int, len(b)/4)
	for i := range out {
		out[i] = int(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return out
}

// u is the unit roundoff of float32.
const u = 0x1p-24

// halfRel is the relative rounding error of a conversion to fp16 (half an
// ulp of an 11-bit significand); halfTiny bounds it for subnormal results.
const (
	halfRel  = 0x1p-11
	halfTiny = 0x1p-25
)
