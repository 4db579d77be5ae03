// Package adbstub is a stand-in Android device for tests: a program
// named adb (cmd/adb) that answers the adb subcommands tokenpulse uses —
// devices -l, -s SERIAL push, pull, shell and get-state — from a script,
// so that tokenpulse's device runs are tested where no phone is
// reachable.
//
// The script is a JSON file named by $ADBSTUB_SCRIPT ([Script]). Each
// device's storage is a scratch directory, ROOT/SERIAL, that plays the
// device's "/": a shell command runs in the host's sh with the device's
// absolute paths (/data, /sys, /sdcard, /system, /proc/meminfo,
// /proc/cpuinfo) moved under it, with getprop and dumpsys given by small
// scripts on its PATH. A pushed linux/arm64 executable runs under
// qemu-aarch64-static: the stub keeps it aside and puts at the pushed
// path a script that runs it through the emulator (pull gives back the
// original bytes). An android/arm64 build needs Android's own dynamic
// linker, which the stand-in lacks; a static linux/arm64 build runs.
//
// Temperatures, the thermal status and the CPU frequencies are scripted
// per step: the k-th shell command that reads /sys/class/thermal sees the
// k-th step (the last one repeats). [Lose] unplugs a device mid-run: it
// kills the processes its shell commands started and makes every later
// command fail as adb does for a device that is gone.
package adbstub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ScriptEnv names the environment variable holding the script's path.
const ScriptEnv = "ADBSTUB_SCRIPT"

// Script describes the stand-in's devices.
type Script struct {
	// Root is the scratch directory holding each device's storage
	// (ROOT/SERIAL); empty means the script file's directory.
	Root    string   `json:"root,omitempty"`
	Devices []Device `json:"devices"`
}

// Device is one scripted device.
type Device struct {
	Serial string `json:"serial"`
	// State is what adb devices says of it: "device" (the default, ready),
	// or "unauthorized" (the USB debugging prompt not yet accepted),
	// "offline", ...; a device not ready refuses every command.
	State string `json:"state,omitempty"`
	// Props are the system properties getprop answers
	// (ro.product.model, ro.soc.model, ...).
	Props map[string]string `json:"props"`
	// MemTotalKB is /proc/meminfo's MemTotal.
	MemTotalKB uint64 `json:"mem_total_kb,omitempty"`
	// Zones are the thermal zones (/sys/class/thermal/thermal_zoneN).
	Zones []Zone `json:"zones,omitempty"`
	// BatteryC is the battery's temperature per step, in °C.
	BatteryC []float64 `json:"battery_c,omitempty"`
	// HideBatteryFile leaves out /sys/class/power_supply/battery/temp,
	// as some devices' SELinux policy does for the shell: only dumpsys
	// battery tells the temperature.
	HideBatteryFile bool `json:"hide_battery_file,omitempty"`
	// ThermalStatus is dumpsys thermalservice's status per step (0 none,
	// 1 light, 2 moderate, 3 severe, 4 critical, 5 emergency, 6 shutdown).
	ThermalStatus []int `json:"thermal_status,omitempty"`
	// CPUs are the cores' frequency policies.
	CPUs []CPU `json:"cpus,omitempty"`
}

// Zone is one thermal zone.
type Zone struct {
	Type string `json:"type"`
	// TempC is its temperature per step, in °C.
	TempC []float64 `json:"temp_c"`
	// PassiveTripC is its passive trip point (where the kernel starts
	// throttling), 0 for none.
	PassiveTripC float64 `json:"passive_trip_c,omitempty"`
}

// CPU is one core's cpufreq policy.
type CPU struct {
	Governor string `json:"governor"`
	// HWMaxKHz is cpuinfo_max_freq.
	HWMaxKHz int `json:"hw_max_khz"`
	// CurKHz and MaxKHz are scaling_cur_freq and scaling_max_freq per
	// step (MaxKHz below HWMaxKHz is a thermal cap); empty MaxKHz means
	// HWMaxKHz.
	CurKHz []int `json:"cur_khz,omitempty"`
	MaxKHz []int `json:"max_khz,omitempty"`
}

// LoadScript reads the script named by $ADBSTUB_SCRIPT.
func LoadScript() (*Script, error) {
	path := os.Getenv(ScriptEnv)
	if path == "" {
		return nil, fmt.Errorf("$%s names no script", ScriptEnv)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Script
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Root == "" {
		s.Root = filepath.Dir(path)
	}
	return &s, nil
}

// Write writes s to path as a script the stand-in reads.
func (s *Script) Write(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// device returns the scripted device serial, nil when there is none.
func (s *Script) device(serial string) *Device {
	for i := range s.Devices {
		if s.Devices[i].Serial == serial {
			return &s.Devices[i]
		}
	}
	return nil
}

// state is the device's state, "device" unless the script says.
func (d *Device) state() string {
	if d.State == "" {
		return "device"
	}
	return d.State
}

// at returns xs[step], the last element past the end, and def for none.
func at[T any](xs []T, step int, def T) T {
	if len(xs) == 0 {
		return def
	}
	if step >= len(xs) {
		step = len(xs) - 1
	}
	return xs[step]
}
