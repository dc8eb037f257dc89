// Package fake is a backend for tests: "compiling" a source reads marker
// comments from it and each marker is an operation implemented in Go, so
// the check pipeline can be tested deterministically without a compiler.
//
// A marker is a line comment
//
//	// fake: OP ARGS...
//	// fake[ENTRY]: OP ARGS...
//
// where the second form applies only when compiling entry ENTRY. Operations
// run in source order on every dispatch. Buffers are named by their index.
//
//	copy SRC DST          copy buffer SRC's bytes into DST (up to the shorter length)
//	poke BUF OFF BYTE     set byte OFF of BUF to BYTE (0x.. or decimal)
//	fill BUF BYTE         set every byte of BUF
//	add SRC DST           DST[i] += SRC[i] bytewise (stages build on each other)
//	nondeterministic BUF  write the backend's run counter into BUF's first byte
//	order BUF             write a byte derived from the dispatch's thread order
//	tgmem N               the program allocates N bytes of threadgroup memory
//	time DUR              each dispatch takes DUR (a Go duration, "2ms") by the
//	                      fake clock: it is reported, not waited for
//	time-if BUF OFF BYTE DUR
//	                      a dispatch takes DUR more when byte OFF of BUF is BYTE
//	                      as the dispatch starts (timings that differ by case)
//	sleep DUR             each dispatch really sleeps DUR (stopping early when
//	                      the context is done) and is reported as taking it
//	compile-error MSG...  compiling fails with MSG
//	crash | timeout | bad-access | deadlock
//	                      running fails with that kind
//
// A dispatch's time (backend.Result.Times, and Total, their sum) is the
// sum of its time, time-if and sleep markers, so a test can plant the
// timings a measurement should see; without them it is zero. Info's
// clock is "host", as for the cpu backend.
//
// Programs name their object by their operations (backend.ObjectProgram).
//
// An unknown operation is a compile error.
package fake

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"metalab/backend"
)

// Backend is the fake backend. The zero value is ready to use.
type Backend struct {
	mu       sync.Mutex
	compiles int
	runs     int // dispatches of every program, for "nondeterministic"
}

// New returns a fake backend.
func New() *Backend { return &Backend{} }

// MetalSources reports false: the fake backend's sources are marker
// scripts, so a spec's kernel interface is not checked against them.
func (b *Backend) MetalSources() bool { return false }

// Info describes the fake backend: no device, no clock, orders honoured.
func (b *Backend) Info(context.Context) backend.Info {
	return backend.Info{Name: "fake", Device: "none (marker scripts)", Clock: "host", Orders: true, Check: true, Timing: "fake clock: timings planted by markers, not measured"}
}

// Name returns "fake".
func (b *Backend) Name() string { return "fake" }

// Available reports that the fake backend always runs.
func (b *Backend) Available(context.Context) (bool, string) { return true, "" }

// Compiles returns how many times Compile was called.
func (b *Backend) Compiles() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.compiles
}

type op struct {
	line int
	name string
	args []string
}

// Compile reads src's markers for src.Entry.
func (b *Backend) Compile(ctx context.Context, src backend.Source) (backend.Program, error) {
	b.mu.Lock()
	b.compiles++
	b.mu.Unlock()
	p := &program{b: b}
	sc := bufio.NewScanner(bytes.NewReader(src.Text))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		i := strings.Index(text, "// fake")
		if i < 0 {
			continue
		}
		rest := text[i+len("// fake"):]
		if strings.HasPrefix(rest, "[") {
			j := strings.Index(rest, "]")
			if j < 0 {
				return nil, compileErr(src, line, "unterminated [entry]")
			}
			if rest[1:j] != src.Entry {
				continue
			}
			rest = rest[j+1:]
		}
		rest, ok := strings.CutPrefix(rest, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return nil, compileErr(src, line, "empty marker")
		}
		o := op{line: line, name: f[0], args: f[1:]}
		want, known := arity[o.name]
		switch {
		case !known:
			return nil, compileErr(src, line, fmt.Sprintf("unknown fake operation %q", o.name))
		case o.name == "compile-error":
			return nil, compileErr(src, line, strings.Join(o.args, " "))
		case want >= 0 && len(o.args) != want:
			return nil, compileErr(src, line, fmt.Sprintf("%s wants %d arguments, got %d", o.name, want, len(o.args)))
		case o.name == "time" || o.name == "sleep" || o.name == "time-if":
			if _, err := time.ParseDuration(o.args[len(o.args)-1]); err != nil {
				return nil, compileErr(src, line, o.name+": "+err.Error())
			}
		case o.name == "tgmem":
			n, err := strconv.Atoi(o.args[0])
			if err != nil {
				return nil, compileErr(src, line, "tgmem: "+err.Error())
			}
			p.tgmem = n
			continue
		}
		p.ops = append(p.ops, o)
	}
	p.name = src.Name
	return p, nil
}

// arity is each operation's argument count; -1 means any.
var arity = map[string]int{
	"copy": 2, "poke": 3, "fill": 2, "add": 2, "nondeterministic": 1, "order": 1,
	"tgmem": 1, "time": 1, "time-if": 4, "sleep": 1, "compile-error": -1, "crash": 0, "timeout": 0, "bad-access": 0, "deadlock": 0,
}

func compileErr(src backend.Source, line int, msg string) error {
	return &backend.Failure{Kind: backend.CompileError, Msg: fmt.Sprintf("%s:%d: %s", src.Name, line, msg),
		Log: fmt.Sprintf("%s:%d: error: %s\n", src.Name, line, msg)}
}

