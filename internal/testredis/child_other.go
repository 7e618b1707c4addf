//go:build !linux

package testredis

import "os/exec"

// DieWithTest does nothing here: only Linux kills a child when its parent
// ends (see child_linux.go); a test's Cleanup stops the process, unless go
// test kills the binary first.
func DieWithTest(cmd *exec.Cmd) {}
