//go:build unix

// Command adb is the stand-in Android device of tokenpulse's tests: a
// program named adb, put first on PATH, that answers the adb subcommands
// tokenpulse uses from a scripted device (see package adbstub).
package main

import (
	"os"

	"github.com/tokenpulse/tokenpulse/internal/adbstub"
)

func main() { os.Exit(adbstub.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
