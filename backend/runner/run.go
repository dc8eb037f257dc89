package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"metalab/backend"
)

// A Loaded is a LOAD reply: a kernel the runner holds.
type Loaded struct {
	Handle     uint32
	TGMem      int // static threadgroup memory in bytes
	MaxThreads int
	Slots      map[int]Slot // by slot id
	// Resources is what the cuda runner appends: the compiled function's
	// registers, local memory and so on, as text; "" from the cpu runner.
	Resources string
	// StaticShared is the cuda runner's other addition: the compiled
	// function's static shared memory as nvcc laid it out
	// (cudaFuncGetAttributes), where TGMem counts by Metal's rule; -1
	// from the cpu runner.
	StaticShared int
}

// A Slot describes a static threadgroup declaration, for reports.
type Slot struct {
	Name     string
	Offset   int
	Size     int
	ElemSize int
	Extents  []int
}

// Load loads kernel from the shared object so into the runner.
func (p *Proc) Load(ctx context.Context, so, kernel string, flags uint8, timeout time.Duration) (*Loaded, error) {
	var e Encoder
	e.Str(so)
	e.Str(kernel)
	e.U8(flags)
	reply, err := p.Call(ctx, MsgLoad, e.B, timeout)
	if err != nil {
		return nil, err
	}
	d := Decoder{B: reply}
	l := &Loaded{Handle: d.U32(), TGMem: int(d.U64()), MaxThreads: int(d.U32()), Slots: map[int]Slot{}, StaticShared: -1}
	n := int(d.U32())
	for i := 0; i < n && d.Err == nil; i++ {
		id := int(d.I32())
		s := Slot{Offset: int(d.U64()), Size: int(d.U64()), ElemSize: int(d.U64())}
		rank := int(d.U32())
		for k := 0; k < 4; k++ {
			if x := int(d.U64()); k < rank {
				s.Extents = append(s.Extents, x)
			}
		}
		s.Name = d.Str()
		l.Slots[id] = s
	}
	if d.Err == nil && len(d.B) > 0 {
		l.Resources = d.Str()
	}
	if d.Err == nil && len(d.B) > 0 {
		l.StaticShared = int(d.U64())
	}
	if d.Err != nil {
		return nil, d.Err
	}
	return l, nil
}

// A Dispatch is a DISPATCH request.
type Dispatch struct {
	Handle          uint32
	Groups, Threads [3]uint32
	Repeat          uint32
	Order           uint8
	Seed            uint64
}

// A Reply is what a dispatch gave back.
type Reply struct {
	Times    []time.Duration // per dispatch, where the runner timed them one by one
	Total    time.Duration   // all dispatches together: the runner's total, else the sum of Times
	Findings []RawFinding
	Outputs  map[int][]byte // every device buffer, by index
}

// A StepError is a failure of a request around the dispatch: freeing the
// last run's buffers (Step ""), binding a buffer or reading one back.
type StepError struct {
	Step string // "", "bind buffer 3", "read buffer 1"
	Err  error
}

func (e *StepError) Error() string {
	if e.Step == "" {
		return e.Err.Error()
	}
	return e.Step + ": " + e.Err.Error()
}

func (e *StepError) Unwrap() error { return e.Err }

// Execute runs one dispatch: it frees the previous buffers, binds bufs,
// dispatches with timeout bounding the dispatch and reads back every
// device buffer not marked Discard; the other requests are bounded by
// step. An error of the dispatch itself is returned as Call returns it (an
// *Error, a *backend.Failure, ErrProtocol); an error of any other request
// is a *StepError.
func (p *Proc) Execute(ctx context.Context, bufs []backend.Buffer, d Dispatch, timeout, step time.Duration) (*Reply, error) {
	p.ResetLog()
	if _, err := p.Call(ctx, MsgReset, nil, step); err != nil {
		return nil, &StepError{Err: err}
	}
	var devices []int
	for _, buf := range bufs {
		if err := p.bind(ctx, buf, step); err != nil {
			return nil, &StepError{Step: fmt.Sprintf("bind buffer %d", buf.Index), Err: err}
		}
		if !buf.Threadgroup && !buf.Discard {
			devices = append(devices, buf.Index)
		}
	}
	var e Encoder
	e.U32(d.Handle)
	for _, v := range d.Groups {
		e.U32(v)
	}
	for _, v := range d.Threads {
		e.U32(v)
	}
	e.U32(d.Repeat)
	e.U8(d.Order)
	e.U64(d.Seed)
	reply, err := p.Call(ctx, MsgDispatch, e.B, timeout)
	if err != nil {
		return nil, err
	}
	dec := Decoder{B: reply}
	n := int(dec.U32())
	r := &Reply{Outputs: map[int][]byte{}, Times: make([]time.Duration, 0, n)}
	for i := 0; i < n && dec.Err == nil; i++ {
		r.Times = append(r.Times, time.Duration(dec.U64()))
		r.Total += r.Times[i]
	}
	r.Findings = dec.Findings()
	if dec.Err == nil && len(dec.B) >= 8 {
		r.Total = time.Duration(dec.U64())
	}
	if dec.Err != nil {
		return nil, &StepError{Err: dec.Err}
	}
	sort.Ints(devices)
	for _, idx := range devices {
		var e Encoder
		e.U32(uint32(idx))
		out, err := p.Call(ctx, MsgRead, e.B, step)
		if err != nil {
			return nil, &StepError{Step: fmt.Sprintf("read buffer %d", idx), Err: err}
		}
		r.Outputs[idx] = out
	}
	return r, nil
}

