//go:build unix

package runner

import (
	"os"
	"syscall"
)

// procAttr puts the runner in a process group of its own, so a Ctrl-C at
// the terminal reaches only metalab, which then stops the runner itself.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// cpuLimited reports whether the runner was killed for reaching its CPU
// time limit (SIGXCPU at the soft limit, SIGKILL past the hard one is not
// told apart from a kill).
func cpuLimited(st *os.ProcessState) bool {
	if st == nil {
		return false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGXCPU
}

// sigsysKilled reports whether the runner was killed by SIGSYS: the
// system-call filter's trap arrived while the signal was blocked.
func sigsysKilled(st *os.ProcessState) bool {
	if st == nil {
		return false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGSYS
}
