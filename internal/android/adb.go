// Package android runs tokenpulse's measurements on Android devices over
// adb: it lists the attached devices and what they are (model, firmware,
// SoC, the tier the SoC maps to), reads their heat (battery and
// thermal-zone temperatures, the thermal status, CPU governors and
// frequencies) and says when a device throttled, and waits for one to
// cool. It talks to devices only through the adb program on PATH
// (Debian's adb package); internal/adbstub is the stand-in its tests
// use.
package android

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// ADB runs adb commands against one device.
type ADB struct {
	// Serial is the device's serial (adb -s).
	Serial string
	// Bin is the adb program ("" = adb on PATH).
	Bin string
}

func (a *ADB) bin() string {
	if a.Bin == "" {
		return "adb"
	}
	return a.Bin
}

// Command returns the adb command for args on the device, for a caller
// that streams its output.
func (a *ADB) Command(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, a.bin(), append([]string{"-s", a.Serial}, args...)...)
}

// run runs adb args and returns its standard output.
func (a *ADB) run(ctx context.Context, args ...string) (string, error) {
	cmd := a.Command(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("adb is not installed (Debian: apt-get install adb): %w", err)
		}
		return out.String(), fmt.Errorf("adb -s %s %s: %v: %s", a.Serial, args[0], err, msg)
	}
	return out.String(), nil
}

// Shell runs a command line in the device's shell and returns its
// output; a non-zero exit status is an error.
func (a *ADB) Shell(ctx context.Context, line string) (string, error) {
	return a.run(ctx, "shell", line)
}

// Push copies a local file to the device path remote.
func (a *ADB) Push(ctx context.Context, local, remote string) error {
	_, err := a.run(ctx, "push", local, remote)
	return err
}

// Pull copies the device path remote (a file or a directory) to local.
func (a *ADB) Pull(ctx context.Context, remote, local string) error {
	_, err := a.run(ctx, "pull", remote, local)
	return err
}

// Online reports whether the device answers (adb get-state says
// "device").
func (a *ADB) Online(ctx context.Context) bool {
	out, err := a.run(ctx, "get-state")
	return err == nil && strings.TrimSpace(out) == "device"
}

// Attached is one line of `adb devices -l`.
type Attached struct {
	Serial string
	// State is "device" for one ready, else "unauthorized", "offline", ...
	State string
	// Model is the model adb lists (underscores for spaces).
	Model string
}

// Devices lists the attached devices (adb devices -l) through bin (""
// = adb on PATH).
func Devices(ctx context.Context, bin string) ([]Attached, error) {
	a := &ADB{Bin: bin}
	cmd := exec.CommandContext(ctx, a.bin(), "devices", "-l")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("adb is not installed (Debian: apt-get install adb): %w", err)
		}
		return nil, fmt.Errorf("adb devices: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	return parseDevices(bytes.NewReader(out)), nil
}

// parseDevices parses the output of `adb devices -l`.
func parseDevices(r io.Reader) []Attached {
	var list []Attached
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(sc.Text(), "List of devices") || strings.HasPrefix(f[0], "*") {
			continue
		}
		d := Attached{Serial: f[0], State: f[1]}
		for _, kv := range f[2:] {
			if v, ok := strings.CutPrefix(kv, "model:"); ok {
				d.Model = v
			}
		}
		list = append(list, d)
	}
	return list
}

// Quote quotes s for the device's shell (mksh, or sh in the stand-in).
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// QuoteAll quotes each of args and joins them with spaces.
func QuoteAll(args []string) string {
	q := make([]string, len(args))
	for i, s := range args {
		q[i] = Quote(s)
	}
	return strings.Join(q, " ")
}
