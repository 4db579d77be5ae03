package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/term"

	"github.com/tokenpulse/tokenpulse/internal/server/embedded"
	"github.com/tokenpulse/tokenpulse/report"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// isTerminal reports whether w is a terminal; a variable so that a test
// can stand in for one.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// guideWanted says whether bench teaches after its table: only when a
// person reads stdout at a terminal and did not ask for quiet.
func guideWanted(stdout io.Writer, quiet bool) bool {
	return !quiet && isTerminal(stdout)
}

// writeGuide is what a first run teaches below the table: the key of its
// terms, a note when the figures are the bundled toy model's, and the
// commands to try next.
func writeGuide(w io.Writer, run *runfile.Run, dir string, formats []string) error {
	if err := report.TextKey(w); err != nil {
		return err
	}
	if run.Target.Model == embedded.BundledName {
		fmt.Fprintf(w, "\nnote: figures of a 260K-parameter toy model; give --model FILE or --url for a real one\n")
	}
	next := [][2]string{{"tokenpulse report " + dir + " --format html -o " + dir, "writes this run's HTML report (charts, timelines) beside it"}}
	if slices.Contains(formats, "html") {
		next[0] = [2]string{"open " + filepath.Join(dir, "report.html"), "the charts and timelines of this run"}
	}
	next = append(next, [2]string{"tokenpulse bench --report html", "a run with its HTML report"},
		[2]string{"tokenpulse bench --url http://HOST:PORT", "your own OpenAI-compatible server"})
	width := 0
	for _, n := range next {
		width = max(width, len(n[0]))
	}
	_, err := fmt.Fprintf(w, "\nnext\n")
	for _, n := range next {
		if _, err = fmt.Fprintf(w, "  %-*s   %s\n", width, n[0], n[1]); err != nil {
			break
		}
	}
	return err
}
