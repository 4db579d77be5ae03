// Package gate judges a tokenpulse run: it parses thresholds written in a
// small language ("ttft.p95 < 250ms"), checks them against a run file and
// names the requests that broke each one, holds the device tiers
// (flagship, mainstream, entry) as sets of thresholds, and maps metric
// states onto what a person using the product experiences.
//
// Everything here reads a *runfile.Run, so any run can be re-judged later
// with other thresholds or another tier.
//
// Example:
//
//	r, err := gate.Parse("[category:complex] gap.max <= 120ms")
//	if err != nil { ... }
//	tier, _ := gate.DefaultTiers().Rules("mainstream")
//	verdicts := gate.Judge(run, append(tier, r))
//	if !gate.Passed(verdicts) { os.Exit(99) }
//	rows := gate.Experience(run, gate.DefaultExperience(), "mainstream")
//
// The grammar and the metric table are documented on Parse.
//
// Rules, Tiers and ExperienceRules are immutable values once built and are
// safe for concurrent use; Judge and Experience only read the run.
package gate
