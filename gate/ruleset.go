package gate

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// DefaultErrorBudget is the largest share of failed requests a run may
// have and still pass when no other budget is given: the rule
// "[overall] errors.rate <= 1%" joins every run's thresholds.
const DefaultErrorBudget = "1%"

// ErrorBudgetNone, as a budget, adds no error-rate rule: errors are then
// judged only by the thresholds given.
const ErrorBudgetNone = "none"

// ErrorBudgetRule is the threshold expression an error budget adds
// ("" for [ErrorBudgetNone]); an empty budget is [DefaultErrorBudget].
func ErrorBudgetRule(budget string) string {
	switch budget {
	case ErrorBudgetNone:
		return ""
	case "":
		budget = DefaultErrorBudget
	}
	return "[overall] errors.rate <= " + budget
}

// Policy names every source of a run's rules besides its suite: what a
// user gives (the --threshold, --error-budget, --tier, --tiers and
// --experience flags of bench and sweep). [Policy.Resolve] merges them
// into one [RuleSet].
type Policy struct {
	// Thresholds are extra threshold expressions, overall unless scoped.
	Thresholds []string
	// ErrorBudget is the error budget ("" = DefaultErrorBudget, "none").
	ErrorBudget string
	// Tier names the device tier to judge against ("" = none).
	Tier string
	// TiersFile replaces the shipped tiers ("" = the shipped ones).
	TiersFile string
	// ExperienceFile replaces the shipped experience mapping.
	ExperienceFile string
	// Suite and Categories, when Categories is non-nil, name the suite
	// the run is drawn from: a threshold scoped to a category it does
	// not have is refused (a typo would otherwise fail on no evidence).
	Suite      string
	Categories []string
}

// RuleSet is the one merged set of rules a run is judged by: the run's
// recorded thresholds (its suite's, and Thresholds, which the run keeps
// in config.thresholds), the tier's, and the experience mapping.
type RuleSet struct {
	// Thresholds are the extra expressions, the error budget's last: the
	// run records them as config.thresholds.
	Thresholds []string
	// Tier is the device tier judged against ("" = none), TierRules its
	// thresholds.
	Tier      string
	TierRules []Rule
	// Experience is the experience mapping; ExperienceYAML its text when
	// it is not the shipped one (a run's journal keeps it, so that a
	// rebuilt run is judged the same way).
	Experience     []ExperienceRule
	ExperienceYAML string
}

// Resolve checks and loads everything p names and merges it into one
// rule set. Every error is one of use.
func (p Policy) Resolve() (*RuleSet, error) {
	rs := &RuleSet{Thresholds: slices.Clone(p.Thresholds), Tier: p.Tier, Experience: DefaultExperience()}
	if e := ErrorBudgetRule(p.ErrorBudget); e != "" {
		rs.Thresholds = append(rs.Thresholds, e)
	}
	flagged, err := ParseAll(rs.Thresholds)
	if err != nil {
		return nil, err
	}
	if err := checkCategories(flagged, p.Suite, p.Categories); err != nil {
		return nil, err
	}
	if p.ExperienceFile != "" {
		b, err := os.ReadFile(p.ExperienceFile)
		if err != nil {
			return nil, err
		}
		if rs.Experience, err = ParseExperience(b); err != nil {
			return nil, fmt.Errorf("%s: %w", p.ExperienceFile, err)
		}
		rs.ExperienceYAML = string(b)
	}
	tiers := DefaultTiers()
	if p.TiersFile != "" {
		if tiers, err = LoadTiers(p.TiersFile); err != nil {
			return nil, err
		}
	}
	if p.Tier != "" {
		if rs.TierRules, err = tiers.Rules(p.Tier); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// checkCategories refuses a rule scoped to a category the suite does not
// have; categories nil checks nothing.
func checkCategories(rules []Rule, suite string, categories []string) error {
	if categories == nil {
		return nil
	}
	for _, r := range rules {
		if r.Scope.Kind == measure.KindCategory && !slices.Contains(categories, r.Scope.Category) {
			return fmt.Errorf("--threshold %q: suite %s has no category %q (it has %s)", r.Text(), suite, r.Scope.Category, strings.Join(categories, ", "))
		}
	}
	return nil
}

// Recorded is the rule set a run's journal header keeps: the tier's
// thresholds as written and the experience mapping's text ("" = the
// shipped one). The journal's config keeps the other thresholds.
func Recorded(tier string, tierThresholds []string, experienceYAML string) (*RuleSet, error) {
	rs := &RuleSet{Tier: tier, Experience: DefaultExperience(), ExperienceYAML: experienceYAML}
	var err error
	if rs.TierRules, err = TierRules(tier, tierThresholds); err != nil {
		return nil, fmt.Errorf("tier thresholds: %w", err)
	}
	if experienceYAML != "" {
		if rs.Experience, err = ParseExperience([]byte(experienceYAML)); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// TierTexts returns the tier's thresholds as the journal writes them.
func (rs *RuleSet) TierTexts() []string {
	var out []string
	for _, r := range rs.TierRules {
		out = append(out, r.Text())
	}
	return out
}

// Rules returns every rule rs judges run by, in the order of its
// verdicts: the run's recorded ones ([RecordedRules]: its suite's, then
// config.thresholds), then the tier's. Recorded expressions that do not
// parse are left out and their errors returned.
func (rs *RuleSet) Rules(run *runfile.Run) ([]Rule, error) {
	rec, err := RecordedRules(run)
	return append(rec, rs.TierRules...), err
}

// Apply judges run by rs: its verdicts ([Judge]), its goodput under
// them ([Goodput]) and the experience rows its figures trigger
// ([Experience]). It reads run.Summary, so summarise the run first.
func (rs *RuleSet) Apply(run *runfile.Run) {
	run.Verdicts = Judge(run, rs.TierRules)
	run.Summary.Goodput = Goodput(run, rs.TierRules)
	run.Experience = Experience(run, rs.Experience, rs.Tier)
}

// Describe lists every rule of rs for a run of a suite whose categories
// have the thresholds suite (category name → expressions), each scoped
// as it is judged: the suite's first (by category, in the order given),
// then Thresholds, then the tier's, marked with their source.
func (rs *RuleSet) Describe(categories []string, suite map[string][]string) []string {
	var out []string
	for _, c := range categories {
		for _, t := range suite[c] {
			if strings.HasPrefix(strings.TrimSpace(t), "[") {
				out = append(out, t)
				continue
			}
			out = append(out, "[category:"+c+"] "+t)
		}
	}
	out = append(out, rs.Thresholds...)
	for _, r := range rs.TierRules {
		out = append(out, r.String()+" ("+r.Source+")")
	}
	return out
}
