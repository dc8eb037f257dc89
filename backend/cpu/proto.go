package cpu

import (
	"encoding/binary"
	"fmt"
)

// Message types and codes of the runner protocol; they mirror
// runtime/protocol.h.
const (
	msgOK       = 0
	msgErr      = 1
	msgLoad     = 2
	msgBuffer   = 3
	msgDispatch = 4
	msgRead     = 5
	msgReset    = 6

	errOther     = 0
	errDeadlock  = 1
	errBadAccess = 2
	errUsage     = 3

	orderInOrder  = 0
	orderReversed = 1
	orderShuffle  = 2

	bufDevice      = 0
	bufThreadgroup = 1

	exitBadAccess = 70
	exitCrash     = 71
	exitProtocol  = 72
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
