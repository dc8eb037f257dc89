package runner

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"metalab/backend"
)

// ProtocolHeader is protocol.h, the C++ side of the protocol.
//
//go:embed protocol.h
var ProtocolHeader []byte

// ServeHeader is serve.h, the request loop and replies both runners
// share around protocol.h.
//
//go:embed serve.h
var ServeHeader []byte

// headers are the C++ headers of this package that both runners' builds
// write next to their sources, by name.
var headers = []struct {
	name string
	text []byte
}{{"protocol.h", ProtocolHeader}, {"serve.h", ServeHeader}}

// HashHeaders writes the names and texts of the shared headers into h,
// for a runner's cache key.
func HashHeaders(h io.Writer) {
	for _, f := range headers {
		fmt.Fprintf(h, "%s\x00%d\x00", f.name, len(f.text))
		_, _ = h.Write(f.text)
	}
}

// WriteHeaders writes the shared headers into dir, next to a runner's
// sources.
func WriteHeaders(dir string) error {
	for _, f := range headers {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.text, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Message types and codes of the runner protocol; they mirror protocol.h.
const (
	RequestMagic = 0x51544c4d
	ReplyMagic   = 0x52544c4d

	MsgOK       = 0
	MsgErr      = 1
	MsgLoad     = 2
	MsgBuffer   = 3
	MsgDispatch = 4
	MsgRead     = 5
	MsgReset    = 6
	MsgHello    = 7

	ErrOther     = 0
	ErrDeadlock  = 1
	ErrBadAccess = 2
	ErrUsage     = 3
	ErrLaunch    = 4 // the GPU refused the launch (cuda)
	ErrNotKept   = 5 // no copy kept under a BUFFER restore's key (cuda)

	BufDevice      = 0
	BufThreadgroup = 1

	SourceNone    = 0
	SourceData    = 1
	SourceKeep    = 2 // the bytes, and keep a copy under a key
	SourceRestore = 3 // the copy kept under a key

	LoadChecking = 1

	ExitBadAccess = 70
	ExitCrash     = 71
	ExitProtocol  = 72
	ExitSandbox   = 73
	ExitTimeout   = 74 // the GPU's watchdog stopped the kernel (cuda)
)

// OrderCodes maps backend.Order kinds to the protocol's order byte.
var OrderCodes = map[string]uint8{
	"": 0, "in-order": 0, "reversed": 1, "shuffle": 2, "simd-ahead": 3, "simd-reversed": 4, "simd-shuffle": 5,
}

// FindingKinds and Spaces map the protocol's codes.
var (
	FindingKinds = map[uint8]backend.FindingKind{
		1: backend.FindRace, 2: backend.FindUninit, 3: backend.FindBounds, 4: backend.FindLockstep, 5: backend.FindDivergent,
		6: backend.FindMemNone, 7: backend.FindSameValue,
	}
	Spaces = map[uint8]string{1: "device", 2: "threadgroup", 3: "threadgroup-host", 4: "thread", 5: "", 6: "outside"}
)

// An Encoder builds one request payload.
type Encoder struct{ B []byte }

// U8, U32 and U64 append an integer, little-endian.
func (e *Encoder) U8(v uint8)   { e.B = append(e.B, v) }
func (e *Encoder) U32(v uint32) { e.B = binary.LittleEndian.AppendUint32(e.B, v) }
func (e *Encoder) U64(v uint64) { e.B = binary.LittleEndian.AppendUint64(e.B, v) }

// Str appends a string as its u32 length and bytes.
func (e *Encoder) Str(s string) {
	e.U32(uint32(len(s)))
	e.B = append(e.B, s...)
}

// A Decoder reads one reply payload; the first short read sets Err and
// every later read returns zero.
type Decoder struct {
	B   []byte
	Err error
}

func (d *Decoder) take(n int) []byte {
	if d.Err != nil {
		return nil
	}
	if len(d.B) < n {
		d.Err = fmt.Errorf("short reply from runner")
		return nil
	}
	v := d.B[:n]
	d.B = d.B[n:]
	return v
}

// U8, U32, U64, I32 and I64 read an integer, little-endian.
func (d *Decoder) U8() uint8 {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *Decoder) U32() uint32 {
	if v := d.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (d *Decoder) U64() uint64 {
	if v := d.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

// Str reads a string written as its u32 length and bytes.
func (d *Decoder) Str() string {
	n := d.U32()
	return string(d.take(int(n)))
}

func (d *Decoder) I32() int32 { return int32(d.U32()) }
func (d *Decoder) I64() int64 { return int64(d.U64()) }

// A RawAccess is one access of a finding as the runner reports it.
type RawAccess struct {
	Valid, Write, Atomic bool
	Group                [3]uint32
	Thread               uint32
	PC                   uint64
	Line, Col            uint32
	File                 string
}

// A RawFinding is a finding as the runner reports it, before its pcs are
// turned into source positions.
type RawFinding struct {
	Kind, Space uint8
	Fatal       bool
	Buffer      int32
	Name        string
	Offset      int64
	Size, Count uint32
	A, B        RawAccess
	Note        string
}

func (d *Decoder) access() RawAccess {
	var a RawAccess
	a.Valid = d.U8() != 0
	a.Write = d.U8() != 0
	a.Atomic = d.U8() != 0
	d.U8()
	for i := range a.Group {
		a.Group[i] = d.U32()
	}
	a.Thread = d.U32()
	a.PC = d.U64()
	a.Line = d.U32()
	a.Col = d.U32()
	a.File = d.Str()
	return a
}

// Findings decodes a findings list (u32 count, then findings); an empty
// remainder is an empty list.
func (d *Decoder) Findings() []RawFinding {
	if d.Err != nil || len(d.B) == 0 {
		return nil
	}
	n := d.U32()
	if n > 1<<16 {
		d.Err = fmt.Errorf("runner reported %d findings", n)
		return nil
	}
	out := make([]RawFinding, 0, n)
	for i := uint32(0); i < n && d.Err == nil; i++ {
		var f RawFinding
		f.Kind = d.U8()
		f.Space = d.U8()
		f.Fatal = d.U8() != 0
		d.U8()
		f.Buffer = d.I32()
		f.Name = d.Str()
		f.Offset = d.I64()
		f.Size = d.U32()
		f.Count = d.U32()
		f.A = d.access()
		f.B = d.access()
		f.Note = d.Str()
		out = append(out, f)
	}
	return out
}
