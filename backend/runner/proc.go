package runner

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"metalab/backend"
)

// A Proc is one running runner process. Its requests must be serialised
// by the caller; a Proc that dies is discarded (Dead) and the caller starts
// another.
type Proc struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	stderr  *tailBuffer
	exited  chan struct{} // closed once the process has been waited for
	dead    bool          // an I/O error happened; the proc must not be reused
	scratch string        // the runner's private working directory
	seq     uint32        // sequence number of the last request

	// Hello is what the runner said of itself, for the caller to fill in
	// after its HELLO request.
	Hello string
	// HelloReply is the HELLO reply's payload, for a backend whose runner
	// says more of itself (the cuda runner's GPU).
	HelloReply []byte
	// Keeps says the runner keeps copies of keyed buffers (the cuda
	// runner): Execute then binds a buffer with a Key by restoring the
	// runner's copy instead of sending its bytes again.
	Keeps bool
	kept  map[string]int // keys the runner was asked to keep, with their sizes
	// OnClose, when set, runs once Close has seen the process exit (a
	// wrapper's report file removed, say).
	OnClose func()
	closed  sync.Once

	timedOut  atomic.Bool
	cancelled atomic.Bool
	// traffic, when set (by the Pool that started the runner), counts
	// the requests.
	traffic *Traffic
}

// A Config is how a runner is started.
type Config struct {
	Wrap []string // command the runner is started under (an emulator, a sanitizer), or nil
	Path string   // the runner executable
	Args []string // its arguments
	// Env is the runner's environment; nil means an empty one.
	Env []string
}

// Start starts a runner. It runs in its own process group (a Ctrl-C at
// the terminal reaches metalab, which stops it), with c.Env and a private,
// empty working directory.
func Start(c Config) (*Proc, error) {
	args := append(append(append([]string{}, c.Wrap...), c.Path), c.Args...)
	scratch, err := os.MkdirTemp("", "metalab-runner-")
	if err != nil {
		return nil, &backend.EnvError{Op: "start runner", Err: err}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = scratch
	cmd.Env = []string{}
	if c.Env != nil {
		cmd.Env = c.Env
	}
	cmd.SysProcAttr = procAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(scratch)
		return nil, fmt.Errorf("start runner: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(scratch)
		return nil, fmt.Errorf("start runner: %w", err)
	}
	p := &Proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16), stderr: &tailBuffer{max: 64 << 10}, exited: make(chan struct{}), scratch: scratch}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(scratch)
		return nil, &backend.EnvError{Op: "start runner", Err: err}
	}
	// The runner is in its working directory by now: removing it leaves
	// nothing behind in TMPDIR however the runner ends, and nothing can be
	// created in it. A wrapper (compute-sanitizer, an emulator) may need
	// its working directory (compute-sanitizer fails to start without
	// one): its directory goes at Close.
	if len(c.Wrap) == 0 {
		os.Remove(scratch)
	}
	go func() {
		// Wait closes the stdout pipe only after the process exits and
		// stderr has been copied, so the log is complete once exited closes.
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Kill stops the process; it is safe to call more than once.
func (p *Proc) Kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
}

// Close ends the process, waits for it and removes its scratch directory.
func (p *Proc) Close() {
	_ = p.in.Close()
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
		p.Kill()
		<-p.exited
	}
	os.RemoveAll(p.scratch)
	p.closed.Do(func() {
		if p.OnClose != nil {
			p.OnClose()
		}
	})
}

// An Error is an ERR reply: a kernel fault the runner survived (deadlock,
// a bad access seen by the checking mode or the canaries, a launch the GPU
// refused) or a refused request, with the findings of the checking mode.
type Error struct {
	Kind     uint8 // ErrOther, ErrDeadlock, ...
	Msg      string
	Findings []RawFinding
}

func (e *Error) Error() string { return "runner: " + e.Msg }

// ErrProtocol marks a reply that breaks the protocol: the kernel wrote to
// the reply channel, or the runner is broken. The runner is killed; the
// request may be run again on a new one.
var ErrProtocol = errors.New("runner protocol violation")

// Call sends one request and returns the reply. timeout (0: none) bounds
// the whole exchange: past it the runner is killed and the result is a
// Timeout failure. A runner that dies yields a Crash, BadAccess, Timeout or
// Sandbox failure (by its exit status); an ERR reply yields an *Error; a
// reply with a bad magic number or sequence number yields an error
// wrapping ErrProtocol.
func (p *Proc) Call(ctx context.Context, typ byte, payload []byte, timeout time.Duration) ([]byte, error) {
	if p.dead {
		return nil, errors.New("runner is not running")
	}
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() {
			p.timedOut.Store(true)
			p.Kill()
		})
		defer t.Stop()
	}
	stop := context.AfterFunc(ctx, func() {
		p.cancelled.Store(true)
		p.Kill()
	})
	defer stop()

	if p.traffic != nil {
		t0 := time.Now()
		var got int
		defer func() { p.traffic.add(typ, time.Since(t0), len(payload), got) }()
		body, err := p.call(ctx, typ, payload, timeout)
		got = len(body)
		return body, err
	}
	return p.call(ctx, typ, payload, timeout)
}

