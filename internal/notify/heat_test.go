package notify

import (
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestAlertNamesDeviceHeat: an alert of a run made on an Android device
// says it throttled, in the mail and in Slack's fields.
func TestAlertNamesDeviceHeat(t *testing.T) {
	c := func(v float64) *float64 { return &v }
	run := &runfile.Run{Device: runfile.Device{
		Label: "samsung SM-S928B (QTI SM8650) / Android 14", OS: "Android 14 (SDK 34) samsung/e3q:14/UP1A:user/release-keys", Tier: "flagship",
		Android: &runfile.Android{
			Serial:     "R5CX1",
			HeatBefore: &runfile.Heat{BatteryC: c(30), ThermalStatus: 0},
			HeatAfter:  &runfile.Heat{BatteryC: c(39), ThermalStatus: 2},
			Throttled:  true,
		},
	}}
	a := Build(run, "", nil).Alert
	want := "throttled during the run: battery 30.0 °C, thermal status none → battery 39.0 °C, thermal status moderate"
	if a.Heat != want {
		t.Errorf("heat %q, want %q", a.Heat, want)
	}
	if text := a.PlainText(); !strings.Contains(text, "Heat:   "+want) || !strings.Contains(text, "release-keys") {
		t.Errorf("mail lacks the heat or the firmware:\n%s", text)
	}
	var found bool
	for _, f := range blocks(a)[1].Fields {
		found = found || strings.HasPrefix(f.Text, "*Heat*")
	}
	if !found {
		t.Error("the Slack section has no heat field")
	}
	run.Device.Android = nil
	if a := Build(run, "", nil).Alert; a.Heat != "" {
		t.Errorf("a run off a device has heat %q", a.Heat)
	}
}
