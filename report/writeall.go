package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// File names that WriteAll uses inside its directory.
const (
	HTMLFile        = "report.html"
	TextFile        = "report.txt"
	JUnitFile       = "junit.xml"
	MethodologyFile = "methodology.md"
	ChartsDir       = "charts"
)

// WriteAll writes the reports of r into dir (made if needed): report.html,
// every chart as charts/NAME.svg, junit.xml, methodology.md and
// report.txt, or those that o.Formats selects ("html", "svg", "junit",
// "md", "text"). The run file itself is the caller's to write. Each file is
// written whole to a temporary name and renamed, so a reader never sees
// half a report.
func WriteAll(dir string, r *runfile.Run, o Options) error {
	for _, f := range o.Formats {
		switch f {
		case "html", "svg", "junit", "md", "text":
		default:
			return fmt.Errorf("unknown report format %q (want html, svg, junit, md or text)", f)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report directory: %w", err)
	}
	if o.RunDir == "" {
		o.RunDir = dir
	}
	var errs []error
	write := func(name string, render func(io.Writer) error) {
		var buf bytes.Buffer
		if err := render(&buf); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			return
		}
		if err := writeFile(filepath.Join(dir, name), buf.Bytes()); err != nil {
			errs = append(errs, err)
		}
	}
	if o.wants("html") {
		write(HTMLFile, func(w io.Writer) error { return HTML(w, r, o) })
	}
	if o.wants("svg") {
		if err := os.MkdirAll(filepath.Join(dir, ChartsDir), 0o755); err != nil {
			return fmt.Errorf("charts directory: %w", err)
		}
		for _, c := range Charts(r, o) {
			write(filepath.Join(ChartsDir, c.Name+".svg"), func(w io.Writer) error { _, err := w.Write(c.SVG); return err })
		}
	}
	if o.wants("junit") {
		write(JUnitFile, func(w io.Writer) error { return JUnit(w, r) })
	}
	if o.wants("md") {
		write(MethodologyFile, func(w io.Writer) error { return Methodology(w, r) })
	}
	if o.wants("text") {
		text := o
		text.Color = false
		write(TextFile, func(w io.Writer) error { return Text(w, r, text) })
	}
	return errors.Join(errs...)
}

// writeFile writes b to path through a temporary file in the same
// directory and a rename.
func writeFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".report-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, errors.Join(werr, cerr))
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
