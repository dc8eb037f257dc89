package cpu

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"metalab/backend"
)

// A proc is one running runner process. Requests are serialised by the
// Backend; a proc that dies is discarded and the next request starts another.
type proc struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	stderr  *tailBuffer
	exited  chan struct{} // closed once the process has been waited for
	dead    bool          // an I/O error happened; the proc must not be reused
	scratch string        // the runner's private working directory
	seq     uint32        // sequence number of the last request
	hello   string        // the runner's description of itself

	timedOut  atomic.Bool
	cancelled atomic.Bool
}

// runnerConfig is how a runner is started.
type runnerConfig struct {
	wrap    []string // command the runner is started under (tests), or nil
	path    string
	workers int
	objects string // the directory of compiled kernels, the only one it may read
	memory  int64  // bytes of private memory, 0: no limit
	cpu     int64  // seconds of CPU time, 0: no limit
	sandbox bool
}

// startProc starts a runner. It runs in its own process group (a Ctrl-C at
// the terminal reaches metalab, which stops it), with an empty environment
// and a private, empty working directory, and sandboxes itself (see
// runtime/sandbox.cpp).
func startProc(c runnerConfig) (*proc, error) {
	args := append(append([]string{}, c.wrap...), c.path)
	if c.workers > 0 {
		args = append(args, "-workers", strconv.Itoa(c.workers))
	}
	if c.objects != "" {
		args = append(args, "-objects", c.objects)
	}
	if c.memory > 0 {
		args = append(args, "-memory", strconv.FormatInt(c.memory, 10))
	}
	if c.cpu > 0 {
		args = append(args, "-cpu", strconv.FormatInt(c.cpu, 10))
	}
	if !c.sandbox {
		args = append(args, "-no-sandbox")
	}
	scratch, err := os.MkdirTemp("", "metalab-runner-")
	if err != nil {
		return nil, &backend.EnvError{Op: "start runner", Err: err}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = scratch
	cmd.Env = []string{}
	if len(c.wrap) > 0 {
		cmd.Env = os.Environ() // an emulator may need its environment
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
	p := &proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16), stderr: &tailBuffer{max: 64 << 10}, exited: make(chan struct{}), scratch: scratch}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(scratch)
		return nil, &backend.EnvError{Op: "start runner", Err: err}
	}
	go func() {
		// Wait closes the stdout pipe only after the process exits and
		// stderr has been copied, so the log is complete once exited closes.
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// kill stops the process; it is safe to call more than once.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
}

// close ends the process, waits for it and removes its scratch directory.
func (p *proc) close() {
	_ = p.in.Close()
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
		p.kill()
		<-p.exited
	}
	os.RemoveAll(p.scratch)
}

// A runnerError is an ERR reply: a kernel fault the runner survived
// (deadlock, a bad access seen by the checking mode) or a refused request,
// with the findings of the checking mode.
type runnerError struct {
	kind     uint8
	msg      string
	findings []rawFinding
}

func (e *runnerError) Error() string { return "runner: " + e.msg }

// errProtocol marks a reply that breaks the protocol: the kernel wrote to
// the reply channel, or the runner is broken. The runner is killed; the
// request may be run again on a new one.
var errProtocol = errors.New("runner protocol violation")

// call sends one request and returns the reply. timeout (0: none) bounds
// the whole exchange: past it the runner is killed and the result is a
// Timeout failure. A runner that dies yields a Crash, BadAccess or Sandbox
// failure; an ERR reply yields a *runnerError; a reply with a bad magic
// number or sequence number yields an error wrapping errProtocol.
func (p *proc) call(ctx context.Context, typ byte, payload []byte, timeout time.Duration) ([]byte, error) {
	if p.dead {
		return nil, errors.New("runner is not running")
	}
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() {
			p.timedOut.Store(true)
			p.kill()
		})
		defer t.Stop()
	}
	stop := context.AfterFunc(ctx, func() {
		p.cancelled.Store(true)
		p.kill()
	})
	defer stop()

	p.seq++
	var hdr [13]byte
	binary.LittleEndian.PutUint32(hdr[0:], requestMagic)
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
	if magic != replyMagic || seq != p.seq || n > maxReply || (rh[12] != msgOK && rh[12] != msgErr) {
		p.dead = true
		p.kill()
		return nil, fmt.Errorf("%w: reply header %x", errProtocol, rh[:])
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(p.out, body); err != nil {
		return nil, p.died(ctx, timeout, err)
	}
	if rh[12] == msgOK {
		return body, nil
	}
	d := decoder{b: body}
	e := &runnerError{kind: d.u8(), msg: d.str()}
	e.findings = d.findings()
	if d.err != nil {
		p.dead = true
		p.kill()
		return nil, fmt.Errorf("%w: %v", errProtocol, d.err)
	}
	return nil, e
}

// maxReply bounds a reply's payload: the largest buffer a run can read back.
const maxReply = 1 << 31

// died turns an I/O error with the runner into the failure that explains it.
func (p *proc) died(ctx context.Context, timeout time.Duration, ioErr error) error {
	p.dead = true
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.kill()
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
	case exitBadAccess:
		return &backend.Failure{Kind: backend.BadAccess, Msg: reportLine(log, "bad access:", "bad access"), Log: log}
	case exitSandbox:
		return &backend.Failure{Kind: backend.Sandbox, Msg: reportLine(log, "sandbox:", "sandbox violation"), Log: log}
	case exitProtocol:
		return fmt.Errorf("%w: %s: %v", errProtocol, reportLine(log, "runner:", "unknown"), ioErr)
	}
	if cpuLimited(p.cmd.ProcessState) {
		return fmt.Errorf("%w: the runner reached its CPU time limit", errProtocol)
	}
	state := "runner died"
	if st := p.cmd.ProcessState; st != nil {
		state = "runner " + st.String()
	}
	return &backend.Failure{Kind: backend.Crash, Msg: reportLine(log, "crash:", state), Log: log}
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

// reset forgets what was logged so far, so each failure carries only the
// log of its own run.
func (t *tailBuffer) reset() {
	t.mu.Lock()
	t.b = t.b[:0]
	t.mu.Unlock()
}
