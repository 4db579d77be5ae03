package device

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseCPUInfo(t *testing.T) {
	tests := []struct{ file, want string }{
		{"cpuinfo-x86.txt", "Intel(R) Xeon(R) Processor"},
		{"cpuinfo-armv7.txt", "BCM2835"},
		{"cpuinfo-android.txt", "Qualcomm Technologies, Inc SM8550"},
		{"cpuinfo-arm64-bare.txt", ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			if got := parseCPUInfo(read(t, tc.file)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseMemInfo(t *testing.T) {
	if got, want := parseMemInfo(read(t, "meminfo.txt")), uint64(24684084*1024); got != want {
		t.Errorf("got %d, want %d", got, want)
	}
	if got := parseMemInfo("MemFree: 12 kB\n"); got != 0 {
		t.Errorf("without MemTotal: got %d, want 0", got)
	}
}

func TestParseOSRelease(t *testing.T) {
	tests := []struct{ file, want string }{
		{"os-release-debian.txt", "Debian GNU/Linux 12 (bookworm)"},
		{"os-release-alpine.txt", "Alpine 3.20.1"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			if got := parseOSRelease(read(t, tc.file)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCapture(t *testing.T) {
	d := Capture()
	if d.Arch != runtime.GOARCH || d.GoVersion != runtime.Version() || d.CPUCores != runtime.NumCPU() {
		t.Errorf("got arch %q go %q cores %d, want %q %q %d", d.Arch, d.GoVersion, d.CPUCores, runtime.GOARCH, runtime.Version(), runtime.NumCPU())
	}
	host, _ := os.Hostname()
	if host != "" && d.Hostname != host {
		t.Errorf("hostname: got %q, want %q", d.Hostname, host)
	}
	for name, v := range map[string]string{"os": d.OS, "kernel": d.Kernel, "cpu": d.CPUModel} {
		if strings.TrimSpace(v) == "" {
			t.Errorf("%s is empty; want a value or %q", name, Unknown)
		}
	}
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/meminfo"); err == nil && d.MemoryBytes == 0 {
			t.Error("memory is 0 although /proc/meminfo exists")
		}
		if !strings.HasPrefix(d.Kernel, "Linux ") {
			t.Errorf("kernel: got %q, want uname's \"Linux <release>\"", d.Kernel)
		}
	}
	if d.Label != "" || d.Tier != "" {
		t.Errorf("label %q tier %q, want both empty", d.Label, d.Tier)
	}
	o := CaptureWith(Options{Label: "Pixel 8 / Android 15", Tier: "mainstream"})
	if o.Label != "Pixel 8 / Android 15" || o.Tier != "mainstream" || o.Hostname != d.Hostname {
		t.Errorf("overrides: got %+v", o)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name string
		d    runfile.Device
		want string
	}{
		{"label wins", runfile.Device{Label: "Pixel 8", CPUModel: "x"}, "Pixel 8"},
		{"full", runfile.Device{CPUModel: "Xeon", CPUCores: 2, MemoryBytes: 3 << 30, OS: "linux", Arch: "amd64"}, "Xeon, 2 cores, 3.0 GiB, linux/amd64"},
		{"sparse", runfile.Device{OS: "windows", Arch: "arm64"}, "unknown, windows/arm64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Describe(tc.d); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