// call sends one request and reads its reply, under Call's timeout and
// context.
func (p *Proc) call(ctx context.Context, typ byte, payload []byte, timeout time.Duration) ([]byte, error) {
	p.seq++
	var hdr [13]byte
	binary.LittleEndian.PutUint32(hdr[0:], RequestMagic)
	binary.LittleEndian.PutUint32(hdr[4:], p.seq)
	binary.LittleEndian.PutUint32(hdr[8:], uint32(len(payload)))
	hdr[12] = typ
	if _, err := p.in.Write(hdr[:]); err != nil {
		return nil, p.died(ctx, timeout, err)
	}
	if len(payload) > 0 {
		if _, err := p.in.Write(payload); err != nil {
			return nil, p.died(ctx, timeout, err)
		}
	}
	var rh [13]byte
	if _, err := io.ReadFull(p.out, rh[:]); err != nil {
		return nil, p.died(ctx, timeout, err)
	}
	magic, seq, n := binary.LittleEndian.Uint32(rh[0:]), binary.LittleEndian.Uint32(rh[4:]), binary.LittleEndian.Uint32(rh[8:])
	if magic != ReplyMagic || seq != p.seq || n > maxReply || (rh[12] != MsgOK && rh[12] != MsgErr) {
		p.dead = true
		p.Kill()
		return nil, fmt.Errorf("%w: reply header %x", ErrProtocol, rh[:])
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(p.out, body); err != nil {
		return nil, p.died(ctx, timeout, err)
	}
	if rh[12] == MsgOK {
		return body, nil
	}
	d := Decoder{B: body}
	e := &Error{Kind: d.U8(), Msg: d.Str()}
	e.Findings = d.Findings()
	if d.Err != nil {
		p.dead = true
		p.Kill()
		return nil, fmt.Errorf("%w: %v", ErrProtocol, d.Err)
	}
	return nil, e
}

// maxReply bounds a reply's payload: the largest buffer a run can read back.
const maxReply = 1 << 31

// died turns an I/O error with the runner into the failure that explains it.
func (p *Proc) died(ctx context.Context, timeout time.Duration, ioErr error) error {
	p.dead = true
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.Kill()
		<-p.exited
	}
	log := p.stderr.String()
	if p.cancelled.Load() && ctx.Err() != nil {
		return fmt.Errorf("run kernel: %w", ctx.Err())
	}
	if p.timedOut.Load() {
		return &backend.Failure{Kind: backend.Timeout, Msg: fmt.Sprintf("kernel did not finish within %v; runner killed", timeout), Log: log}
	}
	code := -1
	if st := p.cmd.ProcessState; st != nil {
		code = st.ExitCode()
	}
	switch code {
	case ExitBadAccess:
		return &backend.Failure{Kind: backend.BadAccess, Msg: reportLine(log, "bad access:", "bad access"), Log: log}
	case ExitSandbox:
		return &backend.Failure{Kind: backend.Sandbox, Msg: reportLine(log, "sandbox:", "sandbox violation"), Log: log}
	case ExitTimeout:
		return &backend.Failure{Kind: backend.Timeout, Msg: reportLine(log, "timeout:", "the GPU stopped the kernel"), Log: log}
	case ExitCrash:
		if line := reportLine(log, "crash:", ""); forgedAccess(line) {
			return &backend.Failure{Kind: backend.BadAccess, Msg: "bad access: " + strings.TrimPrefix(line, "crash: ") + " (outside every buffer and threadgroup array)", Log: log}
		}
	case ExitProtocol:
		return fmt.Errorf("%w: %s: %v", ErrProtocol, reportLine(log, "runner:", "unknown"), ioErr)
	}
	if sigsysKilled(p.cmd.ProcessState) {
		// A forbidden system call made with SIGSYS blocked (as the C
		// library blocks every signal around clone): the filter's trap
		// could not run its handler, so the kernel ended the process.
		return &backend.Failure{Kind: backend.Sandbox, Msg: "sandbox: the kernel made a forbidden system call with signals blocked (the runner was killed by SIGSYS)", Log: log}
	}
	if cpuLimited(p.cmd.ProcessState) {
		return fmt.Errorf("%w: the runner reached its CPU time limit", ErrProtocol)
	}
	state := "runner died"
	if st := p.cmd.ProcessState; st != nil {
		state = "runner " + st.String()
	}
	return &backend.Failure{Kind: backend.Crash, Msg: reportLine(log, "crash:", state), Log: log}
}

// Dead reports whether the process broke or died: it must not be reused.
func (p *Proc) Dead() bool { return p.dead }

// Log returns the tail of the runner's stderr since the last ResetLog.
func (p *Proc) Log() string { return p.stderr.String() }

// ResetLog forgets what the runner logged so far, so each failure carries
// only the log of its own run.
func (p *Proc) ResetLog() { p.stderr.reset() }

// Pid returns the runner's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// forgedAccess reports whether a runner's crash report is a memory fault
// of kernel code at an address outside the runner's layout (the runner
// reports those inside it as bad accesses itself): a write through a
// forged pointer, to the runner's code or data, is the kernel's bad
// access, not a crash of the runner. A stack overflow stays a crash.
func forgedAccess(line string) bool {
	return (strings.HasPrefix(line, "crash: SIGSEGV at address ") || strings.HasPrefix(line, "crash: SIGBUS at address ")) &&
		strings.Contains(line, " in thread ") && !strings.Contains(line, "stack overflow")
}

// reportLine returns the last line of log starting with prefix, or def.
func reportLine(log, prefix, def string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], prefix) {
			return lines[i]
		}
	}
	return def
}

// A tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// reset forgets what was logged so far.
func (t *tailBuffer) reset() {
	t.mu.Lock()
	t.b = t.b[:0]
	t.mu.Unlock()
}
