package device

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// platform reads Linux's (and Android's) /proc files and uname.
func platform() info {
	var in info
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		in.cpu = parseCPUInfo(string(b))
	}
	if in.cpu == "" {
		// Many arm64 boards name themselves only in the device tree.
		if b, err := os.ReadFile("/sys/firmware/devicetree/base/model"); err == nil {
			in.cpu = cString(b)
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		in.memory = parseMemInfo(string(b))
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		in.os = parseOSRelease(string(b))
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		in.kernel = strings.TrimSpace(unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]))
	}
	return in
}
