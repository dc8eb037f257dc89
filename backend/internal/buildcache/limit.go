package buildcache

import (
	"context"
	"os/exec"
	"sync/atomic"
	"time"
)

// DefaultCompileTimeout bounds one compiler run when a backend's compile
// time limit is 0.
const DefaultCompileTimeout = 120 * time.Second

// A CompileLimit is a backend's compile time limit: the one Set last (a
// command's --compile-timeout), else its options' (Value's argument), else
// DefaultCompileTimeout. It is safe for concurrent use.
type CompileLimit struct{ set atomic.Int64 }

// Set sets the limit; 0 restores the options' limit or the default.
func (l *CompileLimit) Set(d time.Duration) { l.set.Store(int64(d)) }

// Value returns the limit in force, given the backend options' limit opt.
func (l *CompileLimit) Value(opt time.Duration) time.Duration {
	if d := time.Duration(l.set.Load()); d > 0 {
		return d
	}
	if opt > 0 {
		return opt
	}
	return DefaultCompileTimeout
}

// RunLimited runs cmd (made with exec.Command, not CommandContext) in a
// process group of its own and waits for it. When ctx ends or timeout (0:
// none) passes first, the whole group is killed — the compiler driver and
// the compilers it started — and timedOut says whether the timeout did it.
func RunLimited(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) (timedOut bool, err error) {
	setGroup(cmd)
	// Output pipes a killed group's last process held are closed by then;
	// this is the backstop for one that escaped the group.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
		killGroup(cmd)
		<-done
		return false, ctx.Err()
	case <-expired:
		killGroup(cmd)
		return true, <-done
	}
}
