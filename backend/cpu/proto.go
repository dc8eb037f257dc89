package cpu

import (
	"encoding/binary"
	"fmt"

	"metalab/backend"
)

// Message types and codes of the runner protocol; they mirror
// runtime/protocol.h.
const (
	requestMagic = 0x51544c4d
	replyMagic   = 0x52544c4d

	msgOK       = 0
	msgErr      = 1
	msgLoad     = 2
	msgBuffer   = 3
	msgDispatch = 4
	msgRead     = 5
	msgReset    = 6
	msgHello    = 7

	errOther     = 0
	errDeadlock  = 1
	errBadAccess = 2
	errUsage     = 3

	bufDevice      = 0
	bufThreadgroup = 1

	loadChecking = 1

	exitBadAccess = 70
	exitCrash     = 71
	exitProtocol  = 72
	exitSandbox   = 73
)

// orderCodes maps backend.Order kinds to the protocol's order byte.
var orderCodes = map[string]uint8{
	"": 0, "in-order": 0, "reversed": 1, "shuffle": 2, "simd-ahead": 3, "simd-reversed": 4, "simd-shuffle": 5,
}

// findingKinds and spaces map the protocol's codes.
var (
	findingKinds = map[uint8]backend.FindingKind{
		1: backend.FindRace, 2: backend.FindUninit, 3: backend.FindBounds, 4: backend.FindLockstep, 5: backend.FindDivergent,
	}
	spaces = map[uint8]string{1: "device", 2: "threadgroup", 3: "threadgroup-host", 4: "thread", 5: ""}
)

// An encoder builds one request payload.
type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) str(s string) {
	e.u32(uint32(len(s)))
	e.b = append(e.b, s...)
}

// A decoder reads one reply payload; the first short read sets err.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.err = fmt.Errorf("short reply from runner")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8() uint8 {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if v := d.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

func (d *decoder) str() string {
	n := d.u32()
	return string(d.take(int(n)))
}

func (d *decoder) i32() int32 { return int32(d.u32()) }
func (d *decoder) i64() int64 { return int64(d.u64()) }

// rawAccess is one access of a finding as the runner reports it.
type rawAccess struct {
	valid, write, atomic bool
	group                [3]uint32
	thread               uint32
	pc                   uint64
	line, col            uint32
	file                 string
}

// rawFinding is a finding as the runner reports it, before its pcs are
// turned into source positions.
type rawFinding struct {
	kind, space uint8
	fatal       bool
	buffer      int32
	name        string
	offset      int64
	size, count uint32
	a, b        rawAccess
	note        string
}

func (d *decoder) access() rawAccess {
	var a rawAccess
	a.valid = d.u8() != 0
	a.write = d.u8() != 0
	a.atomic = d.u8() != 0
	d.u8()
	for i := range a.group {
		a.group[i] = d.u32()
	}
	a.thread = d.u32()
	a.pc = d.u64()
	a.line = d.u32()
	a.col = d.u32()
	a.file = d.str()
	return a
}

// findings decodes a findings list (u32 count, then findings); an empty
// remainder is an empty list.
func (d *decoder) findings() []rawFinding {
	if d.err != nil || len(d.b) == 0 {
		return nil
	}
	n := d.u32()
	if n > 1<<16 {
		d.err = fmt.Errorf("runner reported %d findings", n)
		return nil
	}
	out := make([]rawFinding, 0, n)
	for i := uint32(0); i < n && d.err == nil; i++ {
		var f rawFinding
		f.kind = d.u8()
		f.space = d.u8()
		f.fatal = d.u8() != 0
		d.u8()
		f.buffer = d.i32()
		f.name = d.str()
		f.offset = d.i64()
		f.size = d.u32()
		f.count = d.u32()
		f.a = d.access()
		f.b = d.access()
		f.note = d.str()
		out = append(out, f)
	}
	return out
}
