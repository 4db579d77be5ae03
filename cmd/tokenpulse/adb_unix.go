//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// detach puts cmd in a process group of its own, so that a Ctrl-C at the
// terminal reaches bench alone: bench then interrupts the run on the
// device itself, rather than adb dying and cutting the run off.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
