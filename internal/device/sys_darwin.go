package device

import (
	"strings"

	"golang.org/x/sys/unix"
)

// platform reads macOS's sysctl values.
func platform() info {
	var in info
	if s, err := unix.Sysctl("machdep.cpu.brand_string"); err == nil {
		in.cpu = s
	}
	if n, err := unix.SysctlUint64("hw.memsize"); err == nil {
		in.memory = n
	}
	if v, err := unix.Sysctl("kern.osproductversion"); err == nil && v != "" {
		in.os = "macOS " + v
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		in.kernel = strings.TrimSpace(unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]))
	}
	return in
}
