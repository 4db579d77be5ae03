package report

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"

	"github.com/tokenpulse/tokenpulse/report/flame"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// flameWidth is the flame graph's width in pixels, the page's width.
const flameWidth = 960

// flameTop is the number of functions the report lists by self time.
const flameTop = 12

// FlameData is the flame graph of a run's CPU profile, and what the
// report says of it.
type FlameData struct {
	// Chart is the flame graph ("flame"); its SVG is nil when the profile
	// could not be read (Err says why).
	Chart Chart
	// Covers says what the graph holds, for a caption.
	Covers string
	// Path is the profile file's path.
	Path string
	// Top are the functions with the most self time: name, self, self
	// share, total.
	Top [][]string
	// Err says why no graph was drawn ("" when one was).
	Err string
}

// FlameGraph reads the CPU profile the run recorded (r.Profile, in
// o.RunDir) and draws its flame graph: for an embedded run, the samples
// of the server's goroutines only. ok is false when the run recorded no
// profile or o.RunDir is not set.
func FlameGraph(r *runfile.Run, o Options) (fd FlameData, ok bool) {
	if r.Profile == nil || r.Profile.File == "" || o.RunDir == "" {
		return fd, false
	}
	fd.Path = filepath.Join(o.RunDir, r.Profile.File)
	f, err := os.Open(fd.Path)
	if err != nil {
		fd.Err = fmt.Sprintf("the run's CPU profile could not be read: %v", err)
		return fd, true
	}
	defer f.Close()
	p, err := flame.Read(f)
	if err != nil {
		fd.Err = err.Error()
		return fd, true
	}
	var filter flame.Filter
	if k, v, found := strings.Cut(r.Profile.Label, "="); found {
		filter = flame.Filter{Key: k, Value: v}
	}
	g, err := flame.Build(p, filter)
	if err != nil {
		fd.Err = fmt.Sprintf("the run's CPU profile holds no sample of the target (%v): it did too little to be sampled at 100 Hz", err)
		return fd, true
	}
	over := fmt.Sprintf("%.1f s", r.Profile.DurationMS/1000)
	heading := fmt.Sprintf("CPU time of the target: %s sampled over %s", g.Value(g.Root.Total), over)
	if filter.Key != "" {
		heading = fmt.Sprintf("CPU time of the server's goroutines: %s sampled over %s (%.1f%% of the process's)", g.Value(g.Root.Total), over, 100*g.KeptShare())
		fd.Covers = fmt.Sprintf("The embedded server ran in tokenpulse's own process, beside the measuring client; the graph keeps the samples of the server's goroutines (its connections, generation and the engine's workers, labelled %s): %s of CPU, %.1f%% of the %s the process used over the run's %s. The rest, left out, is the measuring client, the Go runtime's background work (the garbage collector) and tokenpulse's own bookkeeping.",
			r.Profile.Label, g.Value(g.Root.Total), 100*g.KeptShare(), g.Value(g.ProfileTotal), over)
	} else {
		fd.Covers = fmt.Sprintf("The target's own process, profiled through its /debug/pprof/profile over the run's %s: %s of CPU, every goroutine of it (its runtime's garbage collector included).", over, g.Value(g.Root.Total))
	}
	fd.Chart = Chart{Name: "flame", Title: "Where the time goes: flame graph of the CPU profile", SVG: g.SVG(flameWidth, heading)}
	for _, fn := range g.Top(flameTop) {
		fd.Top = append(fd.Top, []string{flame.Short(fn.Name), g.Value(fn.Self), fmt.Sprintf("%.1f%%", 100*float64(fn.Self)/float64(g.Root.Total)), g.Value(fn.Total)})
	}
	return fd, true
}

// flameView is the report's section on the profile.
type flameView struct {
	SVG    template.HTML
	Title  string
	Covers string
	Path   string
	Top    [][]string
	Err    string
}

func newFlameView(r *runfile.Run, o Options) *flameView {
	fd, ok := FlameGraph(r, o)
	if !ok {
		return nil
	}
	return &flameView{SVG: template.HTML(fd.Chart.SVG), Title: fd.Chart.Title, Covers: fd.Covers, Path: fd.Path, Top: fd.Top, Err: fd.Err}
}

// profileSection is the methodology's account of the run's CPU profile.
func profileSection(r *runfile.Run) (docSection, bool) {
	p := r.Profile
	if p == nil || p.File == "" {
		return docSection{}, false
	}
	para := fmt.Sprintf("A CPU profile was taken while the requests ran (%.1f s), sampling 100 times a second, and kept as `%s` in the run directory.", p.DurationMS/1000, p.File)
	if p.Source == "remote" {
		para += " It was fetched from the target's /debug/pprof/profile in consecutive windows merged into one: it is the target's whole process; the last window may run past the run's end, which adds no samples while the target is idle."
	} else {
		para += fmt.Sprintf(" The embedded server ran in this process beside the measuring client: its goroutines carried the label `%s`, and the flame graph keeps their samples only. Go's profiler interrupts the process 100 times a second; tokenpulse's own measurement of that cost on its engine (go test ./internal/profiling -bench ProfileOverhead) could not tell it from a noisy machine's spread.", p.Label)
	}
	return docSection{Title: "CPU profile", Paras: []string{para}}, true
}
