package ref

import (
	"encoding/binary"
	"fmt"
	"math"
)

// D is the head dimension of every qsa kernel.
const D = 128

// Group is the number of int8 elements that share one fp16 scale.
const Group = 32

// Chunk is the number of selected cells a qsa attention kernel handles at once.
const Chunk = 64

// PartStride is the number of floats per chunk partial of qsa_attn_part:
// the numerator, the max, the denominator and two zeros.
const PartStride = D + 4

// ParamsSize is the size in bytes of the QsaParams struct.
const ParamsSize = 44

// Params is the QsaParams block shared by the qsa kernels.
type Params struct {
	T, Pos0, H, KVH int
	NSel            int // ids per query row, a multiple of Chunk
	NCells          int // cells in the KV cache
	NPool           int // pooled-key rows and score columns
	NValid          int // pooled keys holding data
	NPos            int // rows of the rotary table
	Scale, Eps      float64
}

// DecodeParams reads a QsaParams block.
func DecodeParams(b []byte) (Params, error) {
	if len(b) < ParamsSize {
		return Params{}, fmt.Errorf("params: %d bytes, want %d", len(b), ParamsSize)
	}
	u := func(i int) int { return int(binary.LittleEndian.Uint32(b[4*i:])) }
	f := func(i int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))) }
	p := Params{
		T: u(0), Pos0: u(1), H: u(2), KVH: u(3), NSel: u(4), NCells: u(5),
		NPool: u(6), NValid: u(7), NPos: u(8), Scale: f(9), Eps: f(10),
	}
	if p.H == 0 || p.KVH == 0 || p.H%p.KVH != 0 {
		return p, fmt.Errorf("params: H=%d is not a positive multiple of KVH=%d", p.H, p.KVH)
	}
	if p.NSel%Chunk != 0 {
		return p, fmt.Errorf("params: nsel=%d is not a multiple of %d", p.NSel, Chunk)
	}
	return p, nil
}

// Encode returns the QsaParams bytes of p.
func (p Params) Encode() []byte {
	b := make([]byte, ParamsSize)
	for i, v := range []int{p.T, p.Pos0, p.H, p.KVH, p.NSel, p.NCells, p.NPool, p.NValid, p.NPos} {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	binary.LittleEndian.PutUint32(b[36:], math.Float32bits(float32(p.Scale)))
	binary.LittleEndian.PutUint32(b[40:], math.Float32bits(float32(p.Eps)))
	return b
}

func (p Params) kvHead(h int) int { return h / (p.H / p.KVH) }

// need reports an error when a buffer is shorter than n bytes.
func need(name string, b []byte, n int) error {
	if len(b) < n {
		return fmt.Errorf("%s: %d bytes, want at least %d", name, len(b), n)
	}
	return nil
}
