package gate

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

//go:embed defaults/tiers.yaml
var defaultTiersYAML []byte

//go:embed defaults/experience.yaml
var defaultExperienceYAML []byte

// Tier is one device class and the thresholds it must meet.
type Tier struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Thresholds  []string `yaml:"thresholds"`
	// SoCs are the systems-on-chip whose devices belong to the tier, by
	// name or part number (see Tiers.OfSoC).
	SoCs []string `yaml:"socs,omitempty"`
}

// Tiers is a tiers file: device classes in the order the file lists them.
// The zero value has no tiers.
type Tiers struct {
	list []Tier
}

// DefaultTiers returns the shipped tiers: flagship (ttft.p95 ≤ 180 ms,
// gap.p95 ≤ 70 ms), mainstream (≤ 280 / ≤ 95) and entry (≤ 420 / ≤ 130).
// TTFT is judged at p95: a tier promises what nearly every user of the
// class gets, and the median hides the late answers people remember.
func DefaultTiers() Tiers {
	t, err := ParseTiers(defaultTiersYAML)
	if err != nil {
		panic("gate: shipped tiers file: " + err.Error())
	}
	return t
}

// DefaultTiersYAML returns the shipped tiers file, a starting point for a
// file of one's own.
func DefaultTiersYAML() []byte { return bytes.Clone(defaultTiersYAML) }

// LoadTiers reads a tiers file (YAML, the shape of DefaultTiersYAML).
func LoadTiers(path string) (Tiers, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Tiers{}, err
	}
	t, err := ParseTiers(b)
	if err != nil {
		return Tiers{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseTiers parses a tiers file and validates every threshold in it.
func ParseTiers(b []byte) (Tiers, error) {
	var doc struct {
		Tiers []Tier `yaml:"tiers"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return Tiers{}, fmt.Errorf("tiers file: %w", err)
	}
	if len(doc.Tiers) == 0 {
		return Tiers{}, errors.New("tiers file: no tiers")
	}
	seen := map[string]bool{}
	for i, t := range doc.Tiers {
		if t.Name == "" {
			return Tiers{}, fmt.Errorf("tiers file: tier %d has no name", i+1)
		}
		if seen[t.Name] {
			return Tiers{}, fmt.Errorf("tiers file: tier %q appears twice", t.Name)
		}
		seen[t.Name] = true
		if len(t.Thresholds) == 0 {
			return Tiers{}, fmt.Errorf("tiers file: tier %q has no thresholds", t.Name)
		}
		for _, e := range t.Thresholds {
			if err := Validate(e); err != nil {
				return Tiers{}, fmt.Errorf("tiers file: tier %q: %w", t.Name, err)
			}
		}
	}
	return Tiers{list: doc.Tiers}, nil
}

// Names returns the tier names in file order.
func (t Tiers) Names() []string {
	names := make([]string, len(t.list))
	for i, x := range t.list {
		names[i] = x.Name
	}
	return names
}

// Get returns the named tier.
func (t Tiers) Get(name string) (Tier, bool) {
	for _, x := range t.list {
		if x.Name == name {
			return x, true
		}
	}
	return Tier{}, false
}

// Rules returns the thresholds of the named tier as rules with Source
// "tier:NAME"; an expression without a scope is judged overall.
func (t Tiers) Rules(name string) ([]Rule, error) {
	x, ok := t.Get(name)
	if !ok {
		return nil, fmt.Errorf("unknown tier %q; tiers are %s", name, strings.Join(t.Names(), ", "))
	}
	return TierRules(name, x.Thresholds)
}

// TierRules parses the thresholds of tier name as its rules: Source
// "tier:NAME", overall unless an expression names a scope.
func TierRules(name string, thresholds []string) ([]Rule, error) {
	rules, err := ParseAll(thresholds)
	if err != nil {
		return nil, err
	}
	for i := range rules {
		rules[i].Source = "tier:" + name
		if !rules[i].Scoped {
			rules[i] = rules[i].In(measure.Overall)
		}
	}
	return rules, nil
}

// ExperienceRule is one row of the experience mapping: when the condition
// holds on a run, users experience Experience, which costs Impact.
type ExperienceRule struct {
	// When is the condition, in the threshold language but read as "this
	// is true of the run" ("gap.max > 200ms"); unscoped means overall.
	When Rule
	// Tier limits the row to runs judged on that tier; "" means any.
	Tier       string
	Experience string
	Impact     string
}

// DefaultExperience returns the shipped experience mapping.
func DefaultExperience() []ExperienceRule {
	rs, err := ParseExperience(defaultExperienceYAML)
	if err != nil {
		panic("gate: shipped experience file: " + err.Error())
	}
	return rs
}

// DefaultExperienceYAML returns the shipped experience file.
func DefaultExperienceYAML() []byte { return bytes.Clone(defaultExperienceYAML) }

// LoadExperience reads an experience file (YAML, the shape of
// DefaultExperienceYAML).
func LoadExperience(path string) ([]ExperienceRule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rs, err := ParseExperience(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rs, nil
}

// ParseExperience parses an experience file.
func ParseExperience(b []byte) ([]ExperienceRule, error) {
	var doc struct {
		Rules []struct {
			When       string `yaml:"when"`
			Tier       string `yaml:"tier"`
			Experience string `yaml:"experience"`
			Impact     string `yaml:"impact"`
		} `yaml:"rules"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("experience file: %w", err)
	}
	if len(doc.Rules) == 0 {
		return nil, errors.New("experience file: no rules")
	}
	var out []ExperienceRule
	for i, r := range doc.Rules {
		if r.When == "" || r.Experience == "" {
			return nil, fmt.Errorf("experience file: rule %d needs both \"when\" and \"experience\"", i+1)
		}
		w, err := Parse(r.When)
		if err != nil {
			return nil, fmt.Errorf("experience file: rule %d: %w", i+1, err)
		}
		tier := r.Tier
		if strings.EqualFold(tier, "any") {
			tier = ""
		}
		out = append(out, ExperienceRule{When: w, Tier: tier, Experience: r.Experience, Impact: r.Impact})
	}
	return out, nil
}

// Experience returns the rows of rules that run triggers on tier ("" means
// the run's own Device.Tier), each with the value measured beside it. A
// row limited to a tier applies only when the run is judged on that tier;
// a condition on a scope with nothing to measure does not trigger.
func Experience(run *runfile.Run, rules []ExperienceRule, tier string) []runfile.Experience {
	if tier == "" {
		tier = run.Device.Tier
	}
	cache := map[string]*scopeData{}
	var out []runfile.Experience
	for _, r := range rules {
		if r.Tier != "" && !strings.EqualFold(r.Tier, tier) {
			continue
		}
		scope := r.When.Scope
		d := scopeOf(run, scope, cache)
		v, ok := measureRule(r.When, &d.g, d.views)
		if !ok || !r.When.Op.Holds(v, r.When.Limit) {
			continue
		}
		out = append(out, runfile.Experience{
			Rule:       r.When.Text(),
			Scope:      scope.String(),
			Tier:       r.Tier,
			Value:      v,
			Unit:       r.When.Unit,
			Experience: r.Experience,
			Impact:     r.Impact,
		})
	}
	return out
}
