//go:build linux

package testredis

import (
	"os/exec"
	"syscall"
)

// DieWithTest has the process cmd starts (a redis-server of a test's own)
// killed when the test process ends, however it ends: a test's Cleanup,
// which stops it otherwise, does not run when go test kills a binary at
// its -timeout, and the server would outlive the run, holding its port.
// Linux sends the signal when the thread that started the process exits;
// the threads that run tests live as long as the process.
func DieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
