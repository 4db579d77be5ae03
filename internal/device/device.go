// Package device captures the context of the machine a run is measured
// from: CPU model, logical cores, memory, OS and kernel, architecture, Go
// version and hostname, so that a run's figures can be read against the
// hardware that produced them and runs on different machines are never
// compared by mistake.
//
// Capture reads what the platform offers cheaply and without running other
// programs: /proc/cpuinfo, /proc/meminfo, /etc/os-release and uname on
// Linux and Android; sysctl on macOS; the registry-free Windows APIs on
// Windows. What cannot be read is "unknown" (or 0 for numbers). The label
// and tier can be set by the user, for a device the capture cannot
// describe ("Pixel 8 / Android 15"):
//
//	d := device.CaptureWith(device.Options{Label: "Pixel 8 / Android 15", Tier: "mainstream"})
//	fmt.Println(device.Describe(d))
//
// Capture is safe for concurrent use.
package device

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// Unknown is written where a field could not be read.
const Unknown = "unknown"

// Options override what Capture reads.
type Options struct {
	// Label replaces the captured description in reports and history.
	Label string
	// Tier is the device tier the run is judged against.
	Tier string
}

// Capture returns the context of this machine.
func Capture() runfile.Device { return CaptureWith(Options{}) }

// CaptureWith returns the context of this machine with o applied.
func CaptureWith(o Options) runfile.Device {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = Unknown
	}
	info := platform()
	d := runfile.Device{
		Hostname:    host,
		OS:          orUnknown(info.os, runtime.GOOS),
		Kernel:      orUnknown(info.kernel, Unknown),
		Arch:        runtime.GOARCH,
		CPUModel:    orUnknown(info.cpu, Unknown),
		CPUCores:    runtime.NumCPU(),
		MemoryBytes: info.memory,
		GoVersion:   runtime.Version(),
		Label:       o.Label,
		Tier:        o.Tier,
	}
	return d
}

// Describe returns a one-line description of d: its label when set,
// otherwise CPU, cores, memory and OS.
func Describe(d runfile.Device) string {
	if d.Label != "" {
		return d.Label
	}
	parts := []string{orUnknown(d.CPUModel, Unknown)}
	if d.CPUCores > 0 {
		parts = append(parts, fmt.Sprintf("%d cores", d.CPUCores))
	}
	if d.MemoryBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB", float64(d.MemoryBytes)/(1<<30)))
	}
	plat := d.OS
	if d.Arch != "" {
		plat += "/" + d.Arch
	}
	parts = append(parts, plat)
	return strings.Join(parts, ", ")
}

// info is what a platform file reads; empty fields are unknown.
type info struct {
	os, kernel, cpu string
	memory          uint64
}

func orUnknown(s, fallback string) string {
	if strings.TrimSpace(s) == "" {
		return fallback
	}
	return strings.TrimSpace(s)
}

// parseCPUInfo returns the CPU model named by a /proc/cpuinfo text: the
// first "model name" (x86, most arm64 kernels), else "Hardware" or
// "Processor" (older ARM kernels), else "cpu model" (MIPS) or "cpu"
// (POWER).
func parseCPUInfo(text string) string {
	fields := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if _, seen := fields[k]; !seen {
			fields[k] = strings.TrimSpace(v)
		}
	}
	for _, k := range []string{"model name", "hardware", "processor", "cpu model", "cpu"} {
		v := fields[k]
		if v == "" {
			continue
		}
		if k == "processor" {
			// On x86 "processor" is just the CPU number.
			if _, err := strconv.Atoi(v); err == nil {
				continue
			}
		}
		return v
	}
	return ""
}

// parseMemInfo returns MemTotal of a /proc/meminfo text in bytes, 0 when
// absent.
func parseMemInfo(text string) uint64 {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "MemTotal:") {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(line, "MemTotal:"))
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			n *= 1024
		}
		return n
	}
	return 0
}

// parseOSRelease returns PRETTY_NAME (else NAME VERSION_ID) of an
// /etc/os-release text.
func parseOSRelease(text string) string {
	vals := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		} else {
			v = strings.Trim(v, `"'`)
		}
		vals[k] = v
	}
	if v := vals["PRETTY_NAME"]; v != "" {
		return v
	}
	return strings.TrimSpace(vals["NAME"] + " " + vals["VERSION_ID"])
}

// cString returns the text of a NUL-terminated byte array.
func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// MemTotal returns MemTotal of a /proc/meminfo text in bytes, 0 when
// absent: the rule Capture reads this machine's memory by, for a
// device's meminfo read elsewhere (over adb).
func MemTotal(meminfo string) uint64 { return parseMemInfo(meminfo) }
