package runfile

import "time"

// Android is an Android device as adb describes it, and its heat around
// a run (bench --adb).
type Android struct {
	Serial         string `json:"serial"`
	Manufacturer   string `json:"manufacturer,omitempty"`
	Model          string `json:"model,omitempty"`
	AndroidVersion string `json:"android_version,omitempty"`
	SDK            string `json:"sdk,omitempty"`
	// Fingerprint is the build fingerprint (ro.build.fingerprint): the
	// firmware the run was made on.
	Fingerprint string `json:"fingerprint,omitempty"`
	// SoC is ro.soc.model (with ro.soc.manufacturer), Platform
	// ro.board.platform.
	SoC      string `json:"soc,omitempty"`
	Platform string `json:"platform,omitempty"`
	ABI      string `json:"abi,omitempty"`
	// MemoryBytes is /proc/meminfo's MemTotal.
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// Tier is the tier the SoC maps to in the tiers file, "" for none;
	// TierNote says why there is none.
	Tier     string `json:"tier,omitempty"`
	TierNote string `json:"tier_note,omitempty"`
	// Dir is the directory on the device the run was made in.
	Dir string `json:"dir,omitempty"`
	// Cooldown is how the run waited for the device to cool, if it did.
	Cooldown *Cooldown `json:"cooldown,omitempty"`
	// HeatBefore and HeatAfter are read just before the run starts and
	// just after it ends; Heat holds the readings taken as requests
	// finished (at most one in flight, so not one per request).
	HeatBefore *Heat  `json:"heat_before,omitempty"`
	HeatAfter  *Heat  `json:"heat_after,omitempty"`
	Heat       []Heat `json:"heat,omitempty"`
	// Throttled is true when a reading during or after the run showed
	// throttling (see the warnings for which).
	Throttled bool `json:"throttled,omitempty"`
}

// Heat is one reading of a device's temperatures and CPU frequencies.
type Heat struct {
	At time.Time `json:"at"`
	// BatteryC is the battery's temperature in °C (nil: not readable).
	BatteryC *float64 `json:"battery_c,omitempty"`
	// ThermalStatus is Android's thermal status (0 none, 1 light, 2
	// moderate, 3 severe, 4 critical, 5 emergency, 6 shutdown), -1 when
	// not readable.
	ThermalStatus int       `json:"thermal_status"`
	Zones         []Zone    `json:"zones,omitempty"`
	CPUs          []CPUFreq `json:"cpus,omitempty"`
}

// Zone is one thermal zone's reading.
type Zone struct {
	Name  string  `json:"name"`
	Type  string  `json:"type"`
	TempC float64 `json:"temp_c"`
	// PassiveTripC is the lowest passive trip point, where the kernel
	// starts throttling; 0 for none.
	PassiveTripC float64 `json:"passive_trip_c,omitempty"`
}

// CPUFreq is one core's cpufreq policy as read.
type CPUFreq struct {
	CPU      string `json:"cpu"`
	Governor string `json:"governor,omitempty"`
	CurKHz   int    `json:"cur_khz,omitempty"`
	// MaxKHz is scaling_max_freq, HWMaxKHz cpuinfo_max_freq: below it,
	// the core is capped.
	MaxKHz   int `json:"max_khz,omitempty"`
	HWMaxKHz int `json:"hw_max_khz,omitempty"`
}

// Cooldown is the wait before a run for a device to cool.
type Cooldown struct {
	// Until is the wait asked: a battery temperature ("38C") or a time.
	Until string `json:"until"`
	// WaitedMS is how long it waited; Reached whether the temperature
	// was reached (a time always is).
	WaitedMS float64 `json:"waited_ms"`
	Reached  bool    `json:"reached"`
}
