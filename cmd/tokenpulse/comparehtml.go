package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/baseline"
	"github.com/tokenpulse/tokenpulse/compare"
	"github.com/tokenpulse/tokenpulse/internal/abtest"
	"github.com/tokenpulse/tokenpulse/report"
)

// compareHTMLFile is the default file of `compare --report html`;
// ABHTMLFile an A/B's page in its directory.
const (
	compareHTMLFile = "comparison.html"
	ABHTMLFile      = "ab.html"
)

// writeComparisonHTML writes rep as a comparison page to path
// (atomically), headed by head ("comparing against base.json").
func writeComparisonHTML(path, head string, rep compare.Report) error {
	page := report.ComparisonPage{
		Title:      "tokenpulse compare: " + head,
		Comparison: baseline.Record(rep, "", "", 0),
	}
	page.Facts = comparisonFacts(rep)
	return writePage(path, page)
}

// comparisonFacts are the two sides of rep, as the page's facts.
func comparisonFacts(rep compare.Report) [][2]string {
	side := func(r compare.Side) string {
		s := fmt.Sprintf("%s, model %s", orDashCmd(r.Target), orDashCmd(r.Model))
		if !r.StartedAt.IsZero() {
			s += ", started " + r.StartedAt.UTC().Format("2006-01-02 15:04:05Z")
		}
		return s
	}
	return [][2]string{{"base", side(rep.Base)}, {"new", side(rep.New)}}
}

// writeABHTML writes the A/B summary sum as a comparison page (B against
// A) to path.
func writeABHTML(path string, sum abtest.Summary) error {
	side := func(s abtest.Side) string {
		out := s.Model
		if s.Quantization != "" {
			out += " (" + s.Quantization + ")"
		}
		if s.SizeBytes > 0 {
			out += fmt.Sprintf(", %.1f MB", float64(s.SizeBytes)/1e6)
		}
		return out + fmt.Sprintf(", %d requests, %d errors", s.Requests, s.Errors)
	}
	facts := [][2]string{{"A (base)", side(sum.A)}, {"B (new)", side(sum.B)}}
	if sum.SizeRatio > 0 {
		facts = append(facts, [2]string{"size B ÷ A", fmt.Sprintf("%.2f", sum.SizeRatio)})
	}
	facts = append(facts, [2]string{"order", sum.Order})
	return writePage(path, report.ComparisonPage{
		Title:      "tokenpulse A/B: " + sum.B.Model + " against " + sum.A.Model,
		Facts:      facts,
		Comparison: baseline.Record(sum.Comparison, "", "A", 0),
	})
}

func writePage(path string, page report.ComparisonPage) error {
	var buf bytes.Buffer
	if err := report.ComparisonHTML(&buf, page); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func orDashCmd(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// isABDir reports whether dir is an A/B's directory (bench --model-b):
// it holds ab.json and no run.json.
func isABDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, abtest.FileName)); err != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, runFileName))
	return err != nil
}

// renderAB prints an A/B directory's summary (as ab.txt has it) and
// writes its page, ab.html, again.
func renderAB(cmd *cobra.Command, dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, abtest.FileName))
	if err != nil {
		return err
	}
	var sum abtest.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, abtest.FileName), err)
	}
	if err := sum.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	path := filepath.Join(dir, ABHTMLFile)
	if err := writeABHTML(path, sum); err != nil {
		return err
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "tokenpulse:", path, "written")
	return nil
}
