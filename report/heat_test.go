package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// TestReportsShowDeviceHeat: the text and HTML reports of a run made on
// an Android device say its heat, and that it throttled.
func TestReportsShowDeviceHeat(t *testing.T) {
	c := func(v float64) *float64 { return &v }
	run := &runfile.Run{SchemaVersion: 1, Device: runfile.Device{Label: "samsung SM-S928B (QTI SM8650) / Android 14", Android: &runfile.Android{
		Serial:     "R5CX1",
		HeatBefore: &runfile.Heat{BatteryC: c(30), Zones: []runfile.Zone{{Name: "thermal_zone0", Type: "cpu", TempC: 36, PassiveTripC: 50}}},
		HeatAfter:  &runfile.Heat{BatteryC: c(33), Zones: []runfile.Zone{{Name: "thermal_zone0", Type: "cpu", TempC: 52, PassiveTripC: 50}}, ThermalStatus: 1},
		Throttled:  true,
	}}}
	want := "throttled during the run: battery 30.0 °C, hottest zone cpu 36.0 °C, thermal status none → battery 33.0 °C, hottest zone cpu 52.0 °C, thermal status light"
	var text, html bytes.Buffer
	if err := Text(&text, run, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "heat    "+want) {
		t.Errorf("the text report lacks the heat:\n%s", text.String())
	}
	if err := HTML(&html, run, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "Heat") || !strings.Contains(html.String(), "hottest zone cpu 52.0 °C") {
		t.Error("the HTML report lacks the heat")
	}
	run.Device.Android = nil
	text.Reset()
	if err := Text(&text, run, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "heat") {
		t.Errorf("a run off a device has a heat line:\n%s", text.String())
	}
}
