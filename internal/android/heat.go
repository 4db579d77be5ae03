package android

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// heatScript reads every thermal zone (type, temperature, passive trip
// points), the battery's temperature (its sysfs file, else dumpsys
// battery: some devices' SELinux policy hides the file from the shell),
// the thermal status and each core's cpufreq policy in one shell
// command; mksh and sh both run it.
const heatScript = `for z in /sys/class/thermal/thermal_zone*; do [ -e "$z/temp" ] || continue; ` +
	`echo "zone ${z##*/} $(cat $z/temp 2>/dev/null) $(cat $z/type 2>/dev/null)"; ` +
	`for p in $z/trip_point_*_type; do [ -e "$p" ] || continue; echo "trip ${z##*/} $(cat $p 2>/dev/null) $(cat ${p%_type}_temp 2>/dev/null)"; done; done; ` +
	`b=$(cat /sys/class/power_supply/battery/temp 2>/dev/null); [ -n "$b" ] || b=$(dumpsys battery 2>/dev/null | grep -m1 temperature | tr -dc 0-9); echo "battery $b"; ` +
	`echo "status $(dumpsys thermalservice 2>/dev/null | grep -m1 'Thermal Status')"; ` +
	`for c in /sys/devices/system/cpu/cpu[0-9]*; do [ -e "$c/cpufreq" ] || continue; ` +
	`echo "cpu ${c##*/} $(cat $c/cpufreq/scaling_governor 2>/dev/null) $(cat $c/cpufreq/scaling_cur_freq 2>/dev/null) $(cat $c/cpufreq/scaling_max_freq 2>/dev/null) $(cat $c/cpufreq/cpuinfo_max_freq 2>/dev/null)"; done; true`

// ReadHeat reads the device's heat once (one adb shell command).
func ReadHeat(ctx context.Context, a *ADB, now time.Time) (*runfile.Heat, error) {
	out, err := a.Shell(ctx, heatScript)
	if err != nil {
		return nil, err
	}
	h := parseHeat(out)
	h.At = now
	return h, nil
}

// parseHeat parses heatScript's output. Zone temperatures are in
// millidegrees (a few kernels give degrees: a value below 1000 is taken
// as such), the battery's in tenths of a degree.
func parseHeat(text string) *runfile.Heat {
	h := &runfile.Heat{ThermalStatus: -1}
	zones := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "zone":
			if len(f) < 3 {
				continue
			}
			t, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				continue
			}
			zones[f[1]] = len(h.Zones)
			h.Zones = append(h.Zones, runfile.Zone{Name: f[1], TempC: zoneC(t), Type: strings.Join(f[3:], " ")})
		case "trip":
			if len(f) != 4 || f[2] != "passive" {
				continue
			}
			i, ok := zones[f[1]]
			t, err := strconv.ParseFloat(f[3], 64)
			if !ok || err != nil || t <= 0 {
				continue
			}
			if c := zoneC(t); h.Zones[i].PassiveTripC == 0 || c < h.Zones[i].PassiveTripC {
				h.Zones[i].PassiveTripC = c
			}
		case "battery":
			if len(f) == 2 {
				if t, err := strconv.ParseFloat(f[1], 64); err == nil {
					c := t / 10
					h.BatteryC = &c
				}
			}
		case "status":
			if len(f) >= 2 {
				if n, err := strconv.Atoi(f[len(f)-1]); err == nil {
					h.ThermalStatus = n
				}
			}
		case "cpu":
			if len(f) < 2 {
				continue
			}
			c := runfile.CPUFreq{CPU: f[1]}
			if len(f) > 2 {
				c.Governor = f[2]
			}
			nums := []*int{&c.CurKHz, &c.MaxKHz, &c.HWMaxKHz}
			for i, p := range nums {
				if len(f) > 3+i {
					*p, _ = strconv.Atoi(f[3+i])
				}
			}
			h.CPUs = append(h.CPUs, c)
		}
	}
	return h
}

func zoneC(t float64) float64 {
	if math.Abs(t) >= 1000 {
		t /= 1000
	}
	return math.Round(t*10) / 10
}

// Hottest returns the hottest zone of h, false when h has none.
func Hottest(h *runfile.Heat) (runfile.Zone, bool) {
	var best runfile.Zone
	for i, z := range h.Zones {
		if i == 0 || z.TempC > best.TempC {
			best = z
		}
	}
	return best, len(h.Zones) > 0
}

