// Package report renders a tokenpulse run file (runfile.Run) for people and
// for CI: a terminal summary (Text), one self-contained HTML page with SVG
// charts (HTML), JUnit XML with one test case per threshold and scope
// (JUnit), and a Markdown methodology appendix for papers (Methodology).
// WriteAll writes them all, and each chart as its own .svg file, into a
// directory.
//
// Reporters follow vegeta's shape: functions that write a run to an
// io.Writer. They read only the run, so any run.json can be re-rendered
// later, and their output depends only on the run and the options (no
// clock, maps in sorted order), so golden files hold it.
//
//	run, err := runfile.Load("out/run.json")
//	if err != nil { ... }
//	report.Text(os.Stdout, run, report.Options{})
//	err = report.WriteAll("out", run, report.Options{})
//
// The charts are drawn in Go (package report/svg): a TTFT waterfall, the
// gap histogram on a log scale, and for each offending prompt its
// token-arrival timeline as a staircase with the stalls marked in red. The
// HTML page needs no JavaScript and nothing from the network.
//
// The functions are safe for concurrent use as long as the run is not
// changed meanwhile.
package report