// bind sends one BUFFER request. A keyed buffer the runner keeps a copy
// of is restored from it; one it does not is sent with the request to
// keep it (Proc.Keeps); a copy the runner evicted is sent again.
func (p *Proc) bind(ctx context.Context, buf backend.Buffer, step time.Duration) error {
	header := func(kind uint8, size int, source uint8) *Encoder {
		e := &Encoder{}
		e.U32(uint32(buf.Index))
		e.U8(kind)
		e.U64(uint64(size))
		e.U8(source)
		return e
	}
	if buf.Threadgroup {
		_, err := p.Call(ctx, MsgBuffer, header(BufThreadgroup, buf.Size, SourceNone).B, step)
		return err
	}
	keyed := p.Keeps && buf.Key != "" && len(buf.Data) > 0
	if keyed && p.kept[buf.Key] == len(buf.Data) {
		e := header(BufDevice, len(buf.Data), SourceRestore)
		e.Str(buf.Key)
		_, err := p.Call(ctx, MsgBuffer, e.B, step)
		var re *Error
		if !errors.As(err, &re) || re.Kind != ErrNotKept {
			return err
		}
		delete(p.kept, buf.Key)
	}
	source := uint8(SourceData)
	if keyed {
		source = SourceKeep
	}
	e := header(BufDevice, len(buf.Data), source)
	if keyed {
		e.Str(buf.Key)
	}
	e.B = append(e.B, buf.Data...)
	if _, err := p.Call(ctx, MsgBuffer, e.B, step); err != nil {
		return err
	}
	if keyed {
		if p.kept == nil {
			p.kept = map[string]int{}
		}
		p.kept[buf.Key] = len(buf.Data)
	}
	return nil
}

// CheckBuffers reports an error when a buffer index is outside 0..max or a
// device or threadgroup index is bound twice.
func CheckBuffers(kernel string, bufs []backend.Buffer, max int) error {
	seen := map[[2]int]bool{}
	for _, buf := range bufs {
		if buf.Index < 0 || buf.Index > max {
			return fmt.Errorf("run %s: buffer index %d outside 0..%d", kernel, buf.Index, max)
		}
		k := [2]int{buf.Index, 0}
		if buf.Threadgroup {
			k[1] = 1
		}
		if seen[k] {
			return fmt.Errorf("run %s: buffer index %d bound twice", kernel, buf.Index)
		}
		seen[k] = true
	}
	return nil
}

// Retry runs attempt, and once more when it broke the protocol (a kernel
// that writes to the reply channel breaks it; attempt is expected to start
// a new runner when the old one is dead). A second violation is the
// kernel's Failure of kind Sandbox, with log() as its log.
func Retry(ctx context.Context, attempt func() (*backend.Result, error), log func() string) (*backend.Result, error) {
	res, err := attempt()
	if err != nil && errors.Is(err, ErrProtocol) && ctx.Err() == nil {
		first := err
		res, err = attempt()
		if err != nil && errors.Is(err, ErrProtocol) {
			return nil, &backend.Failure{Kind: backend.Sandbox,
				Msg: "the kernel broke the runner's protocol twice (it wrote to the reply channel?): " + firstLine(first.Error()),
				Log: log()}
		}
	}
	return res, err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
