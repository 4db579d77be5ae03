package device

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// platform reads what Windows gives without the registry: the processor
// identifier from the environment and the version from RtlGetVersion.
// Memory is left unknown.
func platform() info {
	var in info
	in.cpu = os.Getenv("PROCESSOR_IDENTIFIER")
	if v := windows.RtlGetVersion(); v != nil {
		in.kernel = fmt.Sprintf("Windows NT %d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber)
		in.os = "windows"
	}
	return in
}
