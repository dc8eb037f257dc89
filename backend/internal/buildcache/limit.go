package buildcache

import (
	"context"
	"os/exec"
	"time"
)

// DefaultCompileTimeout bounds one compiler run when a backend's compile
// time limit is 0.
const DefaultCompileTimeout = 120 * time.Second

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
