//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used (user + system), and
// whether the system tells it.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
