//go:build !unix

package main

import "os/exec"

// detach does nothing where there are no process groups.
func detach(*exec.Cmd) {}
