package report_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

// The text summary's verdict lines name the offending prompt.
func ExampleText() {
	run := reporttest.StallRun() // normally runfile.Load("out/run.json")
	var buf bytes.Buffer
	if err := report.Text(&buf, run, report.Options{}); err != nil {
		panic(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, "✗ gap.max") {
			fmt.Println(strings.Join(strings.Fields(line), " "))
		}
	}
	// Output:
	// ✗ gap.max <= 120ms category:complex 299.9 ms vs limit 120 ms offenders: complex-02 (req-0007) 299.9 ms
}

// WriteAll writes the HTML page, the charts, JUnit XML, the methodology and
// the text summary into one directory.
func ExampleWriteAll() {
	dir, _ := os.MkdirTemp("", "report")
	defer os.RemoveAll(dir)
	err := report.WriteAll(dir, reporttest.StallRun(), report.Options{Formats: []string{"html", "junit"}})
	fmt.Println(err)
	// Output:
	// <nil>
}
