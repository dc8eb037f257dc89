//go:build !unix

package runner

import (
	"os"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return nil }

func cpuLimited(*os.ProcessState) bool   { return false }
func sigsysKilled(*os.ProcessState) bool { return false }
