package notify

import (
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Timelines returns the token-arrival timelines of the run's offending
// requests (report.Timelines, the same charts as the HTML report's) as SVG
// attachments named like the report's chart files:
// "timeline-7-complex-02.svg".
func Timelines(run *runfile.Run, o report.Options) []Attachment {
	var out []Attachment
	for _, c := range report.Timelines(run, o) {
		out = append(out, Attachment{Name: c.Name + ".svg", ContentType: "image/svg+xml", Data: c.SVG})
	}
	return out
}

// FlameGraphAnchor is the id of the HTML report's flame graph section.
const FlameGraphAnchor = "flame-graph"

// FlameGraph returns the flame graph of the run's CPU profile (read from
// runDir, see report.FlameGraph) as an SVG attachment "flame.svg", and
// nil when the run has none.
func FlameGraph(run *runfile.Run, runDir string) []Attachment {
	fd, ok := report.FlameGraph(run, report.Options{RunDir: runDir})
	if !ok || fd.Chart.SVG == nil {
		return nil
	}
	return []Attachment{{Name: fd.Chart.Name + ".svg", ContentType: "image/svg+xml", Data: fd.Chart.SVG}}
}
