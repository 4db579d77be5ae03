//go:build unix

package android

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/adbstub"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// standIn installs the stand-in with devices on PATH for the test.
func standIn(t *testing.T, devices ...adbstub.Device) *adbstub.Script {
	t.Helper()
	s := &adbstub.Script{Devices: devices}
	env, err := adbstub.Install(t.TempDir(), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return s
}

func flagship() adbstub.Device {
	return adbstub.Device{
		Serial: "R5CX1", MemTotalKB: 11_700_000,
		Props: map[string]string{
			"ro.product.manufacturer": "samsung", "ro.product.model": "SM-S928B",
			"ro.build.version.release": "14", "ro.build.version.sdk": "34",
			"ro.build.fingerprint": "samsung/e3qxeea/e3q:14/UP1A.231005.007/S928BXXU1AWM9:user/release-keys",
			"ro.soc.manufacturer":  "QTI", "ro.soc.model": "SM8650", "ro.board.platform": "pineapple",
			"ro.product.cpu.abi": "arm64-v8a",
		},
		Zones:         []adbstub.Zone{{Type: "cpu-1-0-0", TempC: []float64{36, 41, 52}, PassiveTripC: 50}, {Type: "skin", TempC: []float64{31, 33, 35}}},
		BatteryC:      []float64{30, 31, 33},
		ThermalStatus: []int{0, 0, 0},
		CPUs:          []adbstub.CPU{{Governor: "schedutil", HWMaxKHz: 3_300_000, CurKHz: []int{300_000, 3_300_000}}},
	}
}

func TestDescribe(t *testing.T) {
	other := adbstub.Device{Serial: "tensor", Props: map[string]string{"ro.product.model": "Pixel 8", "ro.soc.model": "Tensor G3", "ro.board.platform": "zuma"}}
	standIn(t, flagship(), other)
	ctx := context.Background()
	list, err := Devices(ctx, "")
	if err != nil || len(list) != 2 || list[0].Serial != "R5CX1" || list[0].State != "device" || list[0].Model != "SM-S928B" {
		t.Fatalf("Devices = %+v, %v", list, err)
	}
	d, err := Describe(ctx, &ADB{Serial: "R5CX1"}, gate.DefaultTiers())
	if err != nil {
		t.Fatal(err)
	}
	if d.Tier != "flagship" || d.SoC != "QTI SM8650" || d.AndroidVersion != "14" || d.MemoryBytes != 11_700_000*1024 || !strings.HasPrefix(d.Fingerprint, "samsung/") || d.ABI != "arm64-v8a" {
		t.Errorf("Describe = %+v", d)
	}
	u, err := Describe(ctx, &ADB{Serial: "tensor"}, gate.DefaultTiers())
	if err != nil {
		t.Fatal(err)
	}
	if u.Tier != "" || !strings.Contains(u.TierNote, "Tensor G3 is in no tier") {
		t.Errorf("an unknown SoC: tier %q note %q", u.Tier, u.TierNote)
	}
}

func TestHeatAndThrottling(t *testing.T) {
	standIn(t, flagship())
	ctx := context.Background()
	a := &ADB{Serial: "R5CX1"}
	before, err := ReadHeat(ctx, a, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if before.BatteryC == nil || *before.BatteryC != 30 || len(before.Zones) != 2 || before.Zones[0].TempC != 36 || before.Zones[0].PassiveTripC != 50 || before.ThermalStatus != 0 {
		t.Fatalf("before = %+v", before)
	}
	if len(before.CPUs) != 1 || before.CPUs[0].Governor != "schedutil" || before.CPUs[0].CurKHz != 300_000 || before.CPUs[0].HWMaxKHz != 3_300_000 {
		t.Errorf("cpus = %+v", before.CPUs)
	}
	mid, _ := ReadHeat(ctx, a, time.Unix(1, 0))
	if w := Throttling(before, []runfile.Heat{*mid}).Warnings(); len(w) != 0 {
		t.Errorf("41 °C under a 50 °C trip point warned: %q", w)
	}
	after, _ := ReadHeat(ctx, a, time.Unix(2, 0))
	v := Throttling(before, []runfile.Heat{*mid, *after})
	if v.StartedHot != "" || !strings.Contains(v.Throttled, "throttled during the run") || !strings.Contains(v.Throttled, "52.0 °C, its passive trip point 50.0 °C") {
		t.Errorf("a rise past the trip point: %+v", v)
	}
}

// TestBatteryFromDumpsys: where the battery's sysfs file is hidden, its
// temperature comes from dumpsys battery.
func TestBatteryFromDumpsys(t *testing.T) {
	d := flagship()
	d.HideBatteryFile = true
	d.BatteryC = []float64{34.5}
	standIn(t, d)
	h, err := ReadHeat(context.Background(), &ADB{Serial: "R5CX1"}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if h.BatteryC == nil || *h.BatteryC != 34.5 {
		t.Errorf("battery %v, want 34.5 °C from dumpsys battery", h.BatteryC)
	}
}

func TestParseHeat(t *testing.T) {
	h := parseHeat("zone thermal_zone3 45 battery\nzone thermal_zone4 abc x\nbattery \nstatus Thermal Status: 2\ncpu cpu4 walt 1000 2000 3000\n")
	if len(h.Zones) != 1 || h.Zones[0].TempC != 45 || h.BatteryC != nil || h.ThermalStatus != 2 || h.CPUs[0].MaxKHz != 2000 {
		t.Errorf("parseHeat = %+v", h)
	}
	if v := Throttling(nil, []runfile.Heat{*h}); v.StartedHot != "" || !strings.Contains(v.Throttled, "moderate") {
		t.Errorf("status 2: %+v", v)
	}
	capped := *h
	capped.ThermalStatus = 0
	capped.CPUs = []runfile.CPUFreq{{CPU: "cpu4", MaxKHz: 1000}}
	if v := Throttling(h, []runfile.Heat{capped}); !strings.Contains(v.StartedHot, "moderate") || !strings.Contains(v.Throttled, "cpu4 capped at 1 MHz (was 2 MHz)") {
		t.Errorf("a cap after a hot start: %+v", v)
	}
}

// fakeClock advances only when slept.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	return nil
}

func TestCooldown(t *testing.T) {
	d := flagship()
	d.BatteryC = []float64{41, 40, 38.5, 37}
	standIn(t, d)
	spec, err := ParseCooldown("38C")
	if err != nil || spec.TempC != 38 {
		t.Fatalf("ParseCooldown = %+v %v", spec, err)
	}
	var said []string
	clk := &fakeClock{now: time.Unix(100, 0)}
	rec, err := Cooldown(context.Background(), &ADB{Serial: "R5CX1"}, spec, time.Hour, clk, func(s string) { said = append(said, s) })
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Reached || rec.WaitedMS != float64(3*CooldownPoll/time.Millisecond) || len(said) != 3 {
		t.Errorf("cooldown = %+v after %q", rec, said)
	}
	for _, bad := range []string{"0C", "hot", "-1m", "200C"} {
		if _, err := ParseCooldown(bad); err == nil {
			t.Errorf("ParseCooldown(%q) took it", bad)
		}
	}
	if s, err := ParseCooldown("90s"); err != nil || s.Wait != 90*time.Second {
		t.Errorf("ParseCooldown(90s) = %+v %v", s, err)
	}
}