type program struct {
	name  string
	ops   []op
	tgmem int
	b     *Backend
}

// ObjectKey names the program by what it does: its operations and their
// arguments, in order, and its threadgroup memory (backend.ObjectProgram).
// Sources that differ elsewhere (other entries' markers, plain text)
// give one object, as a translation pruned per entry does.
func (p *program) ObjectKey() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tgmem=%d", p.tgmem)
	for _, o := range p.ops {
		b.WriteString(";" + o.name)
		for _, a := range o.args {
			b.WriteString(" " + a)
		}
	}
	return b.String()
}

func (p *program) ThreadgroupMemory() int        { return p.tgmem }
func (p *program) MaxThreadsPerThreadgroup() int { return 1024 }
func (p *program) Close() error                  { return nil }

// Run applies the program's operations to copies of the buffers, d.Repeat
// times.
func (p *program) Run(ctx context.Context, d backend.Dispatch) (*backend.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bufs := map[int][]byte{}
	for _, b := range d.Buffers {
		if !b.Threadgroup {
			bufs[b.Index] = bytes.Clone(b.Data)
		}
	}
	repeat := max(d.Repeat, 1)
	res := &backend.Result{Outputs: bufs}
	for range repeat {
		p.b.mu.Lock()
		p.b.runs++
		run := p.b.runs
		p.b.mu.Unlock()
		var took time.Duration
		for _, o := range p.ops {
			d, err := o.elapsed(ctx, bufs)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", p.name, o.line, err)
			}
			took += d
		}
		for _, o := range p.ops {
			if err := o.apply(bufs, d, run); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", p.name, o.line, err)
			}
		}
		res.Times = append(res.Times, took)
		res.Total += took
	}
	return res, nil
}

// elapsed returns the time a timing marker adds to a dispatch, sleeping
// for sleep markers; other operations take no time.
func (o op) elapsed(ctx context.Context, bufs map[int][]byte) (time.Duration, error) {
	switch o.name {
	case "time", "sleep", "time-if":
	default:
		return 0, nil
	}
	d, _ := time.ParseDuration(o.args[len(o.args)-1]) // checked by Compile
	switch o.name {
	case "sleep":
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-t.C:
		}
	case "time-if":
		i, err := strconv.Atoi(o.args[0])
		if err != nil {
			return 0, err
		}
		off, err := strconv.ParseInt(o.args[1], 0, 64)
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseInt(o.args[2], 0, 64)
		if err != nil {
			return 0, err
		}
		b, ok := bufs[i]
		if !ok || off < 0 || int(off) >= len(b) {
			return 0, &backend.Failure{Kind: backend.BadAccess, Msg: fmt.Sprintf("time-if: no byte %d in buffer %d", off, i)}
		}
		if b[off] != byte(v) {
			return 0, nil
		}
	}
	return d, nil
}

func (o op) apply(bufs map[int][]byte, d backend.Dispatch, run int) error {
	buf := func(s string) ([]byte, error) {
		i, err := strconv.Atoi(s)
		if err != nil {
			return nil, err
		}
		b, ok := bufs[i]
		if !ok {
			return nil, &backend.Failure{Kind: backend.BadAccess, Msg: fmt.Sprintf("%s: no buffer at index %d", o.name, i)}
		}
		return b, nil
	}
	num := func(s string) (int, error) {
		n, err := strconv.ParseInt(s, 0, 64)
		return int(n), err
	}
	switch o.name {
	case "crash":
		return &backend.Failure{Kind: backend.Crash, Msg: "fake crash", Log: "signal: segmentation fault\n"}
	case "timeout":
		return &backend.Failure{Kind: backend.Timeout, Msg: "fake timeout"}
	case "bad-access":
		return &backend.Failure{Kind: backend.BadAccess, Msg: "fake out-of-bounds read"}
	case "deadlock":
		return &backend.Failure{Kind: backend.Deadlock, Msg: "fake barrier deadlock"}
	case "copy", "add":
		src, err := buf(o.args[0])
		if err != nil {
			return err
		}
		dst, err := buf(o.args[1])
		if err != nil {
			return err
		}
		if o.name == "copy" {
			copy(dst, src)
			return nil
		}
		for i := range min(len(src), len(dst)) {
			dst[i] += src[i]
		}
	case "poke":
		dst, err := buf(o.args[0])
		if err != nil {
			return err
		}
		off, err := num(o.args[1])
		if err != nil {
			return err
		}
		v, err := num(o.args[2])
		if err != nil {
			return err
		}
		if off < 0 || off >= len(dst) {
			return &backend.Failure{Kind: backend.BadAccess, Msg: fmt.Sprintf("poke: offset %d outside %d bytes", off, len(dst))}
		}
		dst[off] = byte(v)
	case "fill":
		dst, err := buf(o.args[0])
		if err != nil {
			return err
		}
		v, err := num(o.args[1])
		if err != nil {
			return err
		}
		for i := range dst {
			dst[i] = byte(v)
		}
	case "nondeterministic", "order":
		dst, err := buf(o.args[0])
		if err != nil {
			return err
		}
		if len(dst) == 0 {
			return nil
		}
		if o.name == "nondeterministic" {
			dst[0] = byte(run)
			return nil
		}
		switch d.Order.Kind {
		case "", "in-order":
			dst[0] = 0
		case "reversed":
			dst[0] = 1
		default:
			dst[0] = byte(2 + d.Order.Seed)
		}
	}
	return nil
}
