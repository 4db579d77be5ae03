package gate_test

import (
	"fmt"

	"github.com/tokenpulse/tokenpulse/gate"
)

// Merge the thresholds a user gives, the error budget and a device tier
// into the one rule set a run is judged by.
func ExamplePolicy_Resolve() {
	rules, err := gate.Policy{
		Thresholds:  []string{"[category:complex] gap.max <= 120ms"},
		ErrorBudget: "2%",
		Tier:        "mainstream",
		Suite:       "en-assistant",
		Categories:  []string{"short", "long", "complex"},
	}.Resolve()
	if err != nil {
		panic(err)
	}
	for _, t := range rules.Describe(nil, nil) {
		fmt.Println(t)
	}
	_, err = gate.Policy{Thresholds: []string{"[category:compelx] gap.max <= 1s"}, Suite: "en-assistant", Categories: []string{"complex"}}.Resolve()
	fmt.Println(err)
	// Output:
	// [category:complex] gap.max <= 120ms
	// [overall] errors.rate <= 2%
	// [overall] ttft.p95 <= 280ms (tier:mainstream)
	// [overall] gap.p95 <= 95ms (tier:mainstream)
	// --threshold "gap.max <= 1s": suite en-assistant has no category "compelx" (it has complex)
}
