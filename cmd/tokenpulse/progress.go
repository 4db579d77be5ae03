package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/tokenpulse/tokenpulse/bench"
)

// progressLine shows a live progress line on stderr when it is a terminal:
// requests done, errors and the running TTFT p50. Elsewhere it is silent.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	width int
	// lines prints each update as a line, terminal or not, for the host
	// of a run on a device to read (bench --adb; parseProgressLine).
	lines bool
}

func newProgressLine(w io.Writer, quiet bool) *progressLine {
	p := &progressLine{w: w}
	if f, ok := w.(*os.File); ok && !quiet && term.IsTerminal(int(f.Fd())) {
		p.on = true
	}
	return p
}

func (p *progressLine) update(pr bench.Progress) {
	if p.lines {
		p.mu.Lock()
		fmt.Fprintf(p.w, "progress %s %d/%d requests %d errors ttft_p50_ms %.1f\n", pr.Phase, pr.Done, pr.Total, pr.Errors, pr.TTFTP50Ms)
		p.mu.Unlock()
		return
	}
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ttft := "-"
	if pr.TTFTP50Ms > 0 {
		ttft = fmt.Sprintf("%.1f ms", pr.TTFTP50Ms)
	}
	line := fmt.Sprintf("%-8s %d/%d requests  %d errors  TTFT p50 %s", pr.Phase, pr.Done, pr.Total, pr.Errors, ttft)
	pad := ""
	if n := p.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
}

func (p *progressLine) finish() {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.width > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
	}
}
