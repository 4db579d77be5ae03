package main

import (
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/gate"
	"github.com/tokenpulse/tokenpulse/internal/android"
	"github.com/tokenpulse/tokenpulse/internal/device"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/suite"
)

// judgeFlags are the flags that decide how a run is judged: extra
// thresholds, the device tier, and the experience mapping.
type judgeFlags struct {
	thresholds     []string
	tier           string
	tiersFile      string
	experienceFile string
	deviceLabel    string
}

func (j *judgeFlags) register(fl *pflag.FlagSet) {
	fl.StringArrayVar(&j.thresholds, "threshold", nil, "extra threshold, e.g. 'ttft.p95 < 250ms' or '[category:complex] gap.max <= 120ms' (repeatable)")
	fl.StringVar(&j.tier, "tier", "", "device tier to judge against (flagship, mainstream, entry, or one from --tiers)")
	fl.StringVar(&j.tiersFile, "tiers", "", "tiers file (YAML) replacing the shipped tiers")
	fl.StringVar(&j.experienceFile, "experience", "", "experience mapping file (YAML) replacing the shipped one")
	fl.StringVar(&j.deviceLabel, "device-label", "", "describe the device yourself, e.g. \"Pixel 8 / Android 15\"")
}

// validateThreshold checks one threshold expression; suites use it too.
func validateThreshold(expr string) error { return gate.Validate(expr) }

// policy is where the flags say a run's rules come from, besides suite
// s (whose categories a scoped --threshold must name), with the error
// budget given.
func (j *judgeFlags) policy(s *suite.Suite, errorBudget string) gate.Policy {
	p := gate.Policy{
		Thresholds: j.thresholds, ErrorBudget: errorBudget, Tier: j.tier,
		TiersFile: j.tiersFile, ExperienceFile: j.experienceFile,
		Suite: s.Name, Categories: []string{},
	}
	for _, c := range s.Categories {
		p.Categories = append(p.Categories, c.Name)
	}
	return p
}

// device captures this machine's context with the flags' overrides.
func (j *judgeFlags) device() runfile.Device { return j.deviceWith(nil) }

// deviceWith is device with, on an Android device the host started the
// run on (bench --adb), what the host read of it (nil elsewhere).
func (j *judgeFlags) deviceWith(facts *runfile.Android) runfile.Device {
	d := device.CaptureWith(device.Options{Label: j.deviceLabel, Tier: j.tier})
	android.Apply(&d, facts)
	return d
}
