//go:build unix

package adbstub

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Main runs the stand-in adb with args and returns its exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s, err := LoadScript()
	if err != nil {
		fmt.Fprintln(stderr, "adb (stand-in):", err)
		return 1
	}
	serial := os.Getenv("ANDROID_SERIAL")
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-s":
			if len(args) < 2 {
				fmt.Fprintln(stderr, "adb: -s requires an argument")
				return 1
			}
			serial, args = args[1], args[2:]
		default:
			fmt.Fprintf(stderr, "adb: unknown option %s\n", args[0])
			return 1
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "adb: no command")
		return 1
	}
	if args[0] == "devices" {
		listDevices(s, stdout)
		return 0
	}
	if serial == "" {
		var online []string
		for _, d := range s.Devices {
			if !offline(s, d.Serial) {
				online = append(online, d.Serial)
			}
		}
		if len(online) != 1 {
			fmt.Fprintln(stderr, "adb: more than one device/emulator")
			return 1
		}
		serial = online[0]
	}
	d := s.device(serial)
	if d == nil || offline(s, serial) {
		fmt.Fprintf(stderr, "adb: device '%s' not found\n", serial)
		return 1
	}
	if d.state() != "device" {
		fmt.Fprintf(stderr, "adb: device %s\n", d.state())
		return 1
	}
	dev := &device{Device: d, root: filepath.Join(s.Root, serial)}
	if err := dev.setup(); err != nil {
		fmt.Fprintln(stderr, "adb (stand-in):", err)
		return 1
	}
	switch args[0] {
	case "get-state":
		fmt.Fprintln(stdout, "device")
		return 0
	case "push":
		return dev.push(args[1:], stdout, stderr)
	case "pull":
		return dev.pull(args[1:], stdout, stderr)
	case "shell":
		return dev.shell(args[1:], stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "adb: unknown command %s\n", args[0])
	return 1
}

// listDevices writes `adb devices -l` for the devices not lost.
func listDevices(s *Script, w io.Writer) {
	fmt.Fprintln(w, "List of devices attached")
	for i, d := range s.Devices {
		if offline(s, d.Serial) {
			continue
		}
		word := func(k string) string { return strings.ReplaceAll(d.Props[k], " ", "_") }
		if d.state() != "device" {
			fmt.Fprintf(w, "%-22s %s transport_id:%d\n", d.Serial, d.state(), i+1)
			continue
		}
		fmt.Fprintf(w, "%-22s device product:%s model:%s device:%s transport_id:%d\n",
			d.Serial, word("ro.product.name"), word("ro.product.model"), word("ro.product.device"), i+1)
	}
	fmt.Fprintln(w)
}

// stubDir is where the stand-in keeps its own state in a device's root.
const stubDir = ".adbstub"

func offline(s *Script, serial string) bool {
	_, err := os.Stat(filepath.Join(s.Root, serial, stubDir, "offline"))
	return err == nil
}

// device is a scripted device and its storage.
type device struct {
	*Device
	root string
}

func (d *device) state(name string) string { return filepath.Join(d.root, stubDir, name) }

// setup makes the device's storage: its tools and properties, and the
// files of its current step.
func (d *device) setup() error {
	for _, dir := range []string{stubDir, stubDir + "/elf", stubDir + "/pgids", "system/bin", "data/local/tmp", "sdcard", "proc"} {
		if err := os.MkdirAll(filepath.Join(d.root, dir), 0o755); err != nil {
			return err
		}
	}
	var props bytes.Buffer
	keys := make([]string, 0, len(d.Props))
	for k := range d.Props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&props, "[%s]: [%s]\n", k, d.Props[k])
	}
	files := map[string]string{
		stubDir + "/props": props.String(),
		"proc/meminfo":     fmt.Sprintf("MemTotal:       %d kB\nMemFree:         1000000 kB\n", d.MemTotalKB),
		"proc/cpuinfo":     "processor\t: 0\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd asimddp\nCPU implementer\t: 0x41\n",
		// getprop KEY prints the value; getprop alone every property.
		"system/bin/getprop": "#!/bin/sh\nP=" + shellQuote(d.state("props")) + "\n" +
			"if [ $# -eq 0 ]; then cat \"$P\"; exit 0; fi\n" +
			"grep -F \"[$1]: [\" \"$P\" | head -n1 | sed 's/^[^]]*\\]: \\[//; s/\\]$//'\n",
		"system/bin/dumpsys": "#!/bin/sh\ncase \"$1\" in\n" +
			"thermalservice) echo 'IsStatusOverride: false'; echo \"Thermal Status: $(cat " + shellQuote(d.state("thermal_status")) + ")\";;\n" +
			"battery) echo 'Current Battery Service state:'; echo \"  temperature: $(cat " + shellQuote(d.state("battery_tenths")) + ")\";;\n" +
			"*) echo \"Can't find service: $1\"; exit 1;;\nesac\n",
	}
	for name, text := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "system/bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(d.root, name), []byte(text), mode); err != nil {
			return err
		}
	}
	if _, err := os.Stat(d.state("step")); err != nil {
		return d.apply(0)
	}
	return nil
}

