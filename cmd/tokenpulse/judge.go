package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/gate"
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

// judgement is what judgeFlags resolves to before a run starts, so that
// bad input is refused before anything is measured.
type judgement struct {
	tierRules  []gate.Rule
	experience []gate.ExperienceRule
}

// rules parses and loads everything the flags name, and refuses a
// --threshold scoped to a category suite s does not have (a typo would
// otherwise fail on no evidence).
func (j *judgeFlags) rules(s *suite.Suite) (*judgement, error) {
	flagged, err := gate.ParseAll(j.thresholds)
	if err != nil {
		return nil, err
	}
	if err := checkCategories(flagged, s); err != nil {
		return nil, err
	}
	out := &judgement{experience: gate.DefaultExperience()}
	if j.experienceFile != "" {
		ex, err := gate.LoadExperience(j.experienceFile)
		if err != nil {
			return nil, err
		}
		out.experience = ex
	}
	tiers := gate.DefaultTiers()
	if j.tiersFile != "" {
		t, err := gate.LoadTiers(j.tiersFile)
		if err != nil {
			return nil, err
		}
		tiers = t
	}
	if j.tier != "" {
		r, err := tiers.Rules(j.tier)
		if err != nil {
			return nil, err
		}
		out.tierRules = r
	}
	return out, nil
}

// device captures this machine's context with the flags' overrides.
func (j *judgeFlags) device() runfile.Device {
	return device.CaptureWith(device.Options{Label: j.deviceLabel, Tier: j.tier})
}

// apply judges run: verdicts for the suite's, the flags' and the tier's
// thresholds, the goodput under them, and the experience rows it
// triggers.
func (j *judgeFlags) apply(run *runfile.Run, jd *judgement) error {
	run.Verdicts = gate.Judge(run, jd.tierRules)
	run.Summary.Goodput = gate.Goodput(run, jd.tierRules)
	run.Experience = gate.Experience(run, jd.experience, j.tier)
	return nil
}

// checkCategories refuses a rule scoped to a category s does not have.
func checkCategories(rules []gate.Rule, s *suite.Suite) error {
	names := map[string]bool{}
	var list []string
	for _, c := range s.Categories {
		names[c.Name] = true
		list = append(list, c.Name)
	}
	for _, r := range rules {
		if r.Scope.Kind == gate.ScopeCategory && !names[r.Scope.Category] {
			return fmt.Errorf("--threshold %q: suite %s has no category %q (it has %s)", r.Text(), s.Name, r.Scope.Category, strings.Join(list, ", "))
		}
	}
	return nil
}
