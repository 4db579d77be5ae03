//go:build unix && !linux && !darwin

package device

import (
	"strings"

	"golang.org/x/sys/unix"
)

// platform reads uname on the other Unix systems; the rest is unknown.
func platform() info {
	var in info
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		in.kernel = strings.TrimSpace(unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]))
	}
	return in
}