// step returns the device's current step.
func (d *device) step() int {
	b, _ := os.ReadFile(d.state("step"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// apply writes the sysfs files, battery and thermal status of step.
func (d *device) apply(step int) error {
	w := func(rel, text string) error {
		p := filepath.Join(d.root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(text+"\n"), 0o644)
	}
	milli := func(c float64) string { return strconv.Itoa(int(c * 1000)) }
	battery := at(d.BatteryC, step, 25)
	var errs []error
	errs = append(errs,
		w(stubDir+"/step", strconv.Itoa(step)),
		w(stubDir+"/thermal_status", strconv.Itoa(at(d.ThermalStatus, step, 0))),
		w(stubDir+"/battery_tenths", strconv.Itoa(int(battery*10))))
	if !d.HideBatteryFile {
		errs = append(errs, w("sys/class/power_supply/battery/temp", strconv.Itoa(int(battery*10))))
	}
	for i, z := range d.Zones {
		dir := fmt.Sprintf("sys/class/thermal/thermal_zone%d/", i)
		errs = append(errs, w(dir+"type", z.Type), w(dir+"temp", milli(at(z.TempC, step, 25))))
		if z.PassiveTripC > 0 {
			errs = append(errs, w(dir+"trip_point_0_type", "passive"), w(dir+"trip_point_0_temp", milli(z.PassiveTripC)))
		}
	}
	for i, c := range d.CPUs {
		dir := fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/", i)
		errs = append(errs, w(dir+"scaling_governor", c.Governor),
			w(dir+"cpuinfo_max_freq", strconv.Itoa(c.HWMaxKHz)),
			w(dir+"scaling_max_freq", strconv.Itoa(at(c.MaxKHz, step, c.HWMaxKHz))),
			w(dir+"scaling_cur_freq", strconv.Itoa(at(c.CurKHz, step, c.HWMaxKHz))))
	}
	return errors.Join(errs...)
}

// devicePath matches an absolute device path the stand-in keeps under
// the device's root.
var devicePath = regexp.MustCompile(`(^|[\s'"=(:;&|])(/(?:data|sys|sdcard|system)/|/proc/(?:meminfo|cpuinfo))`)

// local turns a device path into its place in the device's storage.
func (d *device) local(p string) string {
	return filepath.Join(d.root, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

// rewrite moves the device paths of a shell command under the root.
func (d *device) rewrite(cmd string) string {
	return devicePath.ReplaceAllString(cmd, "${1}"+d.root+"${2}")
}

// shell runs a command on the device: adb joins its arguments with
// spaces, and the device's sh runs the line.
func (d *device) shell(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-T" || args[0] == "-n") {
		args = args[1:]
	}
	line := strings.Join(args, " ")
	if line == "" {
		fmt.Fprintln(stderr, "adb (stand-in): an interactive shell is not supported")
		return 1
	}
	if strings.Contains(line, "/sys/class/thermal") {
		// A heat reading: it sees the next step.
		step := d.step()
		if err := d.apply(step); err != nil {
			fmt.Fprintln(stderr, "adb (stand-in):", err)
			return 1
		}
		_ = os.WriteFile(d.state("step"), []byte(strconv.Itoa(step+1)), 0o644)
	}
	cmd := exec.Command("/bin/sh", "-c", d.rewrite(line))
	cmd.Dir = d.root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(d.root, "system/bin")+":"+os.Getenv("PATH"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "adb (stand-in):", err)
		return 1
	}
	mark := filepath.Join(d.state("pgids"), strconv.Itoa(cmd.Process.Pid))
	_ = os.WriteFile(mark, nil, 0o644)
	err := cmd.Wait()
	_ = os.Remove(mark)
	if _, lost := os.Stat(d.state("offline")); lost == nil {
		fmt.Fprintln(stderr, "adb: device offline")
		return 255
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() < 0 {
			return 255
		}
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(stderr, "adb (stand-in):", err)
		return 1
	}
	return 0
}

// isARM64ELF reports whether b starts a 64-bit ELF for aarch64.
func isARM64ELF(b []byte) bool {
	return len(b) > 20 && string(b[:4]) == "\x7fELF" && b[4] == 2 && b[18] == 183 && b[19] == 0
}

// push copies a local file to the device. An arm64 executable is kept
// aside and runs through qemu-aarch64-static from the pushed path.
func (d *device) push(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "adb: usage: push LOCAL REMOTE")
		return 1
	}
	src, remote := args[0], args[1]
	b, err := os.ReadFile(src)
	if err != nil {
		fmt.Fprintf(stderr, "adb: error: cannot stat '%s': %v\n", src, err)
		return 1
	}
	dst := d.local(remote)
	if fi, err := os.Stat(dst); (err == nil && fi.IsDir()) || strings.HasSuffix(remote, "/") {
		dst = filepath.Join(dst, filepath.Base(src))
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		fmt.Fprintln(stderr, "adb: error:", err)
		return 1
	}
	data, mode := b, os.FileMode(0o644)
	if isARM64ELF(b) {
		aside := filepath.Join(d.state("elf"), strings.ReplaceAll(strings.TrimPrefix(remote, "/"), "/", "_"))
		if err := os.WriteFile(aside, b, 0o755); err != nil {
			fmt.Fprintln(stderr, "adb: error:", err)
			return 1
		}
		data, mode = []byte(qemuWrapper+shellQuote(aside)+" \"$@\"\n"), 0o755
	}
	_ = os.Remove(dst)
	if err := os.WriteFile(dst, data, mode); err != nil {
		fmt.Fprintln(stderr, "adb: error:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: 1 file pushed, 0 skipped. (%d bytes)\n", src, len(b))
	return 0
}

// qemuWrapper starts the script push puts in place of an arm64 program.
const qemuWrapper = "#!/bin/sh\nexec qemu-aarch64-static "

// original returns the program a wrapper push wrote stands for, else b.
func (d *device) original(b []byte) []byte {
	if !bytes.HasPrefix(b, []byte(qemuWrapper)) {
		return b
	}
	aside, _, _ := strings.Cut(strings.TrimPrefix(string(b), qemuWrapper), " \"$@\"")
	orig, err := os.ReadFile(strings.Trim(aside, "'"))
	if err != nil {
		return b
	}
	return orig
}

// pull copies a file or directory of the device to the host.
func (d *device) pull(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "adb: usage: pull REMOTE LOCAL")
		return 1
	}
	src, dst := d.local(args[0]), args[1]
	fi, err := os.Stat(src)
	if err != nil {
		fmt.Fprintf(stderr, "adb: error: failed to stat remote object '%s': No such file or directory\n", args[0])
		return 1
	}
	if di, err := os.Stat(dst); err == nil && di.IsDir() {
		dst = filepath.Join(dst, filepath.Base(src))
	}
	n := 0
	err = filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		return os.WriteFile(out, d.original(b), 0o644)
	})
	if err != nil {
		fmt.Fprintln(stderr, "adb: error:", err)
		return 1
	}
	_ = fi
	fmt.Fprintf(stdout, "%s: %d file(s) pulled, 0 skipped.\n", args[0], n)
	return 0
}

// Lose unplugs the device serial of the stand-in whose storage is under
// root: every later command fails as for a device that is gone, and the
// processes its shell commands started are killed.
func Lose(root, serial string) error {
	dir := filepath.Join(root, serial, stubDir)
	if err := os.WriteFile(filepath.Join(dir, "offline"), nil, 0o644); err != nil {
		return err
	}
	ents, err := os.ReadDir(filepath.Join(dir, "pgids"))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	return nil
}

// Replug brings a device Lose unplugged back.
func Replug(root, serial string) error {
	return os.Remove(filepath.Join(root, serial, stubDir, "offline"))
}

// Local returns where the device path p of device serial is in the
// stand-in's storage under root.
func Local(root, serial, p string) string {
	return (&device{root: filepath.Join(root, serial)}).local(p)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
