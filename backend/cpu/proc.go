package cpu

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
	exited chan struct{} // closed once the process has been waited for
	dead   bool          // an I/O error happened; the proc must not be reused

	timedOut  atomic.Bool
	cancelled atomic.Bool
}

// startProc starts the runner binary at path, under the command wrap if
// it is not empty.
func startProc(wrap []string, path string, workers int) (*proc, error) {
	args := append(append([]string{}, wrap...), path)
	if workers > 0 {
		args = append(args, "-workers", strconv.Itoa(workers))
	}
	cmd := exec.Command(args[0], args[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start runner: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start runner: %w", err)
	}
	p := &proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16), stderr: &tailBuffer{max: 64 << 10}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start runner: %w", err)
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

// close ends the process and waits for it.
func (p *proc) close() {
	_ = p.in.Close()
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
		p.kill()
		<-p.exited
	}
}

// call sends one request and returns the reply. timeout (0: none) bounds
// the whole exchange: past it the runner is killed and the result is a
// Timeout failure. A runner that dies yields a Crash or BadAccess failure; an
// ERR reply for a kernel fault yields Deadlock or BadAccess; other ERR
// replies are plain errors.
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

	var hdr [5]byte
	binary.LittleEndian.PutUint32(hdr[:], uint32(len(payload)))
	hdr[4] = typ
	if _, err := p.in.Write(hdr[:]); err != nil {
		return nil, p.died(ctx, timeout, err)
	}
	if len(payload) > 0 {
		if _, err := p.in.Write(payload); err != nil {
			return nil, p.died(ctx, timeout, err)
		}
	}
	var rh [5]byte
	if _, err := io.ReadFull(p.out, rh[:]); err != nil {
		return nil, p.died(ctx, timeout, err)
	}
	body := make([]byte, binary.LittleEndian.Uint32(rh[:4]))
	if _, err := io.ReadFull(p.out, body); err != nil {
		return nil, p.died(ctx, timeout, err)
	}
	switch rh[4] {
	case msgOK:
		return body, nil
	case msgErr:
		d := decoder{b: body}
		kind := d.u8()
		msg := d.str()
		if d.err != nil {
			return nil, fmt.Errorf("runner: %w", d.err)
		}
		switch kind {
		case errDeadlock:
			return nil, &backend.Failure{Kind: backend.Deadlock, Msg: msg, Log: p.stderr.String()}
		case errBadAccess:
			return nil, &backend.Failure{Kind: backend.BadAccess, Msg: msg, Log: p.stderr.String()}
		}
		return nil, fmt.Errorf("runner: %s", msg)
	}
	p.dead = true
	p.kill()
	return nil, fmt.Errorf("runner: unknown reply type %d", rh[4])
}

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
	case exitProtocol:
		return fmt.Errorf("runner protocol error: %s: %w", reportLine(log, "runner:", "unknown"), ioErr)
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