// statusNames are Android's thermal statuses (PowerManager.THERMAL_STATUS_*).
var statusNames = []string{"none", "light", "moderate", "severe", "critical", "emergency", "shutdown"}

// StatusName names a thermal status.
func StatusName(s int) string {
	if s >= 0 && s < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Verdict is what the heat readings around a run say: each field is a
// warning for the run's reports, "" when it does not apply.
type Verdict struct {
	// StartedHot: the device was already throttling when the run began.
	StartedHot string
	// Throttled: a reading during or after the run showed throttling.
	Throttled string
}

// Warnings returns v's warnings that apply, in order.
func (v Verdict) Warnings() []string {
	var out []string
	for _, w := range []string{v.StartedHot, v.Throttled} {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// Throttling judges the readings taken during and after a run: the
// device throttled when one shows a thermal status of light or worse
// (Android's own verdict), a zone at or above its passive trip point
// (where the kernel caps the CPUs), or a core whose scaling_max_freq
// fell below what it was before the run. before may be nil; a device
// already throttling before the run is said apart.
func Throttling(before *runfile.Heat, during []runfile.Heat) Verdict {
	var v Verdict
	if before != nil {
		if r := throttled(before, nil); len(r) > 0 {
			v.StartedHot = "the device was already throttling when the run began (" + strings.Join(r, "; ") + "): its figures are of a hot device; --cooldown waits for it to cool"
		}
	}
	seen := map[string]bool{}
	var reasons []string
	for i := range during {
		for _, r := range throttled(&during[i], before) {
			kind, _, _ := strings.Cut(r, ":")
			if !seen[kind] {
				seen[kind] = true
				reasons = append(reasons, r)
			}
		}
	}
	if len(reasons) > 0 {
		v.Throttled = "the device throttled during the run (" + strings.Join(reasons, "; ") + "): later requests ran on slower cores, so TTFT and TPOT drift; let it cool (--cooldown) and compare runs made alike"
	}
	return v
}

// throttled returns the signs of throttling in h: its status, zones at
// their trip points, and (with a reading before to compare) cores capped
// since.
func throttled(h, before *runfile.Heat) []string {
	var r []string
	if h.ThermalStatus >= 1 {
		r = append(r, fmt.Sprintf("thermal status: %s (%d)", StatusName(h.ThermalStatus), h.ThermalStatus))
	}
	for _, z := range h.Zones {
		if z.PassiveTripC > 0 && z.TempC >= z.PassiveTripC {
			r = append(r, fmt.Sprintf("trip point: %s (%s) at %.1f °C, its passive trip point %.1f °C", z.Name, z.Type, z.TempC, z.PassiveTripC))
			break
		}
	}
	if before != nil {
		was := map[string]int{}
		for _, c := range before.CPUs {
			was[c.CPU] = c.MaxKHz
		}
		for _, c := range h.CPUs {
			if w := was[c.CPU]; w > 0 && c.MaxKHz > 0 && c.MaxKHz < w {
				r = append(r, fmt.Sprintf("frequency cap: %s capped at %d MHz (was %d MHz)", c.CPU, c.MaxKHz/1000, w/1000))
				break
			}
		}
	}
	return r
}

// Summary is a one-line account of h: battery, hottest zone, status.
func Summary(h *runfile.Heat) string {
	if h == nil {
		return "not read"
	}
	var parts []string
	if h.BatteryC != nil {
		parts = append(parts, fmt.Sprintf("battery %.1f °C", *h.BatteryC))
	}
	if z, ok := Hottest(h); ok {
		parts = append(parts, fmt.Sprintf("hottest zone %s %.1f °C", z.Type, z.TempC))
	}
	parts = append(parts, "thermal status "+StatusName(h.ThermalStatus))
	return strings.Join(parts, ", ")
}

// Note is one line on a device run's heat for an alert: before → after,
// and whether the device throttled; "" when the run was not made on an
// Android device or its heat was not read.
func Note(a *runfile.Android) string {
	if a == nil || (a.HeatBefore == nil && a.HeatAfter == nil) {
		return ""
	}
	s := Summary(a.HeatBefore) + " → " + Summary(a.HeatAfter)
	if a.Throttled {
		s = "throttled during the run: " + s
	}
	return s
}
