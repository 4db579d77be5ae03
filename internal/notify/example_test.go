package notify_test

import (
	"fmt"

	"github.com/tokenpulse/tokenpulse/internal/notify"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

func ExampleBuild() {
	run := reporttest.StallRun() // a run whose complex-02 prompt stalls for 300 ms
	if !notify.ShouldAlert(run, nil) {
		return
	}
	msg := notify.Build(run, "https://example.com/report.html", nil)
	fmt.Println(msg.Alert.Summary)
	fmt.Println(msg.Alert.Crossed[0].Line())
	fmt.Println(msg.Alert.Offenders[0].Line())
	// Output:
	// tokenpulse: 2 thresholds crossed: stories260K (F32) on bench-01 (Example CPU @ 2.00GHz, 2 cores)
	// gap.max <= 120ms [category:complex]: 299.9 ms, limit 120 ms (complex-02)
	// complex-02 (request req-0007, category complex): 299.9 ms on gap.max <= 120ms
}
